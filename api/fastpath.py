"""``POST /events`` served as plain ASGI, ahead of the framework.

Publishing is the hot path: at a thousand events a second, FastAPI's per-request machinery
(dependency solving, header models, middleware layers) cost about as much CPU as reading and
matching the event. :class:`PublishFastPath` answers ``POST /events`` itself with exactly the
route's contract (bearer check, body bounded while it is read, 202 ``{"id", "matched"}``,
errors in the one JSON error shape) and passes every other request to the application. The
route stays declared in the application, which documents it in the OpenAPI and serves it
when the fast path is switched off (``create_app(fast_publish=False)``; the tests run both).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from semps.api.auth import bearer_token
from semps.broker.broker import Broker
from semps.errors import DocumentTooLarge, SempsError

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
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/events":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        try:
            self.broker.authorize(bearer_token(_text(headers.get(b"authorization"))), "publisher")
            body = await self._body(headers.get(b"content-length"), receive)
            if body is None:  # the client went away: nobody to answer, nothing published
                return
            media_type = _text(headers.get(b"content-type")) or "application/rdf+xml"
            event_id, matched = await self.broker.publish(body, media_type)
        except SempsError as exc:
            status, doc, extra = self.errors(exc)
            await _respond(send, status, doc, extra)
            return
        await _respond(send, 202, {"id": event_id, "matched": matched}, {})

    async def _body(self, declared: bytes | None, receive: Receive) -> bytes | None:
        try:
            return await read_bounded(_text(declared), _chunks(receive), self.max_body)
        except _Disconnected:
            return None


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
    body = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.lower().encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
