"""The Solid Notifications Protocol (:mod:`semps.api.solid`): ``GET /.well-known/solid``
(the description resource), ``POST /solid/subscription/WebSocketChannel2023`` (the
subscription service: a subscriber's token, a ``topic`` that is one of its subscriptions)
and ``WS /solid/channel/{channel}`` (the channel's ``receiveFrom``: Activity Streams 2.0
notifications of the topic's notifications, from where the channel was established or from
its ``state``).

The socket counts against the subscription owner's ``--max-streams``; it ends (close 1000)
at ``endAt``, waits for ``startAt``, sends at most one notification every ``rate``, and
closes with 4404 once the subscription is deleted or a token of its owner no longer
exists (the channel is a capability, not a session).
"""

import asyncio
import json
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

from semps.api import solid
from semps.api.context import Context
from semps.api.errors import error_parts, responses
from semps.api.multiplex import Changed, Multiplexer, MuxStream, Reply
from semps.api.streams import close_reason
from semps.broker.at_rest import SecretBox
from semps.broker.tokens import Principal
from semps.errors import HostileInputError, SempsError, TooManyRequests

__all__ = ["solid_router"]

_JSONLD = "application/ld+json"
_MAX_REQUEST = 64 * 1024


def _base(request: Request | WebSocket) -> str:
    url = request.base_url
    scheme = {"ws": "http", "wss": "https"}.get(url.scheme, url.scheme)
    return f"{scheme}://{url.netloc}"


def solid_router(ctx: Context, mux: Multiplexer) -> APIRouter:
    """The description resource, the subscription service and the channels."""
    router = APIRouter(tags=["solid"])
    key = SecretBox.from_dir(ctx.broker.data_dir).derive("solid channels")
    broker = ctx.broker
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806

    @router.get("/.well-known/solid")
    def storage_description(request: Request) -> JSONResponse:
        """The description resource: the subscription service and its features."""
        return JSONResponse(solid.description(_base(request)), media_type=_JSONLD)

    @router.post("/solid/gateway", responses=responses(400, 401, 403, 413))
    async def gateway(request: Request, who: Subscriber) -> JSONResponse:
        """Inrupt's notification gateway: where to ask for a WebSocket channel."""
        body = await request.body()
        if len(body) > _MAX_REQUEST:
            msg = f"a gateway request is at most {_MAX_REQUEST} bytes"
            raise HostileInputError(msg)
        return JSONResponse(solid.gateway(_base(request), body))

    @router.post(
        f"/solid/subscription/{solid.CHANNEL_TYPE}",
        responses=responses(400, 401, 403, 404, 413, 415),
    )
    async def subscribe(request: Request, who: Subscriber) -> JSONResponse:
        """Establish a WebSocketChannel2023 channel on one of the caller's subscriptions."""
        body = await request.body()
        if len(body) > _MAX_REQUEST:
            msg = f"a subscription request is at most {_MAX_REQUEST} bytes"
            raise HostileInputError(msg)
        base = _base(request)
        wanted = solid.parse_request(body, base)
        broker.visible(wanted.topic, who)  # NotFound for another's or a missing one
        after = wanted.state
        if after is None:  # from now: after the topic's last notification
            after = broker.store.activity([wanted.topic])[wanted.topic].notified
        channel = solid.Channel(
            who.subject, wanted.topic, after, wanted.start_at, wanted.end_at, wanted.rate
        )
        document = channel.document(base, channel.seal(key))
        return JSONResponse(document, media_type=_JSONLD)

    @router.websocket("/solid/channel/{sealed}")
    async def channel(ws: WebSocket, sealed: str) -> None:
        await ws.accept(subprotocol=_subprotocol(ws))  # first, so the client sees the codes
        try:
            opened = solid.Channel.open(sealed, key)
        except (HostileInputError, ValueError, TypeError):
            await ws.close(code=4404, reason="not a channel this service opened")
            return
        await _Channel(ws, ctx, mux, opened, _base(ws)).run()

    return router


def _subprotocol(ws: WebSocket) -> str | None:
    offered = ws.scope.get("subprotocols") or []
    wanted = solid.NOTIFY + solid.CHANNEL_TYPE
    return wanted if wanted in offered else None


class _Channel:
    def __init__(
        self, ws: WebSocket, ctx: Context, mux: Multiplexer, channel: solid.Channel, base: str
    ) -> None:
        self.ws, self.ctx, self.mux, self.channel, self.base = ws, ctx, mux, channel, base

    def _exists(self, sub: str) -> bool:
        try:
            return self.ctx.broker.store.subscription(sub).owner == self.channel.subject
        except SempsError:
            return False

    async def run(self) -> None:
        channel, ws = self.channel, self.ws
        now = time.time()
        if channel.end_at is not None and channel.end_at <= now:
            await ws.close(code=1000, reason="the channel ended (endAt)")
            return
        if not self._exists(channel.subscription):
            await ws.close(code=4404, reason=f"no subscription {channel.subscription!r}")
            return
        if channel.start_at is not None and channel.start_at > now:
            await asyncio.sleep(channel.start_at - now)
        try:
            lease = self.ctx.streams.lease(channel.subject)
        except TooManyRequests as exc:
            await ws.close(code=4429, reason=close_reason(exc))
            return
        stream = self.mux.open(
            channel.subject,
            {channel.subscription: channel.after},
            roster=None,
            exists=self._exists,
            check=lambda: None,
            lease=lease,
        )
        try:
            await asyncio.wait_for(self._send(stream), self._left())
        except TimeoutError:
            await ws.close(code=1000, reason="the channel ended (endAt)")
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            stream.close()

    def _left(self) -> float | None:
        end = self.channel.end_at
        return None if end is None else max(0.0, end - time.time())

    async def _send(self, stream: MuxStream) -> None:
        sent_at = 0.0
        async for item in stream.items(30.0):
            if isinstance(item, SempsError):
                code = {404: 4404}.get(error_parts(item)[0], 4400)
                await self.ws.close(code=code, reason=close_reason(item))
                return
            if isinstance(item, Changed):
                await self.ws.close(code=4404, reason="the subscription was deleted")
                return
            if isinstance(item, Reply) or not item:
                continue
            for _, _, text in item:
                wait = sent_at + self.channel.rate - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.ws.send_text(solid.notification(self.base, json.loads(text)))
                sent_at = time.monotonic()
            self.ctx.broker.metrics.notifications_out += len(item)
