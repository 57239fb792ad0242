"""SEPA's SPARQL 1.1 Subscribe protocol over WebSocket: ``WS /sepa/subscribe``.

A client sends ``{"subscribe": {"sparql", "alias", "authorization"}}`` and
``{"unsubscribe": {"spuid", "authorization"}}`` (:mod:`semps.api.sepa`). Each subscribe
registers a semps subscription (kind ``semantic``, owned by the token's subscriber; its id
is the SPUID) and is answered with the notification of sequence 0; each of its semps
notifications then goes out as a SEPA notification whose ``addedResults`` are its solutions
(SPARQL 1.1 JSON results), ``sequence`` its seq. As in SEPA, subscriptions live with the
socket: unsubscribe, or the socket closing, deletes them.

The token: the request's ``authorization`` member (``Bearer T``), else the last one given
on the socket, else the connection's ``Authorization`` header or ``?token=``; every
request of one socket must be the same subscriber's. The socket counts once against
``--max-streams`` (from its first subscribe) and carries at most
``--max-stream-subscriptions``; the message size and rate limits are those of
``WS /notifications/ws`` (close 1009, 4429). An error is answered in SEPA's shape
(``{"error", "status_code", "error_description", "alias"}``) and the socket goes on.

The first notification carries the query's current answers over the knowledge graph's
closure (:func:`~semps.graph.query.answer`, bounded by ``max_query_rows`` and
``graph_timeout``, one of the subscriber's ``max_queries_in_flight``), computed on a
snapshot of the graph at the version the subscription is registered at (in the graph's
turn): a change committed before is in the answers, one after is notified. A
knowledge-graph change's notification carries the rows it removed as ``removedResults``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from semps.api import sepa
from semps.api.context import Context
from semps.api.errors import error_parts
from semps.api.multiplex import Changed, Multiplexer, MuxStream, Reply, cancel_all
from semps.api.streams import close_reason
from semps.api.wsmessages import client_messages
from semps.broker.broker import Broker
from semps.broker.tokens import Principal
from semps.errors import NotFound, PermissionDenied, SempsError
from semps.graph.query import Answers, answer
from semps.graph.view import GraphView
from semps.ingest.sparql.parser import parse_query
from semps.matcher.values import Subscription

__all__ = ["sepa_router"]

_CLOSE_CODES = {401: 4401, 403: 4403, 404: 4404, 422: 4422, 429: 4429}


def sepa_router(ctx: Context, mux: Multiplexer) -> APIRouter:
    """``WS /sepa/subscribe``."""
    router = APIRouter(tags=["sepa"])

    @router.websocket("/sepa/subscribe")
    async def subscribe(ws: WebSocket, token: str = "") -> None:
        header = ws.headers.get("authorization") or (f"Bearer {token}" if token else None)
        await ws.accept()
        await _Session(ws, ctx, mux, header).run()

    return router


async def _registered(
    broker: Broker, work: Awaitable[tuple[Subscription, Answers]]
) -> tuple[Subscription, Answers]:
    """Await a registration; when the socket goes away meanwhile, the subscription it
    makes (it runs to the end) is deleted."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:

        def drop(done: asyncio.Future[tuple[Subscription, Answers]]) -> None:
            if not done.cancelled() and done.exception() is None:
                sub_id = done.result()[0].id
                asyncio.ensure_future(run_in_threadpool(_forget, broker, sub_id))

        task.add_done_callback(drop)
        raise


def _forget(broker: Broker, sub_id: str) -> None:
    with contextlib.suppress(NotFound):
        broker.unsubscribe(sub_id)


