"""The MQTT bridge (``semps serve --mqtt URL``): messages on the configured topics become
events, and every subscription's notifications are published to its topic.

**In.** The inbound connection keeps a persistent session (clean start off, the session
kept ``session_expiry`` seconds; a stable client id), subscribes to the topic filters with
QoS 1 and acknowledges a message (PUBACK) only once its event is committed: the message goes
through the same durable pipeline as ``POST /events`` (batches of what is waiting, one
commit), so a crash of semps before the commit leaves it with the MQTT broker, which sends it
again. A message that cannot be read (over ``max_message`` bytes, not an RDF or JSON event
of its media type, refused by a limit) goes to the dead-letter topic as JSON
``{"topic", "error", "detail", "payload"}`` (the payload as text, cut at 64 KiB), is counted
in ``/metrics`` (``semps_mqtt_dead_lettered_total``) and acknowledged; the next message is
read as usual. Messages become events, and notify, in the order they came (MQTT's ordered
topics, MQTT 3.1.1 section 4.6): their batches commit in turn, whatever else the pipeline
commits out of order. The media type is the topic rule's, else the message's MQTT 5 content type,
else RDF/XML; the event id is the broker's own, or (``mqtt_event_id = "digest"``) one made
from the topic and the payload, so a redelivered message keeps its id.

**Out.** :class:`~semps.bridges.mqtt_out.MqttPublisher`: QoS 1, at least once, resumed from
the notification log by the durable cursor that only PUBACKs advance.

Both run on the bridge's own thread and event loop, never on the HTTP server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections import deque
from pathlib import Path

from semps.bridges.mqtt_link import InLink, LinkFactory, Message
from semps.bridges.mqtt_options import MqttOptions
from semps.bridges.mqtt_out import CursorFile, MqttPublisher
from semps.broker.broker import Broker
from semps.errors import WIRE, DocumentTooLarge

__all__ = ["BATCH", "CURSOR_FILE", "IN_FLIGHT", "MqttBridge"]

log = logging.getLogger("semps.mqtt")

#: Messages published to the pipeline at once.
BATCH = 256
#: Batches in the pipeline at once (their PUBACKs go in order).
IN_FLIGHT = 4
#: The outbound durable cursor's file in the data directory.
CURSOR_FILE = "mqtt.sqlite3"
_SHOWN = 64 * 1024


def _code(exc: BaseException) -> str:
    for cls, _, code in WIRE:
        if isinstance(exc, cls):
            return code
    return "bad_event"


class MqttBridge:
    """The bridge between one broker and one MQTT broker; :meth:`start`, then :meth:`close`.

    Args:
        broker: the semps broker (its pipeline, store and channels).
        options: the MQTT side.
        links: makes the MQTT connections (default: paho-mqtt).
    """

    def __init__(
        self, broker: Broker, options: MqttOptions, links: LinkFactory | None = None
    ) -> None:
        self.broker, self.options = broker, options
        self.links = links or LinkFactory(options)
        self.cursors = CursorFile(Path(broker.data_dir) / CURSOR_FILE)
        self.publisher = MqttPublisher(
            options,
            broker.store,
            self.cursors,
            lambda: [(s.id, s.owner) for s in broker.subscriptions()],
            self.links,
            broker.metrics,
        )
        self._queue: deque[Message] = deque()
        self._arrived = asyncio.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="semps-mqtt", daemon=True)
        self._inbound: InLink | None = None
        self._stopping = False

    def start(self) -> None:
        """Connect (in the background: an unreachable MQTT broker is retried) and start."""
        self.broker.channels.append(self.publisher)
        self._thread.start()

    def close(self) -> None:
        """Stop reading, then stop publishing (what was not acknowledged is published after
        a restart); the durable cursor is written."""
        self._stopping = True
        if self._inbound is not None:
            self._inbound.close()
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._stop)
        self._thread.join(timeout=10)
        with contextlib.suppress(ValueError):
            self.broker.channels.remove(self.publisher)
        self.cursors.close()

    def _stop(self) -> None:
        self.publisher.stop()
        self._arrived.set()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()

        def received(message: Message) -> None:  # paho's thread
            self._queue.append(message)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._arrived.set)

        self._inbound = self.links.inbound(received) if self.options.topics else None
        publishing = asyncio.create_task(self.publisher.run())
        slots = asyncio.Semaphore(IN_FLIGHT)
        ahead: asyncio.Task[None] | None = None
        try:
            while not self._stopping:
                await self._arrived.wait()
                self._arrived.clear()
                while self._queue and not self._stopping:
                    await slots.acquire()
                    batch = [self._queue.popleft() for _ in range(min(BATCH, len(self._queue)))]
                    ahead = asyncio.create_task(self._read(batch, ahead, slots))
        finally:
            if ahead is not None:
                await ahead
            self.publisher.stop()
            await publishing

    async def _read(
        self, batch: list[Message], ahead: asyncio.Task[None] | None, slot: asyncio.Semaphore
    ) -> None:
        """Publish a batch of messages as events, dead-letter the unreadable, then
        (once the batch ``ahead`` is done) acknowledge each in the order received."""
        try:
            await self._publish(batch, ahead)
        finally:
            slot.release()

    async def _publish(self, batch: list[Message], ahead: asyncio.Task[None] | None) -> None:
        documents: list[tuple[str, bytes]] = []
        ids: list[str | None] = []
        placed: list[int] = []
        refused: dict[int, BaseException] = {}
        for i, message in enumerate(batch):
            if len(message.payload) > self.options.max_message:
                msg = f"a message of {len(message.payload)} bytes, over {self.options.max_message}"
                refused[i] = DocumentTooLarge(msg)
                continue
            media = self.options.media_type(message.topic, message.content_type)
            documents.append((media, message.payload))
            ids.append(self.options.event_id_of(message.topic, message.payload))
            placed.append(i)
        try:
            outcomes = await self.broker.publish_many(documents, ids=ids, in_order=True)
        except Exception as exc:  # the pipeline is closing: leave them unacknowledged
            log.warning("MQTT messages not published (%s); the MQTT broker keeps them", exc)
            return
        for i, outcome in zip(placed, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                refused[i] = outcome
        self.broker.metrics.mqtt_messages_in += len(batch)
        self.broker.metrics.mqtt_redelivered += sum(m.dup for m in batch)
        if ahead is not None:
            await ahead  # PUBACKs in the order the messages came (MQTT 3.1.1 4.6)
        inbound = self._inbound
        if inbound is None:
            return
        for i, message in enumerate(batch):
            if i in refused:
                self._dead_letter(inbound, message, refused[i])
            inbound.ack(message)

    def _dead_letter(self, inbound: InLink, message: Message, error: BaseException) -> None:
        self.broker.metrics.mqtt_dead_lettered += 1
        body = {
            "topic": message.topic,
            "error": _code(error),
            "detail": str(error)[:2000],
            "payload": message.payload[:_SHOWN].decode("utf-8", "replace"),
        }
        log.warning("MQTT message on %s dead-lettered: %s", message.topic, body["detail"])
        inbound.client.publish(self.options.dead_letter_topic, json.dumps(body).encode(), qos=1)
