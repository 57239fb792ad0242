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

from semps.errors import (
    HostileInputError,
    SempsError,
    UnprocessableRequest,
    UnsupportedMediaType,
)

__all__ = [
    "CHANNEL_TYPE",
    "CHANNEL_TYPES",
    "CONTEXT",
    "CONTEXTS",
    "STREAMING",
    "WEBHOOK",
    "FEATURES",
    "QUERY",
    "Channel",
    "SubscriptionRequest",
    "description",
    "description_turtle",
    "gateway",
    "notification",
    "parse_duration",
    "parse_request",
    "service",
    "storage_link",
]

CONTEXT = "https://www.w3.org/ns/solid/notification/v1"
#: The JSON-LD contexts (and ``profile`` values) a subscription request may name: the
#: protocol's, and :data:`CONTEXT` (its earlier drafts' and Inrupt's, which semps answers in).
CONTEXTS = ("https://www.w3.org/ns/solid/notifications-context/v1", CONTEXT)
AS_CONTEXT = "https://www.w3.org/ns/activitystreams"
NOTIFY = "http://www.w3.org/ns/solid/notifications#"
SOLID_TERMS = "http://www.w3.org/ns/solid/terms#"
#: The request's field whose SPARQL text makes a new subscription, the channel's topic.
QUERY = "semps:query"
CHANNEL_TYPE = "WebSocketChannel2023"
WEBHOOK = "WebhookChannel2023"
STREAMING = "StreamingHTTPChannel2023"
#: The channel types served, each at ``/solid/subscription/{type}``.
CHANNEL_TYPES = (CHANNEL_TYPE, WEBHOOK, STREAMING)
FEATURES = ("accept", "endAt", "rate", "startAt", "state")
_MEDIA = "application/ld+json"
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.I)
_MAX_RATE = 86400.0


def parse_duration(text: str) -> float:
    """Seconds of an ``xsd:dayTimeDuration`` (``PT10S``, ``P1DT2H``)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groups()) or text.strip().upper().endswith("T"):
        msg = f"'rate' must be an xsd:duration such as PT10S, not {text!r}"
        raise UnprocessableRequest(msg)
    days, hours, minutes, seconds = (float(g or 0) for g in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60 + seconds


def _instant(name: str, value: object) -> float:
    if not isinstance(value, str):
        msg = f"{name!r} must be an xsd:dateTime string"
        raise UnprocessableRequest(msg)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        msg = f"{name!r} must be an xsd:dateTime such as 2026-01-01T00:00:00Z, not {value!r}"
        raise UnprocessableRequest(msg) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class SubscriptionRequest:
    """A checked subscription request: the topic (a subscription id), the features, the
    channel type and, for a webhook, where to send the notifications."""

    topic: str
    start_at: float | None = None
    end_at: float | None = None
    rate: float = 0.0
    state: int | None = None
    kind: str = CHANNEL_TYPE
    send_to: str | None = None
    query: str | None = None


def _topic(value: object, base: str) -> str:
    """The subscription id a topic names: ``{base}/subscriptions/{id}`` or the id."""
    if not isinstance(value, str) or not value:
        msg = "'topic' must be the URL of a subscription (.../subscriptions/{id})"
        raise UnprocessableRequest(msg)
    prefix = f"{base}/subscriptions/"
    sub = value[len(prefix) :] if value.startswith(prefix) else value
    if "/" in sub or "://" in sub or not sub:
        msg = f"'topic' {value!r} is not a subscription of this server ({prefix}{{id}})"
        raise UnprocessableRequest(msg)
    return sub


def _send_to(request: dict[str, Any], kind: str) -> str | None:
    """A webhook's ``sendTo``: an http or https URL (the addresses it may reach are the
    webhook policy's, checked by the route)."""
    if kind != WEBHOOK:
        return None
    url = request.get("sendTo")
    if not isinstance(url, str) or not url.lower().startswith(("https://", "http://")):
        msg = f"'sendTo' must be the https (or http) URL where {WEBHOOK} notifications go"
        raise UnprocessableRequest(msg)
    if len(url) > 2048:
        raise UnprocessableRequest("'sendTo' is longer than 2048 characters")
    return url


