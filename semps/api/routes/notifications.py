"""The multiplexed notification streams: ``GET /notifications`` (SSE) and
``WS /notifications/ws``, each carrying many subscriptions' notifications and counting once
against ``--max-streams`` (the stream itself is :mod:`semps.api.multiplex`).

SSE: each notification is an event ``notification`` whose data is its JSON (it names its
``subscription`` and its ``id``, the seq); the last event of a page carries ``id:`` the
stream's cursor (at least every :data:`~semps.api.multiplex.CURSOR_EVERY` seconds while
busy, at once when caught up), which ``Last-Event-ID`` or ``?cursor=`` resumes from. A
change of the set is an event ``subscriptions`` (``{"added": [...]}`` or ``{"removed": [...],
"error", "detail"}``); a revoked or expired token ends the stream with an event ``end``.

WebSocket: JSON messages. The server sends ``{"type": "notification", "notification": {...}}``,
``{"type": "cursor", "cursor": C}`` (as SSE's ids), ``{"type": "subscribed"|"unsubscribed",
"subscriptions": [...]}`` and ``{"type": "error", "error", "detail"}``; the client may send
``{"type": "subscribe", "subscriptions": [...], "cursor": C}`` and ``{"type": "unsubscribe",
"subscriptions": [...]}`` (an optional ``"id"`` is echoed in the answer). A message over
:data:`MAX_MESSAGE` bytes closes the socket with 1009, more than :data:`MAX_RATE` messages a
second with 4429; a malformed one is answered with an error and the stream goes on.
"""

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from semps.api.context import Context
from semps.api.errors import error_body, error_parts, stream_responses
from semps.api.multiplex import Changed, Multiplexer, MuxStream, Reply, cancel_all
from semps.api.positions import decode_positions
from semps.api.streams import KEEPALIVE, close_reason
from semps.api.wsmessages import MAX_MESSAGE, MAX_RATE, client_messages
from semps.broker.tokens import Principal
from semps.errors import SempsError, TooManyRequests

__all__ = ["MAX_MESSAGE", "MAX_RATE", "notifications_router"]

_MAX_LISTED = 10_000
_CLOSE_CODES = {401: 4401, 403: 4403, 404: 4404, 422: 4422, 429: 4429}


class _StreamResponse(StreamingResponse):
    """An SSE response that closes its stream (and so returns its slot) however it ends."""

    def __init__(self, content: AsyncGenerator[bytes, None], stream: MuxStream) -> None:
        super().__init__(content, media_type="text/event-stream")
        self.stream, self._content = stream, content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._content.aclose()
            self.stream.close()


def _listed(value: str | None) -> list[str] | None:
    """``?subscriptions=a,b`` as ids (``None``: the parameter is absent, meaning all)."""
    if value is None:
        return None
    subs = [part.strip() for part in value.split(",") if part.strip()]
    if len(subs) > _MAX_LISTED:
        msg = f"?subscriptions= names {len(subs)} subscriptions, more than {_MAX_LISTED}"
        raise SempsError(msg)
    return list(dict.fromkeys(subs))


