"""The asyncio client, :class:`AsyncClient`: :class:`~semps.client.Client`'s calls,
awaited (the same :mod:`~semps.client._calls` build the requests and read the answers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx

from semps.client import _calls as calls
from semps.client._calls import SubscriptionRef
from semps.client._core import Call, Page, Reply, finish, refusal
from semps.client._inputs import QuerySource, RDFSource
from semps.client._models import (
    BatchItem,
    DeadLetter,
    NewToken,
    Notification,
    Published,
    Subscription,
    Token,
)
from semps.client._stream import Retry, SSEDecoder, StreamPosition
from semps.client._sync import RETRY_STATUSES, auth_headers, transport_error
from semps.client._ws import RETRIABLE, connect_async, ws_cause, ws_refusal, ws_url
from semps.errors import ClientError

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient:
    """An asyncio client of a semps server; the arguments and methods are
    :class:`~semps.client.Client`'s, awaited (and ``async for`` where it iterates).

    Example:
        >>> async def names(url: str, token: str) -> list[str | None]:
        ...     async with AsyncClient(url, token) as client:
        ...         return [s.name async for s in client.subscriptions()]
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retry: Retry | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url, self.token, self.retry = url.rstrip("/"), token, retry or Retry()
        self._timeout = timeout
        self._http = httpx.AsyncClient(
            base_url=self.url, headers=auth_headers(token), timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def send(self, call: Call[T]) -> T:
        """Send one call and read its answer."""
        try:
            response = await self._http.request(
                call.method,
                call.path,
                params=call.params,
                headers=call.headers,
                content=call.content,
            )
        except httpx.HTTPError as exc:
            raise transport_error(call.method, self.url + call.path, exc) from exc
        return finish(call, Reply(response.status_code, response.content, response.headers))

    async def _all(self, page: Callable[[str | None], Call[Page[T]]]) -> AsyncIterator[T]:
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            got = await self.send(page(cursor))
            for item in got.items:
                yield item
            if got.next is None:
                return
            if got.next in seen:
                msg = f"the server repeated the cursor {got.next!r}"
                raise ClientError(msg)
            seen.add(got.next)
            cursor = got.next

    # -- subscriptions -----------------------------------------------------------------------

    async def subscribe(
        self,
        source: QuerySource,
        *,
        kind: str | None = None,
        name: str | None = None,
        callback: str | None = None,
        media_type: str | None = None,
        options: Mapping[str, str | int] | None = None,
    ) -> Subscription:
        """Register a subscription (:meth:`Client.subscribe`)."""
        return await self.send(
            calls.subscribe(
                source,
                kind=kind,
                name=name,
                callback=callback,
                media_type=media_type,
                options=options,
            )
        )

    def subscriptions(self, *, page_size: int | None = None) -> AsyncIterator[Subscription]:
        """The caller's subscriptions, following the server's pages."""
        return self._all(lambda cursor: calls.subscriptions(cursor, page_size))

    async def subscription(self, ref: SubscriptionRef) -> Subscription:
        """One subscription, with its ``status`` and ``reason``."""
        return await self.send(calls.get(ref))

    async def replace(
        self,
        ref: SubscriptionRef,
        source: QuerySource,
        *,
        kind: str | None = None,
        name: str | None = None,
        media_type: str | None = None,
    ) -> Subscription:
        """Replace a subscription's text atomically."""
        sub = calls.sub_id(ref)
        return await self.send(
            calls.subscribe(source, kind=kind, name=name, media_type=media_type, sub=sub)
        )

    async def delete(self, ref: SubscriptionRef) -> None:
        """Delete a subscription."""
        await self.send(calls.delete(ref))

    async def suspend(self, ref: SubscriptionRef, reason: str | None = None) -> Subscription:
        """Take a subscription out of matching until an admin resumes it (admin), through
        the API's suspend route or, on servers without one, the web console's."""
        try:
            return await self.send(calls.suspend(ref, reason))
        except ClientError as exc:
            if exc.status not in (404, 405):
                raise
        await self.send(calls.console_suspend(ref, reason))
        return await self.subscription(ref)

    async def resume(self, ref: SubscriptionRef) -> Subscription:
        """Put a suspended subscription back into matching (admin)."""
        return await self.send(calls.resume(ref))

    # -- events ------------------------------------------------------------------------------

    async def publish(self, source: RDFSource, media_type: str | None = None) -> Published:
        """Publish one event (:meth:`Client.publish`)."""
        return await self.send(calls.publish(source, media_type))

    async def publish_batch(
        self, sources: Iterable[RDFSource | tuple[RDFSource, str]]
    ) -> list[BatchItem]:
        """Publish many events in one request (:meth:`Client.publish_batch`)."""
        return await self.send(calls.publish_batch(sources))

    # -- notifications -----------------------------------------------------------------------

    def notifications(
        self,
        ref: SubscriptionRef,
        *,
        after: int = 0,
        once: bool = False,
        via: Literal["sse", "websocket"] = "sse",
    ) -> AsyncIterator[Notification]:
        """A subscription's notifications after ``after``, resumed across disconnects
        (:meth:`Client.notifications`)."""
        sub = calls.sub_id(ref)
        if via == "websocket":
            if once:
                msg = "once=True reads what is stored, over SSE only"
                raise ClientError(msg)
            return self._websocket(sub, StreamPosition(after))
        return self._sse(sub, StreamPosition(after), once)

    async def _sse(self, sub: str, pos: StreamPosition, once: bool) -> AsyncIterator[Notification]:
        path = f"/subscriptions/{sub}/notifications"
        params = {"once": "true"} if once else {}
        while True:
            headers = {"Last-Event-ID": str(pos.after)}
            cause: BaseException | str
            try:
                async with self._http.stream(
                    "GET", path, params=params, headers=headers
                ) as response:
                    if response.status_code >= 400:
                        reply = Reply(response.status_code, await response.aread())
                        refused = refusal(Call("GET", path, Reply.text), reply)
                        if response.status_code not in RETRY_STATUSES:
                            raise refused
                        cause = refused
                    else:
                        decoder = SSEDecoder()
                        async for line in response.aiter_lines():
                            pos.alive()
                            event = decoder.feed(line)
                            if event is None or event.event != "notification":
                                continue
                            note = pos.accept(event.data, event.id)
                            if note is not None:
                                yield note
                        if once:
                            return
                        cause = "the server ended the stream"
            except httpx.TransportError as exc:
                cause = exc
            await asyncio.sleep(pos.failed(self.retry, self.url + path, cause))

    async def _websocket(self, sub: str, pos: StreamPosition) -> AsyncIterator[Notification]:
        url = ws_url(self.url, sub)
        while True:
            cause: BaseException | str
            try:
                link = connect_async(
                    f"{url}?after={pos.after}", auth_headers(self.token), self._timeout
                )
                async with link as ws:
                    pos.connected()
                    async for message in ws:
                        text = message if isinstance(message, str) else message.decode()
                        note = pos.accept(text)
                        if note is not None:
                            yield note
                cause = "the server closed the WebSocket"
            except RETRIABLE as exc:
                refused = ws_refusal(exc)
                if refused is not None:
                    await self.subscription(sub)  # the same check over HTTP names the error
                    msg = f"the server refused the WebSocket ({refused})"
                    raise ClientError(msg, status=refused) from exc
                cause = ws_cause(exc)
            await asyncio.sleep(pos.failed(self.retry, url, cause))

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

    # -- administration ----------------------------------------------------------------------

    def tokens(self) -> AsyncIterator[Token]:
        """Every token (admin), never their secrets."""
        return self._all(lambda cursor: calls.tokens(cursor))

    async def create_token(
        self, role: str, expires_in: int | str | None = None, subject: str | None = None
    ) -> NewToken:
        """A new token for ``role`` (admin): ``expires_in`` seconds or ``"30d"``, ``"12h"``
        (never by default); ``subject`` owns its subscriptions (default: a new name)."""
        return await self.send(calls.create_token(role, expires_in, subject))

    async def revoke_token(self, token: Token | NewToken | str) -> None:
        """Revoke a token (admin)."""
        await self.send(calls.revoke_token(token))

    def dead_letters(self) -> AsyncIterator[DeadLetter]:
        """Webhook notifications whose delivery gave up (admin)."""
        return self._all(lambda cursor: calls.dead_letters(cursor))

    async def replay(self, letter: DeadLetter | int) -> str | None:
        """Deliver a dead letter again; ``None`` when delivered, else the error."""
        return await self.send(calls.replay(letter))

    async def health(self) -> dict[str, Any]:
        """``/health`` (needs no token)."""
        return await self.send(calls.health())

    async def metrics(self, token: str | None = None) -> str:
        """``/metrics`` as Prometheus text; ``token``: a metrics-only token instead of the
        client's."""
        return await self.send(calls.metrics(token))