def _json_ld(content_type: str | None, kind: str) -> bool:
    """Whether a request of ``content_type`` is JSON-LD: ``application/ld+json`` (a
    ``profile``, if given, one of :data:`CONTEXTS` or JSON-LD's own), or plain
    ``application/json``, Inrupt's gateway form, on the WebSocketChannel2023 service only.

    Raises:
        UnsupportedMediaType: another media type or profile.
    """
    media, _, params = (content_type or "").partition(";")
    media = media.strip().lower()
    if media == "application/json" and kind == CHANNEL_TYPE:
        return False
    if media != _MEDIA:
        shown = f"not {media!r:.80}" if media else "and this one has no Content-Type"
        msg = f"a subscription request is {_MEDIA}, {shown}"
        raise UnsupportedMediaType(msg)
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() != "profile":
            continue
        for uri in value.strip().strip('"').split():
            if uri not in CONTEXTS and not uri.startswith("http://www.w3.org/ns/json-ld#"):
                msg = f"the profile {uri!r:.200} is not served (use {CONTEXTS[0]})"
                raise UnsupportedMediaType(msg)
    return True


def _check_context(request: dict[str, Any], json_ld: bool) -> None:
    """A JSON-LD request's ``@context`` names one of :data:`CONTEXTS` (beside them, inline
    contexts and Activity Streams' are understood; any other URL is not).

    Raises:
        UnprocessableRequest: no ``@context``, or one not understood.
    """
    context = request.get("@context")
    if context is None and not json_ld:
        return  # plain JSON (Inrupt's gateway form) has no context to understand
    entries = context if isinstance(context, list) else [context]
    named = [entry for entry in entries if isinstance(entry, str)]
    known = (*CONTEXTS, AS_CONTEXT)
    if (
        not any(entry in CONTEXTS for entry in named)
        or any(entry not in known for entry in named)
        or any(not isinstance(entry, str | dict) for entry in entries)
    ):
        shown = "none" if context is None else repr(context)[:200]
        msg = f"unrecognised JSON-LD context ({shown}): a subscription request's '@context'"
        msg += f" names {CONTEXTS[0]}"
        raise UnprocessableRequest(msg)


def parse_request(
    body: bytes,
    base: str,
    now: float | None = None,
    kind: str = CHANNEL_TYPE,
    content_type: str | None = _MEDIA,
) -> SubscriptionRequest:
    """A subscription request's JSON-LD body of ``content_type``, sent to the subscription
    service of the channel type ``kind``.

    Raises:
        UnsupportedMediaType: not ``application/ld+json`` (see :func:`_json_ld`), or
            ``accept`` asks for something other than JSON-LD.
        UnprocessableRequest: no ``@context``, or one naming none of :data:`CONTEXTS`;
            another channel type, a bad topic, ``sendTo`` or feature; an ``endAt`` already
            past (the protocol's 422: instructions that cannot be processed).
        SempsError: not JSON, or not a JSON object.
    """
    json_ld = _json_ld(content_type, kind)
    try:
        request = json.loads(body)
    except ValueError as exc:
        msg = f"the subscription request is not JSON: {exc}"
        raise SempsError(msg) from exc
    if not isinstance(request, dict):
        raise SempsError("the subscription request must be a JSON object")
    _check_context(request, json_ld)
    asked = request.get("type", kind)  # none: Inrupt's gateway form (see gateway())
    if asked not in (kind, NOTIFY + kind, f"notify:{kind}"):
        msg = f"'type' must be {kind} (the channel type this service offers)"
        raise UnprocessableRequest(msg)
    accept = request.get("accept")
    if accept is not None and accept not in (_MEDIA, "application/json"):
        msg = f"notifications are {_MEDIA}, not {accept!r}"
        raise UnsupportedMediaType(msg)
    now = time.time() if now is None else now
    end_at = _instant("endAt", request["endAt"]) if "endAt" in request else None
    if end_at is not None and end_at <= now:
        raise UnprocessableRequest("'endAt' is already past")
    rate = 0.0
    if "rate" in request:
        if not isinstance(request["rate"], str):
            raise UnprocessableRequest("'rate' must be an xsd:duration string such as PT10S")
        rate = min(parse_duration(request["rate"]), _MAX_RATE)
    state = request.get("state")
    if state is not None and not (isinstance(state, str) and state.isdigit() and len(state) < 19):
        msg = "'state' must be a state this service sent (a notification's 'state')"
        raise UnprocessableRequest(msg)
    query = _query(request)
    return SubscriptionRequest(
        "" if query is not None else _topic(request.get("topic"), base),
        _instant("startAt", request["startAt"]) if "startAt" in request else None,
        end_at,
        rate,
        int(state) if state is not None else None,
        kind,
        _send_to(request, kind),
        query,
    )