class _Opener:
    """Opens multiplexed streams for the routes: the set, the positions and the checks."""

    def __init__(self, ctx: Context, mux: Multiplexer) -> None:
        self.ctx, self.mux = ctx, mux

    def visible(self, who: Principal) -> Callable[[str], bool]:
        broker = self.ctx.broker

        def exists(sub: str) -> bool:
            try:
                broker.visible(sub, who)
            except SempsError:
                return False
            return True

        return exists

    def positions(self, who: Principal, cursor: str | None) -> dict[str, int]:
        return decode_positions(cursor, self.mux.key, who.subject) if cursor else {}

    def chosen(self, who: Principal, subs: Iterable[str], cursor: dict[str, int]) -> dict[str, int]:
        """The positions of ``subs``, each visible to ``who`` (else ``NotFound``)."""
        for sub in subs:
            self.ctx.broker.visible(sub, who)
        return {sub: cursor.get(sub, 0) for sub in subs}

    def open(
        self, who: Principal, header: str | None, listed: list[str] | None, cursor: str | None
    ) -> MuxStream:
        """A stream for ``who`` (its slot leased last, so a refusal holds none)."""
        broker, auth = self.ctx.broker, self.ctx.auth
        positions = self.positions(who, cursor)
        roster = None
        if listed is None:
            subject = who.subject

            def roster() -> list[str]:
                return [sub.id for sub in broker.subscriptions(subject)]
        else:
            positions = self.chosen(who, listed, positions)

        def check() -> SempsError | None:
            try:
                auth.check(header, "subscriber")
            except SempsError as exc:
                return exc
            return None

        lease = self.ctx.streams.lease(who.subject)
        try:
            return self.mux.open(
                who.subject,
                positions,
                roster=roster,
                exists=self.visible(who),
                check=check,
                lease=lease,
            )
        except BaseException:
            lease.release()
            raise


def notifications_router(ctx: Context, mux: Multiplexer) -> APIRouter:
    """``GET /notifications`` and ``WS /notifications/ws``."""
    router = APIRouter(tags=["notifications"])
    opener = _Opener(ctx, mux)
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806

    @router.get(
        "/notifications",
        response_class=StreamingResponse,
        responses=stream_responses(400, 401, 403, 404, 422, 429),
    )
    async def notifications(
        who: Subscriber,
        authorization: str | None = Header(None, include_in_schema=False),
        last_event_id: str | None = Header(None),
        subscriptions: str | None = Query(
            None, description="the subscriptions to carry, comma-separated (default: all yours)"
        ),
        cursor: str | None = Query(None, description="resume from this cursor (an event id)"),
    ) -> StreamingResponse:
        """The notifications of many subscriptions as one Server-Sent Events stream, each
        from its position in the cursor (``Last-Event-ID`` or ``?cursor=``)."""
        stream = opener.open(who, authorization, _listed(subscriptions), last_event_id or cursor)
        return _StreamResponse(_sse(stream, ctx), stream)

    @router.websocket("/notifications/ws")
    async def websocket(
        ws: WebSocket, subscriptions: str | None = None, cursor: str = "", token: str = ""
    ) -> None:
        header = ws.headers.get("authorization") or (f"Bearer {token}" if token else None)
        try:
            who = ctx.auth.check(header, "subscriber")
        except SempsError as exc:
            await ws.close(code=4403, reason=close_reason(exc))
            return
        await ws.accept()  # accepted first, so the client sees the close codes below
        try:
            stream = opener.open(who, header, _listed(subscriptions), cursor or None)
        except SempsError as exc:
            code = 4429 if isinstance(exc, TooManyRequests) else _code(exc)
            await ws.close(code=code, reason=close_reason(exc))
            return
        await _WebSocketSession(ws, stream, opener, who, ctx).run()

    return router


def _code(exc: SempsError) -> int:
    return _CLOSE_CODES.get(error_parts(exc)[0], 4400)


def _frame(text: str, event_id: str | None = None) -> str:
    if "\n" in text or "\r" in text:
        data = "".join(f"data: {line}\n" for line in text.splitlines())
    else:
        data = f"data: {text}\n"
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: notification\n{data}\n"


def _changed(change: Changed) -> dict[str, Any]:
    if change.added:
        return {"added": list(change.added)}
    body: dict[str, Any] = {"removed": list(change.removed)}
    if change.reason is not None:
        body.update({"error": "not_found", "detail": str(change.reason)})
    return body


