"""The synchronous client, :class:`Client`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
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
from semps.client._ws import RETRIABLE, connect_sync, ws_cause, ws_refusal
from semps.errors import ClientError

__all__ = ["Client"]

T = TypeVar("T")


class Client(ClientBase[httpx.BaseTransport]):
    """A synchronous client of a semps server.

    Args:
        url: the server's base URL (``http://127.0.0.1:8000``).
        token: the bearer token (its role decides what the calls may do).
        timeout: seconds for connecting, sending and waiting for an answer; a notification
            stream waits this long for a byte (the server sends a keep-alive every 5 s).
        retry: how notification streams reconnect.
        transport: an httpx transport (``httpx.MockTransport`` in tests).

    Every method raises the server's refusal as the class of :mod:`semps.errors` it raised
    (``NotFound``, ``SubscriptionSyntaxError`` with ``line`` and ``column``, ...) and network
    failures as :class:`~semps.errors.ClientError`.
    """

    _http: httpx.Client

    def _open(self, **options: Any) -> None:
        self._http = httpx.Client(**options)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def send(self, call: Call[T]) -> T:
        """Send one :class:`~semps.client._core.Call` and read its answer."""
        try:
            response = self._http.request(**self._request(call))
        except httpx.HTTPError as exc:
            raise self._failed(call, exc) from exc
        return finish(call, Reply(response.status_code, response.content, response.headers))

    def _all(self, page: Callable[[str | None], Call[Page[T]]]) -> Iterator[T]:
        """The items of every page; the first page is asked for now, so a refusal (a bad
        token, a role that may not list) is raised by the call, not by the first ``next``."""
        first = self.send(page(None))
        return self._following(first, page)

    def _following(self, got: Page[T], page: Callable[[str | None], Call[Page[T]]]) -> Iterator[T]:
        cursors = Cursors()
        while True:
            yield from got.items
            if not cursors.advance(got):
                return
            got = self.send(page(cursors.cursor))

    # -- subscriptions -----------------------------------------------------------------------

    def subscribe(self, source: QuerySource, **options: Unpack[SubscribeOptions]) -> m.Subscription:
        """Register a subscription.

        Args:
            source: the SPARQL text (``str``), a file holding it (:class:`pathlib.Path`),
                or a content or symmetric subscription as a ``dict``.
            kind: the matcher: ``semantic``, ``content``, ``symmetric``, ...; by default
                ``content`` for a dict of ``constraints``, ``symmetric`` for a dict with a
                ``region``, else ``semantic``.
            name: a name for people.
            callback: a webhook URL; the answer's ``secret`` signs its deliveries.
            media_type: the body's media type when the default guess is wrong.
            options: further query parameters the server accepts.

        Raises:
            SubscriptionSyntaxError: the text does not parse (``line``, ``column``).
            UnsupportedQueryError: valid SPARQL outside the supported fragment.
            SubscriptionLimitExceeded: over a documented limit.
        """
        return self.send(calls.subscribe(source, **options))

    def subscribe_many(
        self, sources: Iterable[calls.BatchSource], **options: Unpack[BatchOptions]
    ) -> list[m.BatchSubscription]:
        """Register many subscriptions through ``POST /subscriptions/batch``, ``chunk``
        a request (each registered with one transaction on the server, durable when its
        request is answered).

        Args:
            sources: texts, ``.rq`` files (named after their stem) or (text, name) pairs.
            kind: every subscription's matcher.
            chunk: subscriptions a request (at most the server's
                ``max_batch_subscriptions``).
            progress: called after each request with how many it carried.

        Returns:
            Each subscription's outcome in order: a :class:`Subscription`, or the error
            that refused it (returned, not raised).
        """
        batches = self._batch_calls(sources, options)
        return [outcome for call in batches for outcome in self.send(call)]

    def subscriptions(self, *, page_size: int | None = None) -> Iterator[m.Subscription]:
        """The caller's subscriptions (every one for an admin), following the server's
        pages.

        Raises:
            AuthError: a missing, unknown, expired or revoked token (at the call, not when
                iterating).
        """
        return self._all(lambda cursor: calls.subscriptions(cursor, page_size))

    def subscription(self, ref: SubscriptionRef) -> m.Subscription:
        """One subscription, with its ``status`` and ``reason``."""
        return self.send(calls.get(ref))

    def replace(
        self, ref: SubscriptionRef, source: QuerySource, **options: Unpack[ReplaceOptions]
    ) -> m.Subscription:
        """Replace a subscription's text atomically (a refused one leaves the old one)."""
        return self.send(calls.subscribe(source, sub=calls.sub_id(ref), **options))

    def delete(self, ref: SubscriptionRef) -> None:
        """Delete a subscription."""
        self.send(calls.delete(ref))

    def suspend(self, ref: SubscriptionRef, reason: str | None = None) -> m.Subscription:
        """Take a subscription out of matching until an admin resumes it (admin), through
        the API's suspend route or, on servers without one, the web console's."""
        try:
            return self.send(calls.suspend(ref, reason))
        except ClientError as exc:
            if exc.status not in (404, 405):
                raise
        self.send(calls.console_suspend(ref, reason))
        return self.subscription(ref)

    def resume(self, ref: SubscriptionRef) -> m.Subscription:
        """Put a suspended subscription back into matching (admin)."""
        return self.send(calls.resume(ref))

    # -- events ------------------------------------------------------------------------------

    def publish(
        self, source: RDFSource, media_type: str | None = None, *, retain: bool = False
    ) -> m.Published:
        """Publish one event: RDF bytes or text (``media_type``, default RDF/XML), a file
        (its suffix picks the syntax), an rdflib ``Graph``, or a JSON event (``dict``).
        ``retain``: its triples stay in the knowledge graph (a change of the graph: its
        notifications carry ``removed`` too).

        Raises:
            IngestError: the document does not parse; text or bytes that do not look like
                XML, sent as RDF/XML for want of a ``media_type``, say which to pass.
        """
        return self.send(calls.publish(source, media_type, retain=retain))

    def publish_batch(
        self, sources: Iterable[RDFSource | tuple[RDFSource, str]]
    ) -> list[m.BatchItem]:
        """Publish many events in one request; each item's result in order, a refused one
        as its exception (returned, not raised)."""
        return self.send(calls.publish_batch(sources))

    # -- notifications -----------------------------------------------------------------------

    def notifications(
        self, ref: SubscriptionRef, **options: Unpack[StreamOptions]
    ) -> Iterator[m.Notification]:
        """A subscription's notifications after seq ``after`` (default 0), as they come,
        over SSE or ``via="websocket"`` (:class:`~semps.client._base.StreamOptions`).

        The stream reconnects by itself (``Last-Event-ID``) when the connection drops,
        within :attr:`retry`; nothing is lost or yielded twice. ``once`` stops after what
        the server has stored (SSE only). Closing the iterator closes the stream.
        """
        return self._follow(self._notification_link(ref, options))

    def stream(
        self, subscriptions: Iterable[SubscriptionRef] | None = None, **options: Unpack[MuxOptions]
    ) -> Iterator[m.Notification]:
        """The notifications of many subscriptions over one stream (it counts once against
        the server's ``--max-streams``): ``subscriptions`` (default: all the caller's, those
        registered later included), each resumed from ``cursor`` (a :class:`MuxPosition`'s
        :attr:`~MuxPosition.cursor` saved from an earlier stream), over SSE or
        ``via="websocket"``. Pass ``position=MuxPosition()`` to read the cursor as it goes.
        Reconnects by itself; nothing is lost or yielded twice."""
        return self._follow(self._mux_link(subscriptions, options))

    def _follow(self, link: SSELink | WebSocketLink) -> Iterator[m.Notification]:
        if isinstance(link, WebSocketLink):
            return self._websocket(link)
        return self._sse(link)

    def _sse(self, link: SSELink) -> Iterator[m.Notification]:
        path, pos = link.path, link.pos
        while True:
            try:
                with self._http.stream(
                    "GET", path, params=link.params, headers=link.headers()
                ) as response:
                    if response.status_code >= 400:
                        status = response.status_code
                        cause: BaseException | str = self._sse_refused(
                            path, status, response.read()
                        )
                    else:
                        reader = link.reader()
                        for line in response.iter_lines():
                            note = reader.feed(line)
                            if note is not None:
                                yield note
                        if link.once:
                            return
                        cause = "the server ended the stream"
            except httpx.TransportError as exc:
                cause = exc
            time.sleep(pos.failed(self.retry, self.url + path, cause))

    def _websocket(self, link: WebSocketLink) -> Iterator[m.Notification]:
        pos = link.pos
        while True:
            try:
                with connect_sync(link.address(), auth_headers(self.token), self._timeout) as ws:
                    pos.connected()
                    for message in ws:
                        text = message if isinstance(message, str) else message.decode()
                        note = link.accept(text)
                        if note is not None:
                            yield note
                cause: BaseException | str = "the server closed the WebSocket"
            except RETRIABLE as exc:
                refused = ws_refusal(exc)
                if refused is not None:
                    for sub in link.subs:
                        self.subscription(sub)  # raises NotFound, AuthError, ... as the server does
                    raise self._ws_refused(refused) from exc
                cause = ws_cause(exc)
            time.sleep(pos.failed(self.retry, link.url, cause))

    # -- ontology ----------------------------------------------------------------------------

    def ontology(self, syntax: Literal["rdfxml", "turtle"] = "rdfxml") -> str:
        """The ontology as RDF/XML or Turtle."""
        return self.send(calls.get_ontology(syntax))

    def replace_ontology(self, source: RDFSource, media_type: str | None = None) -> int:
        """Replace the ontology (admin): a file, text, bytes or an rdflib ``Graph``; returns
        the new version."""
        return self.send(calls.load_ontology(source, replace=True, media_type=media_type))

    def merge_ontology(self, source: RDFSource, media_type: str | None = None) -> int:
        """Add a document's axioms to the ontology (admin); returns the new version."""
        return self.send(calls.load_ontology(source, replace=False, media_type=media_type))

    def add_axiom(self, kind: str, subject: str, obj: str) -> int:
        """Add ``subject kind obj`` (``subClassOf``, ``subPropertyOf``, ``equivalentClass``,
        ``equivalentProperty``, ``inverseOf``); returns the new version."""
        return self.send(calls.add_axiom(kind, subject, obj))

    def remove_axiom(self, kind: str, subject: str, obj: str) -> int:
        """Remove an axiom; returns the new version."""
        return self.send(calls.remove_axiom(kind, subject, obj))

    # -- knowledge graph ---------------------------------------------------------------------

    def load_graph(
        self, source: RDFSource, media_type: str | None = None, *, replace: bool = False
    ) -> m.GraphEdit:
        """Add a document's triples to the knowledge graph (``replace``: instead of its
        triples) as publisher or admin: a file (its suffix picks the syntax), text or bytes
        (Turtle unless ``media_type`` says otherwise), or an rdflib ``Graph``. Answered once
        the change and its notifications are committed."""
        return self.send(calls.load_graph(source, replace=replace, media_type=media_type))

    def update_graph(self, update: str) -> m.GraphEdit:
        """Run a SPARQL 1.1 Update on the knowledge graph (publisher or admin).

        Raises:
            UpdateSyntaxError: it does not parse (``line``, ``column``);
            UnsupportedUpdateError: ``LOAD``, ``SERVICE``, named graphs (``construct``);
            GraphLimitExceeded: it is larger, or grows the closure more, than the server
                allows (nothing was changed).
        """
        return self.send(calls.update_graph(update))

    def export_graph(self, media_type: str = "text/turtle", *, closure: bool = False) -> str:
        """The knowledge graph's asserted triples (``closure``: the inferred ones too) as
        Turtle, N-Triples, RDF/XML or JSON-LD."""
        return self.send(calls.get_graph(media_type, closure=closure))

    def clear_graph(self) -> m.GraphEdit:
        """Remove every triple of the knowledge graph (publisher or admin)."""
        return self.send(calls.clear_graph())

    def graph_info(self) -> m.GraphInfo:
        """The knowledge graph's version and sizes."""
        return self.send(calls.graph_info())

    # -- administration ----------------------------------------------------------------------

    def tokens(self) -> Iterator[m.Token]:
        """Every token (admin), never their secrets."""
        return self._all(lambda cursor: calls.tokens(cursor))

    def create_token(
        self, role: str, expires_in: int | str | None = None, subject: str | None = None
    ) -> m.NewToken:
        """A new token for ``role`` (admin): ``expires_in`` seconds or ``"30d"``, ``"12h"``
        (never by default); ``subject`` owns its subscriptions (default: a new name)."""
        return self.send(calls.create_token(role, expires_in, subject))

    def revoke_token(self, token: m.Token | m.NewToken | str) -> None:
        """Revoke a token (admin)."""
        self.send(calls.revoke_token(token))

    def dead_letters(self) -> Iterator[m.DeadLetter]:
        """Webhook notifications whose delivery gave up (admin)."""
        return self._all(lambda cursor: calls.dead_letters(cursor))

    def replay(self, letter: m.DeadLetter | int) -> str | None:
        """Deliver a dead letter again; ``None`` when delivered, else the error."""
        return self.send(calls.replay(letter))

    def health(self) -> dict[str, Any]:
        """``/health`` (needs no token)."""
        return self.send(calls.health())

    def metrics(self, token: str | None = None) -> str:
        """``/metrics`` as Prometheus text; ``token``: a metrics-only token instead of the
        client's."""
        return self.send(calls.metrics(token))
