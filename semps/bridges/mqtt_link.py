"""MQTT connections through paho-mqtt (MQTT 5): the outbound link the publisher replaces
whenever it drops, and the inbound link with a persistent session and manual
acknowledgements. paho's network thread calls the callbacks; they hand over and return.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from semps.bridges.mqtt_options import MqttOptions

__all__ = ["InLink", "Link", "LinkFactory", "Message"]

log = logging.getLogger("semps.mqtt")


@dataclass(frozen=True, slots=True)
class Message:
    """One message read: its topic, payload, MQTT 5 content type, and how to acknowledge it
    (``mid`` on connection ``generation``); ``dup``: the MQTT broker sent it before (its
    DUP flag: the earlier delivery's acknowledgement did not reach it)."""

    topic: str
    payload: bytes
    content_type: str | None
    mid: int
    generation: int
    dup: bool = False


def _properties(packet: int) -> Properties:
    """An empty set of MQTT 5 properties for ``packet`` (paho's constructor is untyped)."""
    return Properties(packet)  # type: ignore[no-untyped-call]


def _failure(code: ReasonCode | int) -> str | None:
    """A reason code's text if it is a failure (0x80 and above), else ``None``."""
    value = code.value if isinstance(code, ReasonCode) else int(code)
    return str(code) if value >= 0x80 else None


class _Base:
    def __init__(self, options: MqttOptions, client_id: str, *, manual_ack: bool) -> None:
        self.options = options
        self.client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            protocol=paho.MQTTv5,
            manual_ack=manual_ack,
        )
        if options.username is not None:
            self.client.username_pw_set(options.username, options.password)
        if options.tls:
            self.client.tls_set(
                ca_certs=str(options.ca_file) if options.ca_file else None,
                certfile=str(options.cert_file) if options.cert_file else None,
                keyfile=str(options.key_file) if options.key_file else None,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )
        self.client.reconnect_delay_set(1, 5)
        self._up = threading.Event()
        self._gone = threading.Event()

    def start(self, clean_start: bool, properties: Properties) -> None:
        self.client.connect_async(
            self.options.host,
            self.options.port,
            keepalive=30,
            clean_start=clean_start,
            properties=properties,
        )
        self.client.loop_start()

    def connected(self) -> bool:
        return self._up.is_set()

    def gone(self) -> bool:
        """The link was up and dropped."""
        return self._gone.is_set()

    def close(self) -> None:
        # Stop the network thread first: paho's thread clears its own handle when a
        # disconnect ends its loop, racing loop_stop's check-then-join (AttributeError).
        self.client.loop_stop()
        self.client.disconnect()


class Link(_Base):
    """An outbound connection, clean session: ``acked(mid, failure)`` on each PUBACK,
    ``lost()`` when it drops (the publisher then replaces it)."""

    def __init__(
        self,
        options: MqttOptions,
        acked: Callable[[int, str | None], None],
        lost: Callable[[], None],
    ) -> None:
        super().__init__(options, f"{options.client_id}-out", manual_ack=False)
        self.client.max_inflight_messages_set(options.window)
        self.client.max_queued_messages_set(0)
        client = self.client

        def on_connect(c: object, u: object, flags: object, code: ReasonCode, p: object) -> None:
            if _failure(code) is None:
                self._up.set()
            else:
                log.warning("the MQTT broker refused the outbound connection: %s", code)

        def on_disconnect(c: object, u: object, f: object, code: ReasonCode, p: object) -> None:
            if self._up.is_set():
                self._up.clear()
                self._gone.set()
                log.warning("outbound MQTT connection lost: %s", code)
                lost()

        def on_publish(c: object, u: object, mid: int, code: ReasonCode, p: object) -> None:
            acked(mid, _failure(code))

        client.on_connect = on_connect
        client.on_disconnect = on_disconnect
        client.on_publish = on_publish
        self.start(True, _properties(PacketTypes.CONNECT))

    def publish(self, topic: str, payload: bytes) -> int:
        """Publish with QoS 1; the message id its PUBACK will name."""
        props = _properties(PacketTypes.PUBLISH)
        props.ContentType = "application/json"
        return int(self.client.publish(topic, payload, qos=1, properties=props).mid)


class InLink(_Base):
    """The inbound connection: a persistent session (clean start off, the session kept
    ``session_expiry`` seconds), the topic filters subscribed with QoS 1, each message
    handed to ``received`` and acknowledged only by :meth:`ack` (after it is committed)."""

    def __init__(self, options: MqttOptions, received: Callable[[Message], None]) -> None:
        super().__init__(options, f"{options.client_id}-in", manual_ack=True)
        self.generation = 0
        client = self.client

        def on_connect(c: object, u: object, flags: object, code: ReasonCode, p: object) -> None:
            if _failure(code) is not None:
                log.warning("the MQTT broker refused the inbound connection: %s", code)
                return
            self.generation += 1
            self._up.set()
            if options.topics:
                client.subscribe([(r.filter, SubscribeOptions(qos=1)) for r in options.topics])
            log.info("MQTT connected to %s:%d", options.host, options.port)

        def on_disconnect(c: object, u: object, f: object, code: ReasonCode, p: object) -> None:
            self._up.clear()
            log.warning("inbound MQTT connection lost: %s (reconnecting)", code)

        def on_message(c: object, u: object, msg: paho.MQTTMessage) -> None:
            props = getattr(msg, "properties", None)
            content_type = getattr(props, "ContentType", None) if props is not None else None
            try:
                topic = msg.topic
            except UnicodeDecodeError:
                topic = msg._topic.decode("utf-8", "replace")  # a broker must not send one
            message = Message(
                topic, bytes(msg.payload), content_type, msg.mid, self.generation, bool(msg.dup)
            )
            received(message)

        client.on_connect = on_connect
        client.on_disconnect = on_disconnect
        client.on_message = on_message
        props = _properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = options.session_expiry
        props.ReceiveMaximum = min(65535, options.window)
        self.start(False, props)

    def ack(self, message: Message) -> None:
        """Acknowledge a committed message, unless it came on an earlier connection (the
        MQTT broker sends it again on this one)."""
        if message.generation == self.generation and self._up.is_set():
            self.client.ack(message.mid, 1)


class LinkFactory:
    """Makes the bridge's links (tests may pass their own)."""

    def __init__(self, options: MqttOptions) -> None:
        self.options = options

    def outbound(self, acked: Callable[[int, str | None], None], lost: Callable[[], None]) -> Link:
        return Link(self.options, acked, lost)

    def inbound(self, received: Callable[[Message], None]) -> InLink:
        return InLink(self.options, received)
