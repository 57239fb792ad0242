"""Notifications out to MQTT: each subscription's notifications published with QoS 1 to its
topic (:attr:`~semps.bridges.mqtt_options.MqttOptions.topic_template`), at least once, in
seq order, resumed from the notification log.

:class:`MqttPublisher` is a :class:`~semps.broker.contracts.Channel`: the broker hands it
each committed group of notifications (kept in a bounded
:class:`~semps.broker.multiplex.MultiInbox`; past it, or on a gap, a subscription is read
from the store). Per subscription it keeps two positions: *sent* (published) and *acked*
(the MQTT broker's PUBACK came back). Only a PUBACK advances *acked*, and *acked* is what the
durable cursor (:class:`CursorFile`, ``mqtt.sqlite3`` in the data directory) keeps, written
at most every :data:`FLUSH` seconds and at close. So:

- **The MQTT broker restarts** (or the connection drops): the client is dropped with
  whatever it had in flight, a new one connects, and every subscription goes on from its
  *acked* position, read from the log: what was published but not acknowledged is
  published again (QoS 1's duplicates), nothing acknowledged is.
- **semps restarts**: each subscription goes on from its durable cursor; what was
  acknowledged after the last write of the cursor (at most :data:`FLUSH` seconds' worth
  after a crash, nothing after a clean stop) is published again.

The outbound connection starts with a clean session: its QoS 1 state is the log and the
cursor, not the MQTT broker's memory (the inbound connection is the persistent one).
At most ``window`` notifications are in flight at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from semps.bridges.mqtt_link import Link, LinkFactory
from semps.bridges.mqtt_options import MqttOptions
from semps.broker.contracts import Channel, Note, NotificationLog
from semps.broker.metrics import Metrics
from semps.broker.multiplex import MultiInbox

__all__ = ["FLUSH", "CursorFile", "MqttPublisher"]

log = logging.getLogger("semps.mqtt")

#: Seconds between two writes of the durable cursor (while it moves).
FLUSH = 0.2
#: Store pages read at once when subscriptions are behind.
_PAGE = 200
_PAGE_BYTES = 256 * 1024


class CursorFile:
    """The acknowledged position of each subscription, in its own SQLite file."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS acked (subscription TEXT PRIMARY KEY, seq INTEGER)"
            )

    def load(self) -> dict[str, int]:
        with self._lock:
            return {str(s): int(n) for s, n in self._db.execute("SELECT * FROM acked")}

    def save(self, positions: dict[str, int]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO acked VALUES (?, ?) ON CONFLICT (subscription) "
                "DO UPDATE SET seq = MAX(seq, excluded.seq)",
                positions.items(),
            )
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


