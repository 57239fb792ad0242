"""``POST /events`` and ``POST /events/batch`` served as plain ASGI, ahead of the framework.

Publishing is the hot path: at a thousand events a second, FastAPI's per-request machinery
(dependency solving, header models, middleware layers, response models) cost about as much
CPU as reading and matching the event. :class:`PublishFastPath` answers both publishing
requests itself with exactly the routes' contract (bearer check, the batch's media type,
body bounded while it is read, 202 ``{"id", "matched"}`` or ``{"events": [...]}``, errors
in the one JSON error shape) and passes every other request to the application. The routes
stay declared in the application, which documents them in the OpenAPI and serves them when
the fast path is switched off (``create_app(fast_publish=False)``; the tests compare both).
The batch body is read and its outcomes written by the same two functions either way
(:func:`parse_batch`, :func:`batch_results`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from pydantic import ValidationError

from semps.api.auth import bearer_token
from semps.api.errors import error_body
from semps.api.models import BatchIn
from semps.broker.broker import Broker
from semps.errors import DocumentTooLarge, IngestError, SempsError, UnsupportedMediaType

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: An error -> (status, JSON body, extra headers).
ErrorMapper = Callable[[Exception], tuple[int, dict[str, object], dict[str, str]]]


class PublishFastPath:
    """ASGI middleware answering ``POST /events`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, broker: Broker, max_body: int, errors: ErrorMapper):
        self.app = app
        self.broker = broker
        self.max_body = max_body
        self.errors = errors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or scope["method"] != "POST" or path not in _PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        try:
            token = bearer_token(_text(headers.get(b"authorization")))
            client = scope.get("client")
            self.broker.authorize(token, "publisher", client=client[0] if client else None)
            content_type = _text(headers.get(b"content-type"))
            if path == "/events/batch":
                check_batch_media_type(content_type)
            body = await self._body(headers.get(b"content-length"), receive)
            if body is None:  # the client went away: nobody to answer, nothing published
                return
            if path == "/events/batch":
                outcomes = await self.broker.publish_many(parse_batch(body))
                answer: dict[str, object] = {"events": batch_results(outcomes)}
            else:
                event_id, matched = await self.broker.publish(
                    body, content_type or "application/rdf+xml"
                )
                answer = {"id": event_id, "matched": matched}
        except Exception as exc:  # ours: its status; anything else: the one 500 shape
            status, doc, extra = self.errors(exc)
            await _respond(send, status, doc, extra)
            return
        await _respond(send, 202, answer, {})

    async def _body(self, declared: bytes | None, receive: Receive) -> bytes | None:
        try:
            return await read_bounded(_text(declared), _chunks(receive), self.max_body)
        except _Disconnected:
            return None


#: The requests this middleware answers.
_PATHS = ("/events", "/events/batch")
#: The media type of a batch.
JSON = "application/json"


def check_batch_media_type(content_type: str | None) -> None:
    """A batch is JSON (or sent without a media type).

    Raises:
        UnsupportedMediaType: another media type (415).
    """
    found = (content_type or "").split(";", 1)[0].strip().lower()
    if found and found != JSON:
        msg = f"unsupported media type {found!r} here (use {JSON})"
        raise UnsupportedMediaType(msg)


def parse_batch(body: bytes) -> list[tuple[str, bytes]]:
    """A batch's events as (media type, document) pairs.

    Raises:
        IngestError: not ``{"events": [{"media_type": ..., "body": "..."}, ...]}`` (400).
    """
    try:
        batch = BatchIn.model_validate_json(body)
    except ValidationError as exc:
        msg = 'expected JSON {"events": [{"media_type": ..., "body": "..."}, ...]}'
        raise IngestError(msg) from exc
    return [(e.media_type or "application/rdf+xml", e.body.encode()) for e in batch.events]


def batch_results(outcomes: Sequence[tuple[str, int] | BaseException]) -> list[dict[str, object]]:
    """Each event's outcome as the batch answer lists it: ``{"id", "matched"}`` or its
    error's body (fields that are ``None`` left out).

    Raises:
        BaseException: an outcome that is not one of our errors (a 500).
    """
    results: list[dict[str, object]] = []
    for outcome in outcomes:
        if isinstance(outcome, SempsError):
            results.append({k: v for k, v in error_body(outcome).items() if v is not None})
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            results.append({"id": outcome[0], "matched": outcome[1]})
    return results


class _Disconnected(Exception):
    """The client went away before sending the whole body."""


async def _chunks(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def read_bounded(declared: str | None, chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """A request body, refused as soon as it passes ``limit`` bytes (a declared
    Content-Length over the limit before anything is read).

    Raises:
        DocumentTooLarge: the body is larger than ``limit``.
    """
    if declared is not None and declared.isdigit() and int(declared) > limit:
        msg = f"body of {declared} bytes exceeds the limit of {limit} bytes"
        raise DocumentTooLarge(msg)
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            msg = f"body exceeds the limit of {limit} bytes"
            raise DocumentTooLarge(msg)
        parts.append(chunk)
    return b"".join(parts)


def _text(value: bytes | None) -> str | None:
    return value.decode("latin-1") if value is not None else None


async def _respond(send: Send, status: int, doc: dict[str, object], extra: dict[str, str]) -> None:
    body = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.lower().encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
