"""The asyncio client, :class:`AsyncClient`: :class:`~semps.client.Client`'s calls,
awaited (the same :mod:`~semps.client._calls` build the requests and read the answers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, Literal, TypeVar, Unpack

import httpx

from semps.client import _calls as calls
from semps.client import _models as m
from semps.client._base import (
    BatchOptions,
    ClientBase,
    Cursors,
    MuxOptions,
    SSELink,
    StreamOptions,
    WebSocketLink,
    auth_headers,
)
from semps.client._calls import ReplaceOptions, SubscribeOptions, SubscriptionRef
from semps.client._core import Call, Page, Reply, finish
from semps.client._inputs import QuerySource, RDFSource
from semps.client._ws import RETRIABLE, connect_async, ws_cause, ws_refusal
from semps.errors import ClientError

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient(ClientBase[httpx.AsyncBaseTransport]):
    """An asyncio client of a semps server; the arguments and methods are
    :class:`~semps.client.Client`'s, awaited (and ``async for`` where it iterates).

    Example:
        >>> async def names(url: str, token: str) -> list[str | None]:
        ...     async with AsyncClient(url, token) as client:
        ...         return [s.name async for s in client.subscriptions()]
    """

    _http: httpx.AsyncClient

    def _open(self, **options: Any) -> None:
        self._http = httpx.AsyncClient(**options)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def send(self, call: Call[T]) -> T:
        """Send one call and read its answer."""
        try:
            response = await self._http.request(**self._request(call))
        except httpx.HTTPError as exc:
            raise self._failed(call, exc) from exc
        return finish(call, Reply(response.status_code, response.content, response.headers))

    async def _all(self, page: Callable[[str | None], Call[Page[T]]]) -> AsyncIterator[T]:
        cursors = Cursors()
        while True:
            got = await self.send(page(cursors.cursor))
            for item in got.items:
                yield item
            if not cursors.advance(got):
                return

    # -- subscriptions -----------------------------------------------------------------------

    async def subscribe(
        self, source: QuerySource, **options: Unpack[SubscribeOptions]
    ) -> m.Subscription:
        """Register a subscription (:meth:`Client.subscribe`)."""
        return await self.send(calls.subscribe(source, **options))

    async def subscribe_many(
        self, sources: Iterable[calls.BatchSource], **options: Unpack[BatchOptions]
    ) -> list[m.BatchSubscription]:
        """Register many subscriptions in bulk (:meth:`Client.subscribe_many`)."""
        batches = self._batch_calls(sources, options)
        return [outcome for call in batches for outcome in await self.send(call)]

    def subscriptions(self, *, page_size: int | None = None) -> AsyncIterator[m.Subscription]:
        """The caller's subscriptions, following the server's pages."""
        return self._all(lambda cursor: calls.subscriptions(cursor, page_size))

    async def subscription(self, ref: SubscriptionRef) -> m.Subscription:
        """One subscription, with its ``status`` and ``reason``."""
        return await self.send(calls.get(ref))

    async def replace(
        self, ref: SubscriptionRef, source: QuerySource, **options: Unpack[ReplaceOptions]
    ) -> m.Subscription:
        """Replace a subscription's text atomically."""
        return await self.send(calls.subscribe(source, sub=calls.sub_id(ref), **options))

    async def delete(self, ref: SubscriptionRef) -> None:
        """Delete a subscription."""
        await self.send(calls.delete(ref))

    async def suspend(self, ref: SubscriptionRef, reason: str | None = None) -> m.Subscription:
        """Take a subscription out of matching until an admin resumes it (admin), through
        the API's suspend route or, on servers without one, the web console's."""
        try:
            return await self.send(calls.suspend(ref, reason))
        except ClientError as exc:
            if exc.status not in (404, 405):
                raise
        await self.send(calls.console_suspend(ref, reason))
        return await self.subscription(ref)

    async def resume(self, ref: SubscriptionRef) -> m.Subscription:
        """Put a suspended subscription back into matching (admin)."""
        return await self.send(calls.resume(ref))

    # -- events ------------------------------------------------------------------------------

    async def publish(
        self, source: RDFSource, media_type: str | None = None, *, retain: bool = False
    ) -> m.Published:
        """Publish one event (:meth:`Client.publish`)."""
        return await self.send(calls.publish(source, media_type, retain=retain))

    async def publish_batch(
        self, sources: Iterable[RDFSource | tuple[RDFSource, str]]
    ) -> list[m.BatchItem]:
        """Publish many events in one request (:meth:`Client.publish_batch`)."""
        return await self.send(calls.publish_batch(sources))

    # -- notifications -----------------------------------------------------------------------

    def notifications(
        self, ref: SubscriptionRef, **options: Unpack[StreamOptions]
    ) -> AsyncIterator[m.Notification]:
        """A subscription's notifications after ``after``, resumed across disconnects
        (:meth:`Client.notifications`)."""
        return self._follow(self._notification_link(ref, options))

    def stream(
        self, subscriptions: Iterable[SubscriptionRef] | None = None, **options: Unpack[MuxOptions]
    ) -> AsyncIterator[m.Notification]:
        """The notifications of many subscriptions over one stream (:meth:`Client.stream`)."""
        return self._follow(self._mux_link(subscriptions, options))

    def _follow(self, link: SSELink | WebSocketLink) -> AsyncIterator[m.Notification]:
        if isinstance(link, WebSocketLink):
            return self._websocket(link)
        return self._sse(link)

    async def _sse(self, link: SSELink) -> AsyncIterator[m.Notification]:
        path, pos = link.path, link.pos
        while True:
            cause: BaseException | str
            try:
                async with self._http.stream(
                    "GET", path, params=link.params, headers=link.headers()
                ) as response:
                    if response.status_code >= 400:
                        content = await response.aread()
                        cause = self._sse_refused(path, response.status_code, content)
                    else:
                        reader = link.reader()
                        async for line in response.aiter_lines():
                            note = reader.feed(line)
                            if note is not None:
                                yield note
                        if link.once:
                            return
                        cause = "the server ended the stream"
            except httpx.TransportError as exc:
                cause = exc
            await asyncio.sleep(pos.failed(self.retry, self.url + path, cause))

    async def _websocket(self, link: WebSocketLink) -> AsyncIterator[m.Notification]:
        pos = link.pos
        while True:
            cause: BaseException | str
            try:
                async with connect_async(
                    link.address(), auth_headers(self.token), self._timeout
                ) as ws:
                    pos.connected()
                    async for message in ws:
                        text = message if isinstance(message, str) else message.decode()
                        note = link.accept(text)
                        if note is not None:
                            yield note
                cause = "the server closed the WebSocket"
            except RETRIABLE as exc:
                refused = ws_refusal(exc)
                if refused is not None:
                    for sub in link.subs:
                        await self.subscription(sub)  # raises NotFound, ... as the server does
                    raise self._ws_refused(refused) from exc
                cause = ws_cause(exc)
            await asyncio.sleep(pos.failed(self.retry, link.url, cause))

    # -- ontology ----------------------------------------------------------------------------

    async def ontology(self, syntax: Literal["rdfxml", "turtle"] = "rdfxml") -> str:
        """The ontology as RDF/XML or Turtle."""
        return await self.send(calls.get_ontology(syntax))

    async def replace_ontology(self, source: RDFSource, media_type: str | None = None) -> int:
        """Replace the ontology (admin); returns the new version."""
        return await self.send(calls.load_ontology(source, replace=True, media_type=media_type))

    async def merge_ontology(self, source: RDFSource, media_type: str | None = None) -> int:
        """Add a document's axioms to the ontology (admin); returns the new version."""
        return await self.send(calls.load_ontology(source, replace=False, media_type=media_type))

    async def add_axiom(self, kind: str, subject: str, obj: str) -> int:
        """Add an axiom (:meth:`Client.add_axiom`); returns the new version."""
        return await self.send(calls.add_axiom(kind, subject, obj))

    async def remove_axiom(self, kind: str, subject: str, obj: str) -> int:
        """Remove an axiom; returns the new version."""
        return await self.send(calls.remove_axiom(kind, subject, obj))

    # -- knowledge graph ---------------------------------------------------------------------

    async def load_graph(
        self, source: RDFSource, media_type: str | None = None, *, replace: bool = False
    ) -> m.GraphEdit:
        """Add (or ``replace`` with) a document's triples (:meth:`Client.load_graph`)."""
        return await self.send(calls.load_graph(source, replace=replace, media_type=media_type))

    async def update_graph(self, update: str) -> m.GraphEdit:
        """Run a SPARQL 1.1 Update on the knowledge graph (:meth:`Client.update_graph`)."""
        return await self.send(calls.update_graph(update))

    async def export_graph(self, media_type: str = "text/turtle", *, closure: bool = False) -> str:
        """The knowledge graph as a document (:meth:`Client.export_graph`)."""
        return await self.send(calls.get_graph(media_type, closure=closure))

    async def clear_graph(self) -> m.GraphEdit:
        """Remove every triple of the knowledge graph."""
        return await self.send(calls.clear_graph())

    async def graph_info(self) -> m.GraphInfo:
        """The knowledge graph's version and sizes."""
        return await self.send(calls.graph_info())

    # -- administration ----------------------------------------------------------------------

    def tokens(self) -> AsyncIterator[m.Token]:
        """Every token (admin), never their secrets."""
        return self._all(lambda cursor: calls.tokens(cursor))

    async def create_token(
        self, role: str, expires_in: int | str | None = None, subject: str | None = None
    ) -> m.NewToken:
        """A new token for ``role`` (admin): ``expires_in`` seconds or ``"30d"``, ``"12h"``
        (never by default); ``subject`` owns its subscriptions (default: a new name)."""
        return await self.send(calls.create_token(role, expires_in, subject))

    async def revoke_token(self, token: m.Token | m.NewToken | str) -> None:
        """Revoke a token (admin)."""
        await self.send(calls.revoke_token(token))

    def dead_letters(self) -> AsyncIterator[m.DeadLetter]:
        """Webhook notifications whose delivery gave up (admin)."""
        return self._all(lambda cursor: calls.dead_letters(cursor))

    async def replay(self, letter: m.DeadLetter | int) -> str | None:
        """Deliver a dead letter again; ``None`` when delivered, else the error."""
        return await self.send(calls.replay(letter))

    async def health(self) -> dict[str, Any]:
        """``/health`` (needs no token)."""
        return await self.send(calls.health())

    async def metrics(self, token: str | None = None) -> str:
        """``/metrics`` as Prometheus text; ``token``: a metrics-only token instead of the
        client's."""
        return await self.send(calls.metrics(token))