class MqttPublisher(Channel):
    """The outbound side (see the module's docstring). Runs on the bridge's event loop;
    :meth:`publish` and :meth:`wake` may be called from any thread.

    Args:
        options: where to publish.
        store: the notification log.
        cursors: the durable cursor.
        roster: every subscription's (id, owner), read when the publisher starts or
            reconnects (each is resumed from its cursor).
        links: makes MQTT connections.
        metrics: counts acknowledged notifications.
    """

    def __init__(
        self,
        options: MqttOptions,
        store: NotificationLog,
        cursors: CursorFile,
        roster: Callable[[], list[tuple[str, str | None]]],
        links: LinkFactory,
        metrics: Metrics,
    ) -> None:
        self.options, self.store, self.cursors = options, store, cursors
        self.roster, self.links, self.metrics = roster, links, metrics
        self.inbox = MultiInbox()
        self.acked: dict[str, int] = cursors.load()
        self.sent: dict[str, int] = dict(self.acked)
        self.owners: dict[str, str | None] = {}
        self._flying: dict[int, tuple[str, int]] = {}  # mid -> (subscription, seq)
        self._waiting: dict[str, deque[int]] = {}  # per subscription, its seqs in flight
        self._done: dict[str, set[int]] = {}  # acknowledged out of order
        self._dirty: dict[str, int] = {}
        self._link: Link | None = None
        self._generation = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = asyncio.Event()
        self._room = asyncio.Event()

    # -- the channel (any thread) ----------------------------------------------------------

    def publish(self, notes: Sequence[Note]) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._take, list(notes))

    def wake(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._stale_all)

    def _take(self, notes: list[Note]) -> None:
        for sub, seq, text in notes:
            self.inbox.put(sub, seq, text)

    def _stale_all(self) -> None:
        self._learn()
        for sub in self.owners:
            self.inbox.poke(sub)

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """Publish until :meth:`stop`; reconnects with a new client whenever the link drops."""
        self._loop = asyncio.get_running_loop()
        self._stale_all()
        flusher = asyncio.create_task(self._flush_every())
        try:
            while not self._stopped.is_set():
                link = self._connect()
                await self._pump(link)
                self._drop(link)
        finally:
            flusher.cancel()
            self._flush()

    def stop(self) -> None:
        """End :meth:`run` (call on the loop)."""
        self._stopped.set()
        self._room.set()
        self.inbox.wake()

    def _connect(self) -> Link:
        self._generation += 1
        generation = self._generation
        loop = self._loop
        assert loop is not None

        def acked(mid: int, failed: str | None) -> None:
            loop.call_soon_threadsafe(self._acked, generation, mid, failed)

        def lost() -> None:
            loop.call_soon_threadsafe(self._wake_all)

        link = self.links.outbound(acked, lost)
        self._link = link
        return link

    def _wake_all(self) -> None:
        self._room.set()
        self.inbox.wake()

    def _drop(self, link: Link) -> None:
        """Forget a dropped link and what it had in flight: each subscription goes back to
        its acknowledged position, and is read from the log."""
        link.close()
        self._flying.clear()
        self._waiting.clear()
        self._done.clear()
        for sub, sent in list(self.sent.items()):
            if sent != self.acked.get(sub, 0):
                self.sent[sub] = self.acked.get(sub, 0)
                self.inbox.poke(sub)

    async def _pump(self, link: Link) -> None:
        """Publish while the link is up."""
        while not self._stopped.is_set():
            if not link.connected():
                if link.gone():
                    return
                await self.inbox.wait(0.2)
                continue
            room = self.options.window - len(self._flying)
            if room <= 0:  # the window is full: wait for acknowledgements
                self._room.clear()
                await _wait(self._room, 1.0)
            elif self.inbox.pending():
                room -= self._send_fresh(link, room)
                if room > 0 and self.inbox.stale:
                    await self._send_stale(link, room)
            else:
                await self.inbox.wait(1.0)

    def _send_fresh(self, link: Link, room: int) -> int:
        """Publish what the inbox holds that follows on (at most ``room``); the rest is
        left to the log."""
        count = 0
        stale = self.inbox.stale
        for sub, seq, text in self.inbox.take():
            last = self.sent.get(sub, 0)
            if seq <= last or sub in stale:
                continue
            if seq != last + 1 or count >= room:
                stale.add(sub)
                continue
            self._send(link, sub, seq, text)
            count += 1
        return count

    async def _send_stale(self, link: Link, room: int) -> None:
        """Read the log of subscriptions that are behind and publish (at most ``room``)."""
        stale = self.inbox.stale
        batch = [(sub, self.sent.get(sub, 0)) for sub in list(stale)[:256]]
        for sub, _ in batch:
            stale.discard(sub)
        pages = await asyncio.to_thread(self._read, batch, room)
        for sub, after in batch:
            page = pages.get(sub)
            if page is None:
                stale.add(sub)
                continue
            if not page or self.sent.get(sub, 0) != after:
                continue
            stale.add(sub)  # read until a page comes back empty
            for seq, text in page:
                self._send(link, sub, seq, text)

    def _read(self, batch: list[tuple[str, int]], room: int) -> dict[str, list[tuple[int, str]]]:
        pages: dict[str, list[tuple[int, str]]] = {}
        held = 0
        for sub, after in batch:
            if room <= 0 or held >= _PAGE_BYTES:
                break
            page = self.store.notification_texts_after(
                sub, after, min(_PAGE, room), _PAGE_BYTES - held
            )
            pages[sub] = page
            room -= len(page)
            held += sum(len(text) for _, text in page)
        return pages

    def _send(self, link: Link, sub: str, seq: int, text: str) -> None:
        if sub not in self.owners:
            self._learn()
        topic = self.options.notify_topic(sub, self.owners.get(sub))
        mid = link.publish(topic, text.encode())
        self.sent[sub] = seq
        self._flying[mid] = (sub, seq)
        self._waiting.setdefault(sub, deque()).append(seq)

    def _learn(self) -> None:
        self.owners = dict(self.roster())

    # -- acknowledgements ------------------------------------------------------------------

    def _acked(self, generation: int, mid: int, failed: str | None) -> None:
        """A PUBACK: the subscription's acknowledged position moves past every seq
        acknowledged in a row."""
        if generation != self._generation:
            return  # a dropped link's: its notifications are being published again
        found = self._flying.pop(mid, None)
        if found is None:
            return
        sub, seq = found
        if failed is not None:
            log.warning("the MQTT broker refused notification %s/%d: %s", sub, seq, failed)
        waiting, done = self._waiting.get(sub), self._done.setdefault(sub, set())
        done.add(seq)
        while waiting and waiting[0] in done:
            top = waiting.popleft()
            done.discard(top)
            self.acked[sub] = top
            self._dirty[sub] = top
            self.metrics.mqtt_notifications_out += 1
        self._room.set()

    async def _flush_every(self) -> None:
        while True:
            await asyncio.sleep(FLUSH)
            if self._dirty:
                dirty, self._dirty = self._dirty, {}
                await asyncio.to_thread(self.cursors.save, dirty)

    def _flush(self) -> None:
        if self._dirty:
            dirty, self._dirty = self._dirty, {}
            self.cursors.save(dirty)

    def state(self) -> dict[str, Any]:
        """In flight and behind, for the log and the tests."""
        return {"in_flight": len(self._flying), "stale": len(self.inbox.stale)}


async def _wait(event: asyncio.Event, timeout: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout)
