"""The MQTT bridge's options: the broker's URL, the topics read, the topic template written,
the dead-letter topic, TLS and credentials, read from ``semps serve``'s settings and checked.

Example:
    >>> options = MqttOptions.parse(
    ...     "mqtts://ada:s3cret@broker.example:8883", topics=("sensors/+/reading=text/turtle",)
    ... )
    >>> (options.host, options.port, options.tls, options.username, options.password)
    ('broker.example', 8883, True, 'ada', 's3cret')
    >>> options.topics
    (TopicRule(filter='sensors/+/reading', media_type='text/turtle'),)
    >>> options.notify_topic("sub-7", "ada")
    'semps/sub-7'
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from semps.errors import SettingsError
from semps.settings import Settings

__all__ = ["EVENT_IDS", "MqttOptions", "TopicRule", "topic_matches"]

#: How an MQTT message's event id is made: ``generated`` (the broker's own, new each time),
#: ``digest`` (from the topic and the payload, so a redelivered message keeps its id).
EVENT_IDS = ("generated", "digest")
_MEDIA_TYPES = (
    "application/rdf+xml",
    "text/turtle",
    "application/n-triples",
    "text/plain",
    "application/ld+json",
    "application/json",
)
_FIELDS = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class TopicRule:
    """A topic filter read (``+`` and ``#`` wildcards) and the media type of its messages
    (``None``: the message's MQTT 5 content type, else RDF/XML)."""

    filter: str
    media_type: str | None = None

    def __post_init__(self) -> None:
        _check_filter(self.filter)
        if self.media_type is not None and self.media_type not in _MEDIA_TYPES:
            msg = (
                f"topic {self.filter!r}: unknown media type {self.media_type!r} "
                f"(one of {', '.join(_MEDIA_TYPES)})"
            )
            raise SettingsError(msg)

    @classmethod
    def parse(cls, text: str) -> TopicRule:
        """``filter`` or ``filter=media/type``."""
        name, _, media = text.strip().partition("=")
        return cls(name.strip(), media.strip() or None)


def _check_filter(text: str) -> None:
    levels = text.split("/")
    bad = (
        not text
        or len(text.encode()) > 65535
        or "\0" in text
        or any(("+" in lv and lv != "+") or ("#" in lv and lv != "#") for lv in levels)
        or "#" in levels[:-1]
    )
    if bad:
        msg = f"not an MQTT topic filter: {text!r}"
        raise SettingsError(msg)


def topic_matches(pattern: str, topic: str) -> bool:
    """Whether ``topic`` matches the filter ``pattern`` (MQTT's ``+`` and ``#``).

    Example:
        >>> topic_matches("a/+/c", "a/b/c"), topic_matches("a/#", "a"), topic_matches("a/+", "b/c")
        (True, True, False)
    """
    want, got = pattern.split("/"), topic.split("/")
    for i, level in enumerate(want):
        if level == "#":
            return True
        if i >= len(got) or (level != "+" and level != got[i]):
            return False
    return len(want) == len(got)


#: The defaults of ``semps serve``'s settings, by name: the options a caller leaves out are
#: the service's.
_SERVED: dict[str, Any] = {f.name: f.default for f in fields(Settings)}


@dataclass(frozen=True, slots=True)
class MqttOptions:
    """Where and how the bridge connects, what it reads and where it writes.

    Attributes:
        host / port / tls: the MQTT broker (``mqtt://`` port 1883, ``mqtts://`` 8883).
        username / password: credentials (from the URL or their own settings).
        topics: the filters whose messages become events, each with its media type.
        topic_template: where each subscription's notifications go (``{subscription}`` and
            ``{owner}`` are replaced).
        dead_letter_topic: where unreadable messages go, with the reason.
        client_id: the bridge's client id prefix (``-in`` and ``-out`` are appended); a
            stable id keeps the inbound session across restarts.
        event_id: ``generated`` or ``digest`` (:data:`EVENT_IDS`).
        session_expiry: seconds the MQTT broker keeps the inbound session while semps is
            away (MQTT 5).
        ca_file / cert_file / key_file: TLS trust and client certificate.
        max_message: the largest message read (bytes); larger ones are dead-lettered.
        window: notifications in flight (published, not yet acknowledged) at most.
    """

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    topics: tuple[TopicRule, ...] = ()
    topic_template: str = _SERVED["mqtt_topic_template"]
    dead_letter_topic: str = _SERVED["mqtt_dead_letter_topic"]
    client_id: str = _SERVED["mqtt_client_id"]
    event_id: str = _SERVED["mqtt_event_id"]
    session_expiry: int = int(_SERVED["mqtt_session_expiry"])
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    max_message: int = 1024 * 1024
    window: int = 1000

    def __post_init__(self) -> None:
        unknown = {name for name in _FIELDS.findall(self.topic_template)}
        unknown -= {"subscription", "owner"}
        if unknown or "+" in self.topic_template or "#" in self.topic_template:
            msg = (
                f"mqtt_topic_template {self.topic_template!r}: only {{subscription}} and "
                "{owner} may be replaced, and a topic has no wildcards"
            )
            raise SettingsError(msg)
        if self.event_id not in EVENT_IDS:
            msg = f"mqtt_event_id must be one of {', '.join(EVENT_IDS)}, not {self.event_id!r}"
            raise SettingsError(msg)
        if (self.cert_file is None) != (self.key_file is None):
            msg = "mqtt_cert_file and mqtt_key_file go together"
            raise SettingsError(msg)

    @classmethod
    def parse(cls, url: str, **options: object) -> MqttOptions:
        """Options from a broker URL (``mqtt://[user[:password]@]host[:port]`` or
        ``mqtts://...``) and the other settings (``topics`` as ``filter[=media/type]``).

        Raises:
            SettingsError: a malformed URL or setting.
        """
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            msg = f"not an MQTT URL: {url!r} ({exc})"
            raise SettingsError(msg) from exc
        if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
            msg = f"not an MQTT URL: {url!r} (mqtt://host:port or mqtts://host:port)"
            raise SettingsError(msg)
        tls = parts.scheme == "mqtts"
        topics = tuple(TopicRule.parse(str(t)) for t in options.pop("topics", ()) or ())  # type: ignore[attr-defined]
        base = cls(
            parts.hostname,
            port or (8883 if tls else 1883),
            tls,
            unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None,
            topics,
        )
        given = {k: v for k, v in options.items() if v is not None}
        return replace(base, **given)  # type: ignore[arg-type]

    def notify_topic(self, subscription: str, owner: str | None) -> str:
        """The topic of ``subscription``'s notifications."""
        return self.topic_template.replace("{subscription}", subscription).replace(
            "{owner}", owner or "-"
        )

    def media_type(self, topic: str, content_type: str | None) -> str:
        """The media type of a message on ``topic``: its rule's, else the message's content
        type, else RDF/XML."""
        for rule in self.topics:
            if rule.media_type is not None and topic_matches(rule.filter, topic):
                return rule.media_type
        return content_type or "application/rdf+xml"

    def event_id_of(self, topic: str, payload: bytes) -> str | None:
        """The event id of a message (``None``: the broker makes one)."""
        if self.event_id == "generated":
            return None
        digest = hashlib.sha256(topic.encode() + b"\0" + payload).hexdigest()[:32]
        return f"mqtt-{digest}"
