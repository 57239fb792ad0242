"""The Solid Notifications Protocol (:mod:`semps.api.solid`): ``GET /.well-known/solid``
(the description resource), ``POST /solid/subscription/{type}`` for ``WebSocketChannel2023``,
``WebhookChannel2023`` and ``StreamingHTTPChannel2023`` (the subscription services: a
subscriber's token, a ``topic`` that is one of its subscriptions), ``WS
/solid/channel/{channel}`` (a WebSocket channel's ``receiveFrom``), ``GET
/solid/stream/{channel}`` (a streaming HTTP channel's, with the same token) and ``DELETE
/solid/channel/{channel}`` (a webhook channel's unsubscribe). Each channel carries Activity
Streams 2.0 notifications of the topic's notifications, from where the channel was
established or from its ``state`` (:mod:`semps.api.solid_channels` runs them).

A channel counts against the subscription owner's ``--max-streams``; it ends at ``endAt``
(WebSocket close 1000, the HTTP response complete, the webhook stopped), waits for
``startAt``, sends at most one notification every ``rate``, and ends once the subscription
is deleted (WebSocket close 4404) or the token that established it is revoked or expires
(WebSocket close 4401), as the other streams do. A streaming HTTP channel also ends when
the token reading it does.
"""

import contextlib
import secrets
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request, Response, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from semps.api import solid
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.multiplex import Multiplexer, MuxStream
from semps.api.solid_channels import (
    WebhookChannels,
    open_stream,
    owned,
    run_until_gone,
    token_check,
)
from semps.api.streams import close_reason
from semps.broker.tokens import Principal
from semps.errors import HostileInputError, NotFound, SempsError, TooManyRequests

__all__ = ["solid_router"]

_JSONLD = "application/ld+json"
_MAX_REQUEST = 64 * 1024
_CLOSE_CODES = {200: 1000, 401: 4401, 403: 4403, 404: 4404, 503: 1012}


def _base(request: Request | WebSocket) -> str:
    url = request.base_url
    scheme = {"ws": "http", "wss": "https"}.get(url.scheme, url.scheme)
    return f"{scheme}://{url.netloc}"


async def _body(request: Request) -> bytes:
    body = await request.body()
    if len(body) > _MAX_REQUEST:
        msg = f"a subscription or gateway request is at most {_MAX_REQUEST} bytes"
        raise HostileInputError(msg)
    return body


def _kind(kind: str) -> str:
    if kind not in solid.CHANNEL_TYPES:
        msg = f"no subscription service for {kind!r} (served: {', '.join(solid.CHANNEL_TYPES)})"
        raise NotFound(msg)
    return kind


def _nonce() -> str:
    return secrets.token_urlsafe(9)


def _open(sealed: str, key: bytes, subject: str) -> solid.Channel:
    """The caller's channel of ``sealed`` (another's, or a made-up one, is not found)."""
    try:
        channel = solid.Channel.open(sealed, key)
    except (HostileInputError, ValueError, TypeError) as exc:
        raise NotFound("not a channel this service opened") from exc
    if channel.subject != subject:
        raise NotFound("not a channel this service opened")
    return channel


async def _topic(
    ctx: Context, wanted: solid.SubscriptionRequest, who: Principal
) -> tuple[str, int]:
    """The channel's topic and the seq it starts after: the named subscription (one of the
    caller's, else NotFound) from now or from ``state``, or a new one made of
    ``semps:query`` (semantic, the caller's) from its start."""
    broker = ctx.broker
    if wanted.query is not None:
        sub = await run_in_threadpool(
            broker.subscribe, wanted.query, kind="semantic", owner=who.subject
        )
        return sub.id, 0
    broker.visible(wanted.topic, who)  # NotFound for another's or a missing one
    if wanted.state is not None:
        return wanted.topic, wanted.state
    return wanted.topic, broker.store.activity([wanted.topic])[wanted.topic].notified


