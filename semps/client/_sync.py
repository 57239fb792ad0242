"""The synchronous client, :class:`Client`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
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
from semps.client._ws import RETRIABLE, connect_sync, ws_cause, ws_refusal, ws_url
from semps.errors import ClientError

__all__ = ["Client"]

T = TypeVar("T")

#: Statuses a notification stream retries (with backoff) instead of raising.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def transport_error(method: str, url: httpx.URL | str, exc: Exception) -> ClientError:
    """A network failure as the client's one error class."""
    msg = f"{method} {url} failed: {exc or type(exc).__name__}"
    return ClientError(msg)


class Client:
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

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retry: Retry | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url, self.token, self.retry = url.rstrip("/"), token, retry or Retry()
        self._timeout = timeout
        self._http = httpx.Client(
            base_url=self.url, headers=auth_headers(token), timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def send(self, call: Call[T]) -> T:
        """Send one :class:`~semps.client._core.Call` and read its answer."""
        try:
            response = self._http.request(
                call.method,
                call.path,
                params=call.params,
                headers=call.headers,
                content=call.content,
            )
        except httpx.HTTPError as exc:
            raise transport_error(call.method, self.url + call.path, exc) from exc
        return finish(call, Reply(response.status_code, response.content, response.headers))

    def _all(self, page: Callable[[str | None], Call[Page[T]]]) -> Iterator[T]:
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            got = self.send(page(cursor))
            yield from got.items
            if got.next is None:
                return
            if got.next in seen:
                msg = f"the server repeated the cursor {got.next!r}"
                raise ClientError(msg)
            seen.add(got.next)
            cursor = got.next

    # -- subscriptions -----------------------------------------------------------------------

    def subscribe(
        self,
        source: QuerySource,
        *,
        kind: str | None = None,
        name: str | None = None,
        callback: str | None = None,
        media_type: str | None = None,
        options: Mapping[str, str | int] | None = None,
    ) -> Subscription:
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
        return self.send(
            calls.subscribe(
                source,
                kind=kind,
                name=name,
                callback=callback,
                media_type=media_type,
                options=options,
            )
        )

    def subscriptions(self, *, page_size: int | None = None) -> Iterator[Subscription]:
        """The caller's subscriptions (every one for an admin), following the server's
        pages."""
        return self._all(lambda cursor: calls.subscriptions(cursor, page_size))

    def subscription(self, ref: SubscriptionRef) -> Subscription:
        """One subscription, with its ``status`` and ``reason``."""
        return self.send(calls.get(ref))

    def replace(
        self,
        ref: SubscriptionRef,
        source: QuerySource,
        *,
        kind: str | None = None,
        name: str | None = None,
        media_type: str | None = None,
    ) -> Subscription:
        """Replace a subscription's text atomically (a refused one leaves the old one)."""
        sub = calls.sub_id(ref)
        return self.send(
            calls.subscribe(source, kind=kind, name=name, media_type=media_type, sub=sub)
        )

    def delete(self, ref: SubscriptionRef) -> None:
        """Delete a subscription."""
        self.send(calls.delete(ref))

    def suspend(self, ref: SubscriptionRef, reason: str | None = None) -> Subscription:
        """Take a subscription out of matching until an admin resumes it (admin), through
        the API's suspend route or, on servers without one, the web console's."""
        try:
            return self.send(calls.suspend(ref, reason))
        except ClientError as exc:
            if exc.status not in (404, 405):
                raise
        self.send(calls.console_suspend(ref, reason))
        return self.subscription(ref)

    def resume(self, ref: SubscriptionRef) -> Subscription:
        """Put a suspended subscription back into matching (admin)."""
        return self.send(calls.resume(ref))

    # -- events ------------------------------------------------------------------------------

    def publish(self, source: RDFSource, media_type: str | None = None) -> Published:
        """Publish one event: RDF bytes or text (``media_type``, default RDF/XML), a file
        (its suffix picks the syntax), an rdflib ``Graph``, or a JSON event (``dict``)."""
        return self.send(calls.publish(source, media_type))

    def publish_batch(
        self, sources: Iterable[RDFSource | tuple[RDFSource, str]]
    ) -> list[BatchItem]:
        """Publish many events in one request; each item's result in order, a refused one
        as its exception (returned, not raised)."""
        return self.send(calls.publish_batch(sources))

    # -- notifications -----------------------------------------------------------------------

    def notifications(
        self,
        ref: SubscriptionRef,
        *,
        after: int = 0,
        once: bool = False,
        via: Literal["sse", "websocket"] = "sse",
    ) -> Iterator[Notification]:
        """A subscription's notifications after seq ``after``, as they come.

        The stream reconnects by itself (``Last-Event-ID``) when the connection drops,
        within :attr:`retry`; nothing is lost or yielded twice. ``once`` stops after what
        the server has stored (SSE only). Closing the iterator closes the stream.
        """
        sub = calls.sub_id(ref)
        if via == "websocket":
            if once:
                msg = "once=True reads what is stored, over SSE only"
                raise ClientError(msg)
            return self._websocket(sub, StreamPosition(after))
        return self._sse(sub, StreamPosition(after), once)

    def _sse(self, sub: str, pos: StreamPosition, once: bool) -> Iterator[Notification]:
        path = f"/subscriptions/{sub}/notifications"
        params = {"once": "true"} if once else {}
        while True:
            headers = {"Last-Event-ID": str(pos.after)}
            try:
                with self._http.stream("GET", path, params=params, headers=headers) as response:
                    if response.status_code >= 400:
                        reply = Reply(response.status_code, response.read())
                        refused = refusal(Call("GET", path, Reply.text), reply)
                        if response.status_code not in RETRY_STATUSES:
                            raise refused
                        cause: BaseException | str = refused
                    else:
                        yield from _decode(response.iter_lines(), pos)
                        if once:
                            return
                        cause = "the server ended the stream"
            except httpx.TransportError as exc:
                cause = exc
            time.sleep(pos.failed(self.retry, self.url + path, cause))

    def _websocket(self, sub: str, pos: StreamPosition) -> Iterator[Notification]:
        url = ws_url(self.url, sub)
        while True:
            try:
                with connect_sync(
                    f"{url}?after={pos.after}", auth_headers(self.token), self._timeout
                ) as ws:
                    pos.connected()
                    for message in ws:
                        text = message if isinstance(message, str) else message.decode()
                        note = pos.accept(text)
                        if note is not None:
                            yield note
                cause: BaseException | str = "the server closed the WebSocket"
            except RETRIABLE as exc:
                refused = ws_refusal(exc)
                if refused is not None:
                    raise self._refused_stream(sub, refused) from exc
                cause = ws_cause(exc)
            time.sleep(pos.failed(self.retry, url, cause))

    def _refused_stream(self, sub: str, status: int) -> Exception:
        """Why the server refused a WebSocket: the same check over HTTP names the error
        (the handshake's 403 does not)."""
        self.subscription(sub)  # raises NotFound, AuthError, ... as the server does
        return ClientError(f"the server refused the WebSocket ({status})", status=status)

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

    # -- administration ----------------------------------------------------------------------

    def tokens(self) -> Iterator[Token]:
        """Every token (admin), never their secrets."""
        return self._all(lambda cursor: calls.tokens(cursor))

    def create_token(
        self, role: str, expires_in: int | str | None = None, subject: str | None = None
    ) -> NewToken:
        """A new token for ``role`` (admin): ``expires_in`` seconds or ``"30d"``, ``"12h"``
        (never by default); ``subject`` owns its subscriptions (default: a new name)."""
        return self.send(calls.create_token(role, expires_in, subject))

    def revoke_token(self, token: Token | NewToken | str) -> None:
        """Revoke a token (admin)."""
        self.send(calls.revoke_token(token))

    def dead_letters(self) -> Iterator[DeadLetter]:
        """Webhook notifications whose delivery gave up (admin)."""
        return self._all(lambda cursor: calls.dead_letters(cursor))

    def replay(self, letter: DeadLetter | int) -> str | None:
        """Deliver a dead letter again; ``None`` when delivered, else the error."""
        return self.send(calls.replay(letter))

    def health(self) -> dict[str, Any]:
        """``/health`` (needs no token)."""
        return self.send(calls.health())

    def metrics(self, token: str | None = None) -> str:
        """``/metrics`` as Prometheus text; ``token``: a metrics-only token instead of the
        client's."""
        return self.send(calls.metrics(token))


def _decode(lines: Iterable[str], pos: StreamPosition) -> Iterator[Notification]:
    decoder = SSEDecoder()
    for line in lines:
        pos.alive()
        event = decoder.feed(line)
        if event is not None and event.event == "notification":
            note = pos.accept(event.data, event.id)
            if note is not None:
                yield note