async def _sse(stream: MuxStream, ctx: Context) -> AsyncGenerator[bytes, None]:
    async for item in stream.items(KEEPALIVE):
        if isinstance(item, SempsError):  # the last event: why the stream ends
            yield f"event: end\ndata: {json.dumps(error_body(item))}\n\n".encode()
            return
        if isinstance(item, Reply):
            continue  # (no client messages on SSE)
        if isinstance(item, Changed):
            yield f"event: subscriptions\ndata: {json.dumps(_changed(item))}\n\n".encode()
        elif not item:
            yield b": keep-alive\n\n"
        else:
            frames = [_frame(text) for _, _, text in item[:-1]]
            due = stream.cursor_due(time.monotonic())
            frames.append(_frame(item[-1][2], stream.cursor() if due else None))
            yield "".join(frames).encode()
            ctx.broker.metrics.notifications_out += len(item)


class _WebSocketSession:
    """One multiplexed WebSocket: a reader task applying the client's messages, and the
    stream's items sent as messages, one sender."""

    def __init__(
        self, ws: WebSocket, stream: MuxStream, opener: _Opener, who: Principal, ctx: Context
    ) -> None:
        self.ws, self.stream, self.opener, self.who, self.ctx = ws, stream, opener, who, ctx

    async def run(self) -> None:
        try:
            reader = asyncio.create_task(self._read())
            sender = asyncio.create_task(self._send())
            await asyncio.wait({reader, sender}, return_when="FIRST_COMPLETED")
            await cancel_all(reader, sender)
        finally:
            self.stream.close()

    async def _send(self) -> None:
        items = self.stream.items(30.0)
        ws = self.ws
        try:
            async for item in items:
                if isinstance(item, Reply):
                    await ws.send_text(json.dumps(item.body))
                elif isinstance(item, SempsError):
                    code = _CLOSE_CODES.get(error_parts(item)[0], 4400)
                    await ws.close(code=code, reason=close_reason(item))
                    return
                elif isinstance(item, Changed):
                    kind = "subscribed" if item.added else "unsubscribed"
                    await ws.send_text(json.dumps({"type": kind, **_subs(item)}))
                elif item:
                    for _, _, text in item:
                        await ws.send_text('{"type":"notification","notification":' + text + "}")
                    self.ctx.broker.metrics.notifications_out += len(item)
                    if self.stream.cursor_due(time.monotonic()):
                        await ws.send_text(json.dumps({"type": "cursor", "cursor": self._cursor()}))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            await items.aclose()

    def _cursor(self) -> str:
        return self.stream.cursor()

    async def _read(self) -> None:
        async for data in client_messages(self.ws):
            self.stream.reply(self._answer(data))

    def _answer(self, data: str) -> dict[str, Any]:
        """The answer to one client message (an error answer for a bad one)."""
        request: Any = None
        reply: dict[str, Any]
        try:
            request = json.loads(data)
            if not isinstance(request, dict):
                raise SempsError("a message must be a JSON object")
            kind, subs = request.get("type"), request.get("subscriptions")
            if kind not in ("subscribe", "unsubscribe"):
                raise SempsError(f"unknown message type {kind!r} (subscribe or unsubscribe)")
            if not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
                raise SempsError("'subscriptions' must be a list of subscription ids")
            if kind == "unsubscribe":
                reply = {"type": "unsubscribed", "subscriptions": list(self.stream.remove(subs))}
            else:
                reply = {"type": "subscribed", "subscriptions": list(self._subscribe(request))}
        except ValueError as exc:
            reply = {"type": "error", "error": "bad_request", "detail": f"not JSON: {exc}"}
        except SempsError as exc:
            reply = {"type": "error", **error_body(exc)}
        if isinstance(request, dict) and isinstance(request.get("id"), str | int):
            reply["id"] = request["id"]
        return reply

    def _subscribe(self, request: dict[str, Any]) -> tuple[str, ...]:
        subs = list(dict.fromkeys(request["subscriptions"]))
        cursor = request.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise SempsError("'cursor' must be a string")
        positions = self.opener.positions(self.who, cursor)
        return self.stream.add(self.opener.chosen(self.who, subs, positions))


def _subs(change: Changed) -> dict[str, Any]:
    body: dict[str, Any] = {"subscriptions": list(change.added or change.removed)}
    if change.reason is not None:
        body.update({"error": "not_found", "detail": str(change.reason)})
    return body