def solid_router(ctx: Context, mux: Multiplexer, hooks: WebhookChannels) -> APIRouter:
    """The description resource, the subscription services and the channels (``hooks``
    runs the webhook channels, and its key seals every channel)."""
    router = APIRouter(tags=["solid"])
    key = hooks.key
    broker = ctx.broker
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806

    @router.get("/.well-known/solid")
    def storage_description(request: Request) -> Response:
        """The description resource: a subscription service per channel type (in Turtle
        when asked for ``text/turtle`` and not JSON-LD)."""
        accept = request.headers.get("accept", "")
        if "text/turtle" in accept and _JSONLD not in accept:
            return Response(solid.description_turtle(_base(request)), media_type="text/turtle")
        return JSONResponse(solid.description(_base(request)), media_type=_JSONLD)

    @router.post("/solid/gateway", responses=responses(400, 401, 403, 413))
    async def gateway(request: Request, who: Subscriber) -> JSONResponse:
        """Inrupt's notification gateway: where to ask for a WebSocket channel."""
        return JSONResponse(solid.gateway(_base(request), await _body(request)))

    @router.options("/solid/subscription/{kind}", include_in_schema=False)
    def service_options(kind: str) -> Response:
        """The methods a subscription service answers (the protocol asks for OPTIONS)."""
        _kind(kind)
        return Response(status_code=204, headers={"Allow": "GET, HEAD, OPTIONS, POST"})

    @router.head("/solid/subscription/{kind}", include_in_schema=False)
    @router.get("/solid/subscription/{kind}", responses=responses(404))
    def service(request: Request, kind: str) -> JSONResponse:
        """A subscription service: its channel type and features."""
        body = {"@context": [solid.CONTEXT], **solid.service(_base(request), _kind(kind))}
        return JSONResponse(body, media_type=_JSONLD)

    @router.post(
        "/solid/subscription/{kind}",
        responses=responses(400, 401, 403, 404, 413, 415, 422, 429),
    )
    async def subscribe(request: Request, who: Subscriber, kind: str) -> JSONResponse:
        """Establish a channel of type ``kind`` on one of the caller's subscriptions (or on
        a new one, made of the request's ``semps:query``)."""
        base = _base(request)
        media = request.headers.get("content-type")
        wanted = solid.parse_request(
            await _body(request), base, kind=_kind(kind), content_type=media
        )
        if wanted.send_to is not None:
            ctx.policy.check_url(wanted.send_to)  # UnsafeCallback (400), as a webhook's
        topic, after = await _topic(ctx, wanted, who)
        channel = solid.Channel(
            who.subject,
            topic,
            after,
            wanted.start_at,
            wanted.end_at,
            wanted.rate,
            wanted.kind,
            wanted.send_to,
            _nonce(),
            who.token,
        )
        sealed = channel.seal(key)
        secret = None
        if channel.kind == solid.WEBHOOK:
            try:
                hooks.start(channel, sealed, base)
            except SempsError:
                if wanted.query is not None:  # nothing half-made: the new topic goes too
                    await run_in_threadpool(broker.unsubscribe, topic)
                raise
            secret = channel.secret(key, sealed)
        return JSONResponse(channel.document(base, sealed, secret), media_type=_JSONLD)

    @router.get("/solid/channel/{sealed}", responses=responses(401, 404))
    async def channel_description(request: Request, who: Subscriber, sealed: str) -> JSONResponse:
        """A channel's description (a webhook channel's while it runs: not found once it
        ended or was deleted)."""
        channel = _open(sealed, key, who.subject)
        if channel.kind == solid.WEBHOOK and not hooks.running(sealed):
            raise NotFound("the webhook channel ended (or was deleted)")
        return JSONResponse(channel.document(_base(request), sealed), media_type=_JSONLD)

    @router.delete("/solid/channel/{sealed}", status_code=204, responses=responses(400, 401, 404))
    async def unsubscribe(who: Subscriber, sealed: str) -> Response:
        """Stop a webhook channel (the spec's unsubscribe)."""
        channel = _open(sealed, key, who.subject)
        if channel.kind != solid.WEBHOOK:
            msg = f"a {channel.kind} channel ends when its client closes the connection"
            raise SempsError(msg)
        hooks.stop(sealed)
        return Response(status_code=204)

    @router.get(
        "/solid/stream/{sealed}",
        responses={200: {"content": {_JSONLD: {}}}, **responses(401, 403, 404, 429)},
    )
    async def stream(
        request: Request,
        who: Subscriber,
        sealed: str,
        authorization: str | None = Header(None, include_in_schema=False),
    ) -> Response:
        """A StreamingHTTPChannel2023 channel: its notifications, one JSON-LD object a
        line, while the channel lasts and the token is good."""
        channel = _open(sealed, key, who.subject)
        if channel.kind != solid.STREAMING:
            raise NotFound(f"not a {solid.STREAMING} channel")

        def check() -> SempsError | None:
            try:
                ctx.auth.check(authorization, "subscriber")
            except SempsError as exc:
                return exc
            return None

        opened = open_stream(ctx, mux, channel, channel.after, check)  # 429: at the cap
        return _ChannelStream(opened, channel, _base(request))

    @router.websocket("/solid/channel/{sealed}")
    async def channel(ws: WebSocket, sealed: str) -> None:
        await ws.accept(subprotocol=_subprotocol(ws))  # first, so the client sees the codes
        try:
            opened = solid.Channel.open(sealed, key)
        except (HostileInputError, ValueError, TypeError):
            opened = None
        if opened is None or opened.kind != solid.CHANNEL_TYPE:
            await ws.close(code=4404, reason="not a channel this service opened")
            return
        await _socket(ws, ctx, mux, opened, _base(ws))

    return router


