"""The notification streams of a subscription: Server-Sent Events and WebSocket (the
framing and the per-subscriber cap are in :mod:`semps.api.streams`)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, WebSocket
from fastapi.responses import StreamingResponse

from semps.api.context import Context
from semps.api.errors import stream_responses
from semps.api.streams import Check, close_reason, parse_position
from semps.broker.tokens import Principal
from semps.errors import SempsError, TooManyRequests

__all__ = ["streams_router"]


def streams_router(ctx: Context) -> APIRouter:
    """``GET /subscriptions/{id}/notifications`` (SSE) and ``WS /subscriptions/{id}/ws``."""
    router = APIRouter(tags=["notifications"])
    broker, streams = ctx.broker, ctx.streams
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806

    def still_allowed(header: str | None, sub_id: str) -> Check:
        """The stream's check: its token still valid, its subscription still there."""

        def check() -> SempsError | None:
            try:
                broker.visible(sub_id, ctx.auth.check(header, "subscriber"))
            except SempsError as exc:
                return exc
            return None

        return check

    @router.get(
        "/subscriptions/{sub_id}/notifications",
        response_class=StreamingResponse,
        responses=stream_responses(400, 401, 403, 404, 429),
    )
    async def stream(
        sub_id: str,
        who: Subscriber,
        authorization: str | None = Header(None, include_in_schema=False),
        last_event_id: str | None = Header(None),
        after: str | None = Query(None, description="resume after this id (ASCII digits)"),
        once: bool = Query(False, description="send what is stored, then close"),
    ) -> StreamingResponse:
        """The subscription's notifications as Server-Sent Events, from ``Last-Event-ID``
        (or ``after``) on."""
        broker.visible(sub_id, who)
        start = parse_position(after, "after")
        if last_event_id:
            start = parse_position(last_event_id, "Last-Event-ID")
        lease = streams.lease(who.subject)
        return streams.sse(sub_id, start, once, lease, still_allowed(authorization, sub_id))

    @router.websocket("/subscriptions/{sub_id}/ws")
    async def websocket(ws: WebSocket, sub_id: str, after: str = "", token: str = "") -> None:
        header = ws.headers.get("authorization") or (f"Bearer {token}" if token else None)
        try:
            who = ctx.auth.check(header, "subscriber", client=ws.client.host if ws.client else None)
            broker.visible(sub_id, who)
        except SempsError as exc:
            await ws.close(code=4403, reason=close_reason(exc))
            return
        await ws.accept()  # accepted first, so the client sees the close codes below
        try:
            start = parse_position(after, "after")
            lease = streams.lease(who.subject)
        except SempsError as exc:
            code = 4429 if isinstance(exc, TooManyRequests) else 4400
            await ws.close(code=code, reason=close_reason(exc))
            return
        await streams.websocket(ws, sub_id, start, lease, still_allowed(header, sub_id))

    return router