def _query(request: dict[str, Any]) -> str | None:
    """``semps:query``: the SPARQL text of a new subscription to be the topic."""
    query = request.get(QUERY)
    if query is None:
        return None
    if "topic" in request:
        msg = f"give 'topic' (a subscription) or {QUERY!r} (a SPARQL text), not both"
        raise UnprocessableRequest(msg)
    if not isinstance(query, str) or not query.strip():
        msg = f"{QUERY!r} must be a SPARQL query's text"
        raise UnprocessableRequest(msg)
    return query


@dataclass(frozen=True, slots=True)
class Channel:
    """An established channel: whose, which subscription, from which seq, its features,
    its type, (a webhook's) ``sendTo`` and the id of the token that established it (the
    channel ends when that token is revoked or expires). Handed out signed (:meth:`seal`):
    the channel's id and ``receiveFrom`` URL carry it; ``nonce`` makes two equal requests
    two channels."""

    subject: str
    subscription: str
    after: int
    start_at: float | None = None
    end_at: float | None = None
    rate: float = 0.0
    kind: str = CHANNEL_TYPE
    send_to: str | None = None
    nonce: str = ""
    token: str = ""

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
        if len(text) > 8192 or not hmac.compare_digest(want, mac.encode()):
            raise HostileInputError("not a channel this service opened")
        fields = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
        return cls(**fields)

    def secret(self, key: bytes, sealed: str) -> str:
        """The key a webhook channel signs its deliveries with (``X-Semps-Signature``)."""
        return hmac.new(key, b"secret " + sealed.encode(), hashlib.sha256).hexdigest()

    def document(self, base: str, sealed: str, secret: str | None = None) -> dict[str, Any]:
        """The channel description answered to the subscription request (a webhook's
        carries ``secret``, the key of its signatures, as ``semps:secret``)."""
        body: dict[str, Any] = {
            "@context": [CONTEXT],
            "id": f"{base}/solid/channel/{sealed}",
            "type": self.kind,
            "topic": f"{base}/subscriptions/{self.subscription}",
        }
        if self.kind == CHANNEL_TYPE:
            ws = "wss" + base[5:] if base.startswith("https") else "ws" + base[4:]
            body["receiveFrom"] = f"{ws}/solid/channel/{sealed}"
            body["endpoint"] = body["receiveFrom"]  # the same, for Inrupt's clients
        elif self.kind == STREAMING:
            body["receiveFrom"] = f"{base}/solid/stream/{sealed}"
        else:
            body["@context"] = [CONTEXT, {"semps": "https://semps.dev/ns#"}]
            body["sendTo"] = self.send_to
            body["sender"] = f"{base}/.well-known/solid#sender"
            if secret is not None:
                body["semps:secret"] = secret
        body["accept"] = _MEDIA
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
    """The description resource (``/.well-known/solid``): a subscription service per
    channel type."""
    return {
        "@context": [CONTEXT],
        "id": f"{base}/.well-known/solid",
        "type": "http://www.w3.org/ns/pim/space#Storage",
        "notificationGateway": f"{base}/solid/gateway",
        "subscription": [service(base, kind) for kind in CHANNEL_TYPES],
    }


def description_turtle(base: str) -> str:
    """The description resource in Turtle (for clients that ask for ``text/turtle``, as
    Inrupt's discovery of the ``notificationGateway`` does): the same statements."""
    lines = [
        f"<{base}/.well-known/solid> a <http://www.w3.org/ns/pim/space#Storage> ;",
        f"    <{SOLID_TERMS}notificationGateway> <{base}/solid/gateway> ;",
        f"    <{NOTIFY}subscription> "
        + ", ".join(f"<{base}/solid/subscription/{kind}>" for kind in CHANNEL_TYPES)
        + " .",
    ]
    features = ", ".join(f"<{NOTIFY}{feature}>" for feature in FEATURES)
    for kind in CHANNEL_TYPES:
        lines.append(
            f"<{base}/solid/subscription/{kind}> <{NOTIFY}channelType> <{NOTIFY}{kind}> ;"
            f" <{NOTIFY}feature> {features} ."
        )
    return "\n".join(lines) + "\n"


def storage_link(base: str) -> str:
    """The ``Link`` header by which a topic (a subscription) names the description
    resource, as the protocol's discovery asks."""
    return f'<{base}/.well-known/solid>; rel="{SOLID_TERMS}storageDescription"'


def service(base: str, kind: str) -> dict[str, Any]:
    """The subscription service of the channel type ``kind``."""
    return {
        "id": f"{base}/solid/subscription/{kind}",
        "channelType": kind,
        "feature": list(FEATURES),
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