def _subprotocol(ws: WebSocket) -> str | None:
    offered = ws.scope.get("subprotocols") or []
    wanted = solid.NOTIFY + solid.CHANNEL_TYPE
    return wanted if wanted in offered else None


async def _socket(
    ws: WebSocket, ctx: Context, mux: Multiplexer, channel: solid.Channel, base: str
) -> None:
    """A WebSocket channel: its notifications as text messages, then a close code."""
    if channel.end_at is not None and channel.end_at <= time.time():
        await ws.close(code=1000, reason="the channel ended (endAt)")
        return
    if not owned(ctx, channel.subscription, channel.subject):
        await ws.close(code=4404, reason=f"no subscription {channel.subscription!r}")
        return
    problem = token_check(ctx, channel)()
    if problem is not None:
        await ws.close(code=4401, reason=close_reason(problem))
        return
    try:
        stream = open_stream(ctx, mux, channel, channel.after)
    except TooManyRequests as exc:
        await ws.close(code=4429, reason=close_reason(exc))
        return

    async def send(seq: int, text: str) -> None:
        await ws.send_text(text)

    async def gone() -> None:
        while (await ws.receive())["type"] != "websocket.disconnect":
            pass

    ended = await run_until_gone(stream, channel, base, send, gone())
    if ended.status != 499:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            code = _CLOSE_CODES.get(ended.status, 4400)
            await ws.close(code=code, reason=close_reason(SempsError(ended.reason)))


class _ChannelStream(Response):
    """A streaming HTTP channel's response: one notification a line until the channel
    ends or the client goes (its stream closed, so its slot returned, however it ends)."""

    def __init__(self, stream: MuxStream, channel: solid.Channel, base: str) -> None:
        super().__init__(media_type=_JSONLD, headers={"Cache-Control": "no-store"})
        # no Content-Length (the response's end is the channel's): chunked
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.stream, self.channel, self.base = stream, channel, base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def line(seq: int, text: str) -> None:
            body = text.encode() + b"\n"
            await send({"type": "http.response.body", "body": body, "more_body": True})

        async def gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        try:
            start = {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
            await send(start)
            await run_until_gone(self.stream, self.channel, self.base, line, gone())
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass
        finally:
            self.stream.close()