class _Session:
    """One socket: a reader applying requests, a sender passing notifications on."""

    def __init__(self, ws: WebSocket, ctx: Context, mux: Multiplexer, header: str | None) -> None:
        self.ws, self.ctx, self.mux, self.header = ws, ctx, mux, header
        self.who: Principal | None = None
        self.authorization = header
        self.stream: MuxStream | None = None
        self.opened = asyncio.Event()
        self.lock = asyncio.Lock()
        self.aliases: dict[str, str | None] = {}
        self.variables: dict[str, tuple[str, ...]] = {}

    async def run(self) -> None:
        reader = asyncio.create_task(self._read())
        sender = asyncio.create_task(self._send())
        try:
            await asyncio.wait({reader, sender}, return_when="FIRST_COMPLETED")
            await cancel_all(reader, sender)
        finally:
            if self.stream is not None:
                self.stream.close()
            for spuid in list(self.aliases):  # subscriptions live with the socket
                await self._drop(spuid)

    async def _say(self, text: str) -> None:
        async with self.lock:
            await self.ws.send_text(text)

    # -- requests ----------------------------------------------------------------------------

    async def _read(self) -> None:
        async for data in client_messages(self.ws):
            await self._answer(data)

    async def _answer(self, data: str) -> None:
        alias: str | None = None
        try:
            request = sepa.parse_request(data)
            who = self._principal(request.authorization)
            if isinstance(request, sepa.Subscribe):
                alias = request.alias
                await self._subscribe(who, request)
            else:
                await self._unsubscribe(request.spuid)
        except SempsError as exc:
            status, body, _ = error_parts(exc)
            await self._say(sepa.error(status, str(body["error"]), str(body["detail"]), alias))

    def _principal(self, authorization: str | None) -> Principal:
        given = authorization or self.authorization  # else the socket's, or the last one's
        who = self.ctx.auth.check(given, "subscriber")
        self.authorization = given
        if self.who is not None and who.subject != self.who.subject:
            msg = "every request on one socket must be the same subscriber's"
            raise PermissionDenied(msg)
        self.who = who
        return who

    async def _subscribe(self, who: Principal, request: sepa.Subscribe) -> None:
        stream = self._open(who)
        stream.check_size(len(stream.positions) + 1)
        broker = self.ctx.broker
        broker.limits.check_query_size(request.sparql)
        query = parse_query(request.sparql, limits=broker.limits)

        def current(view: GraphView) -> Answers:
            return answer(view, query, limits=broker.limits)

        def register() -> Subscription:
            # In the graph's turn, at the version the answers are of: a change committed
            # before is in the answers, one after is notified (once).
            return broker.subscribe(request.sparql, kind="semantic", owner=who.subject)

        def undo(sub: Subscription) -> None:
            _forget(broker, sub.id)

        work = broker.graphs.registering(current, register, undo, who=who.subject)
        sub, found = await _registered(broker, work)
        names = query.projected()
        self.aliases[sub.id], self.variables[sub.id] = request.alias, names
        await self._say(sepa.first_notification(sub.id, request.alias, names, found))
        stream.add({sub.id: 0})

    def _open(self, who: Principal) -> MuxStream:
        if self.stream is not None:
            return self.stream
        lease = self.ctx.streams.lease(who.subject)
        auth = self.ctx.auth

        def check() -> SempsError | None:  # the token last used: revoked or expired ends it
            try:
                auth.check(self.authorization, "subscriber")
            except SempsError as exc:
                return exc
            return None

        def exists(sub: str) -> bool:
            return sub in self.aliases

        try:
            self.stream = self.mux.open(
                who.subject, {}, roster=None, exists=exists, check=check, lease=lease
            )
        except BaseException:
            lease.release()
            raise
        self.opened.set()
        return self.stream

    async def _unsubscribe(self, spuid: str) -> None:
        if spuid not in self.aliases:
            msg = f"no subscription {spuid!r} on this socket"
            raise NotFound(msg)
        await self._drop(spuid)
        await self._say(sepa.unsubscribed(spuid))

    async def _drop(self, spuid: str) -> None:
        self.aliases.pop(spuid, None)
        self.variables.pop(spuid, None)
        if self.stream is not None:
            self.stream.remove([spuid])
        try:
            await run_in_threadpool(self.ctx.broker.unsubscribe, spuid)
        except NotFound:
            pass  # deleted meanwhile (DELETE /subscriptions/{id})

    # -- notifications -----------------------------------------------------------------------

    async def _send(self) -> None:
        await self.opened.wait()
        stream = self.stream
        assert stream is not None
        items = stream.items(30.0)
        try:
            async for item in items:
                if isinstance(item, SempsError):
                    code = _CLOSE_CODES.get(error_parts(item)[0], 4400)
                    await self.ws.close(code=code, reason=close_reason(item))
                    return
                if isinstance(item, Reply | Changed) or not item:
                    continue
                await self._notify(item)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            await items.aclose()

    async def _notify(self, page: list[tuple[str, int, str]]) -> None:
        texts = []
        for sub, _, text in page:
            if sub not in self.aliases:
                continue
            note: dict[str, Any] = json.loads(text)
            texts.append(sepa.notification(self.aliases[sub], self.variables[sub], note))
        for text in texts:
            await self._say(text)
        self.ctx.broker.metrics.notifications_out += len(texts)
