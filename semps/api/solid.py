"""The Solid Notifications Protocol's documents (no I/O; the routes are
:mod:`semps.api.routes.solid`): the description resource, subscription requests read and
checked, the channel (a signed, stateless capability: its ``receiveFrom`` URL), and Activity
Streams 2.0 notifications carrying a semps notification's solutions.

Example:
    >>> parse_duration("PT1M30S"), parse_duration("P1D")
    (90.0, 86400.0)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from semps.errors import HostileInputError, SempsError, UnsupportedMediaType

__all__ = [
    "CHANNEL_TYPE",
    "CONTEXT",
    "FEATURES",
    "Channel",
    "SubscriptionRequest",
    "description",
    "gateway",
    "notification",
    "parse_duration",
    "parse_request",
]

CONTEXT = "https://www.w3.org/ns/solid/notification/v1"
AS_CONTEXT = "https://www.w3.org/ns/activitystreams"
NOTIFY = "http://www.w3.org/ns/solid/notifications#"
CHANNEL_TYPE = "WebSocketChannel2023"
FEATURES = ("accept", "endAt", "rate", "startAt", "state")
_MEDIA = "application/ld+json"
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.I)
_MAX_RATE = 86400.0


def parse_duration(text: str) -> float:
    """Seconds of an ``xsd:dayTimeDuration`` (``PT10S``, ``P1DT2H``)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groups()) or text.strip().upper().endswith("T"):
        msg = f"'rate' must be an xsd:duration such as PT10S, not {text!r}"
        raise SempsError(msg)
    days, hours, minutes, seconds = (float(g or 0) for g in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60 + seconds


def _instant(name: str, value: object) -> float:
    if not isinstance(value, str):
        msg = f"{name!r} must be an xsd:dateTime string"
        raise SempsError(msg)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        msg = f"{name!r} must be an xsd:dateTime such as 2026-01-01T00:00:00Z, not {value!r}"
        raise SempsError(msg) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class SubscriptionRequest:
    """A checked subscription request: the topic (a subscription id) and the features."""

    topic: str
    start_at: float | None = None
    end_at: float | None = None
    rate: float = 0.0
    state: int | None = None


def _topic(value: object, base: str) -> str:
    """The subscription id a topic names: ``{base}/subscriptions/{id}`` or the id."""
    if not isinstance(value, str) or not value:
        msg = "'topic' must be the URL of a subscription (.../subscriptions/{id})"
        raise SempsError(msg)
    prefix = f"{base}/subscriptions/"
    sub = value[len(prefix) :] if value.startswith(prefix) else value
    if "/" in sub or "://" in sub or not sub:
        msg = f"'topic' {value!r} is not a subscription of this server ({prefix}{{id}})"
        raise SempsError(msg)
    return sub


def parse_request(body: bytes, base: str, now: float | None = None) -> SubscriptionRequest:
    """A subscription request's JSON-LD body.

    Raises:
        SempsError: not JSON, another channel type, a bad topic or feature; an ``endAt``
            already past.
        UnsupportedMediaType: ``accept`` asks for something other than JSON-LD.
    """
    try:
        request = json.loads(body)
    except ValueError as exc:
        msg = f"the subscription request is not JSON: {exc}"
        raise SempsError(msg) from exc
    if not isinstance(request, dict):
        raise SempsError("the subscription request must be a JSON object")
    kind = request.get("type", CHANNEL_TYPE)  # none: Inrupt's gateway form (see gateway())
    if kind not in (CHANNEL_TYPE, NOTIFY + CHANNEL_TYPE, f"notify:{CHANNEL_TYPE}"):
        msg = f"'type' must be {CHANNEL_TYPE} (the channel type this service offers)"
        raise SempsError(msg)
    accept = request.get("accept")
    if accept is not None and accept not in (_MEDIA, "application/json"):
        msg = f"notifications are {_MEDIA}, not {accept!r}"
        raise UnsupportedMediaType(msg)
    now = time.time() if now is None else now
    end_at = _instant("endAt", request["endAt"]) if "endAt" in request else None
    if end_at is not None and end_at <= now:
        raise SempsError("'endAt' is already past")
    rate = 0.0
    if "rate" in request:
        if not isinstance(request["rate"], str):
            raise SempsError("'rate' must be an xsd:duration string such as PT10S")
        rate = min(parse_duration(request["rate"]), _MAX_RATE)
    state = request.get("state")
    if state is not None and not (isinstance(state, str) and state.isdigit() and len(state) < 19):
        msg = "'state' must be a state this service sent (a notification's 'state')"
        raise SempsError(msg)
    return SubscriptionRequest(
        _topic(request.get("topic"), base),
        _instant("startAt", request["startAt"]) if "startAt" in request else None,
        end_at,
        rate,
        int(state) if state is not None else None,
    )


@dataclass(frozen=True, slots=True)
class Channel:
    """An established channel: whose, which subscription, from which seq, and its
    features. Handed out signed (:meth:`seal`): the ``receiveFrom`` URL is the capability."""

    subject: str
    subscription: str
    after: int
    start_at: float | None = None
    end_at: float | None = None
    rate: float = 0.0

    def seal(self, key: bytes) -> str:
        data = base64.urlsafe_b64encode(json.dumps(asdict(self)).encode()).rstrip(b"=")
        mac = hmac.new(key, data, hashlib.sha256).digest()[:16]
        return f"{data.decode()}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"

    @classmethod
    def open(cls, text: str, key: bytes) -> Channel:
        """A channel from its sealed text.

        Raises:
            HostileInputError: altered or made up.
        """
        data, _, mac = text.partition(".")
        want = base64.urlsafe_b64encode(
            hmac.new(key, data.encode(), hashlib.sha256).digest()[:16]
        ).rstrip(b"=")
        if len(text) > 4096 or not hmac.compare_digest(want, mac.encode()):
            raise HostileInputError("not a channel this service opened")
        fields = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
        return cls(**fields)

    def document(self, base: str, sealed: str) -> dict[str, Any]:
        """The channel description answered to the subscription request."""
        ws = "wss" + base[5:] if base.startswith("https") else "ws" + base[4:]
        body: dict[str, Any] = {
            "@context": [CONTEXT],
            "id": f"{base}/solid/channel/{sealed}",
            "type": CHANNEL_TYPE,
            "topic": f"{base}/subscriptions/{self.subscription}",
            "receiveFrom": f"{ws}/solid/channel/{sealed}",
            "endpoint": f"{ws}/solid/channel/{sealed}",  # the same, for Inrupt's clients
            "accept": _MEDIA,
        }
        if self.start_at is not None:
            body["startAt"] = _iso(self.start_at)
        if self.end_at is not None:
            body["endAt"] = _iso(self.end_at)
        if self.rate:
            body["rate"] = f"PT{self.rate:g}S"
        return body


def gateway(base: str, body: bytes) -> dict[str, Any]:
    """The answer of Inrupt's notification gateway (the negotiation that
    ``@inrupt/solid-client-notifications`` speaks before a channel): ``{"protocols": ["ws"],
    "features": [...]}`` -> where to ask for the channel.

    Raises:
        SempsError: not that request, or no ``ws`` among the protocols.
    """
    try:
        request = json.loads(body)
    except ValueError as exc:
        msg = f"the gateway request is not JSON: {exc}"
        raise SempsError(msg) from exc
    protocols = request.get("protocols") if isinstance(request, dict) else None
    if not isinstance(protocols, list) or "ws" not in protocols:
        raise SempsError("'protocols' must list 'ws' (the only protocol served)")
    return {
        "endpoint": f"{base}/solid/subscription/{CHANNEL_TYPE}",
        "protocol": "ws",
        "features": list(FEATURES),
    }


def description(base: str) -> dict[str, Any]:
    """The description resource (``/.well-known/solid``): the subscription service."""
    return {
        "@context": [CONTEXT],
        "id": f"{base}/.well-known/solid",
        "type": "http://www.w3.org/ns/pim/space#Storage",
        "notificationGateway": f"{base}/solid/gateway",
        "subscription": [
            {
                "id": f"{base}/solid/subscription/{CHANNEL_TYPE}",
                "channelType": CHANNEL_TYPE,
                "feature": list(FEATURES),
            }
        ],
    }


def notification(base: str, note: Mapping[str, Any], now: float | None = None) -> str:
    """A semps notification as an Activity Streams 2.0 ``Add`` of its solutions to the
    topic; ``state`` is its seq (a channel requested with it resumes after it)."""
    sub, seq = str(note["subscription"]), int(note["id"])
    body = {
        "@context": [AS_CONTEXT, CONTEXT, {"semps": "https://semps.dev/ns#"}],
        "id": f"urn:semps:notification:{sub}:{seq}",
        "type": "Add",
        "object": f"{base}/subscriptions/{sub}",
        "state": str(seq),
        "published": _iso(time.time() if now is None else now),
        "semps:event": note.get("event"),
        "semps:count": note.get("count"),
        "semps:solutions": note.get("solutions", []),
    }
    return json.dumps(body, separators=(",", ":"))
