"""What :class:`~semps.client.Client` and :class:`~semps.client.AsyncClient` share beyond
the calls themselves: the server's address and credentials, the request arguments of a
:class:`~semps.client._core.Call`, the walk over a list's pages and the opening of a
notification stream. The two clients differ only where one blocks and the other awaits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Literal, Protocol, TypedDict, TypeVar
from urllib.parse import urlencode

from semps.client import _calls as calls
from semps.client._calls import SubscriptionRef
from semps.client._core import Call, Page, Reply, refusal
from semps.client._models import BatchSubscription, Notification
from semps.client._mux import MuxPosition, MuxSSE, mux_message, mux_params
from semps.client._stream import Retry, SSENotifications, StreamPosition
from semps.client._ws import ws_url
from semps.errors import ClientError, SempsError

__all__ = [
    "BATCH_CHUNK",
    "RETRY_STATUSES",
    "BatchOptions",
    "ClientBase",
    "SSELink",
    "WebSocketLink",
    "Cursors",
    "MuxOptions",
    "StreamOptions",
    "auth_headers",
    "transport_error",
]

T = TypeVar("T")
#: The ``httpx`` transport a client takes (``httpx.MockTransport`` in tests).
TransportT = TypeVar("TransportT")

#: Subscriptions a ``subscribe_many`` request carries by default (well under the server's
#: default ``max_batch_subscriptions``, and a request of a few MB).
BATCH_CHUNK = 10_000

#: Statuses a notification stream retries (with backoff) instead of raising.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def transport_error(method: str, url: str, exc: Exception) -> ClientError:
    """A network failure as the client's one error class."""
    msg = f"{method} {url} failed: {exc or type(exc).__name__}"
    return ClientError(msg)


class BatchOptions(TypedDict, total=False):
    """The keyword arguments of the clients' ``subscribe_many``.

    Attributes:
        kind: every subscription's matcher (default ``semantic``).
        chunk: subscriptions a request (default :data:`BATCH_CHUNK`; at most the server's
            ``max_batch_subscriptions``).
        progress: called after each request with how many it carried.
    """

    kind: str
    chunk: int
    progress: Callable[[int], object]


class StreamOptions(TypedDict, total=False):
    """The keyword arguments of the clients' ``notifications``.

    Attributes:
        after: yield the notifications after this ``seq`` (default 0: all stored).
        once: stop after what the server has stored (SSE only; default ``False``).
        via: ``"sse"`` (the default) or ``"websocket"``.
    """

    after: int
    once: bool
    via: Literal["sse", "websocket"]


class MuxOptions(TypedDict, total=False):
    """The keyword arguments of the clients' ``stream``.

    Attributes:
        cursor: resume from this cursor (a :class:`MuxPosition`'s ``cursor``).
        via: ``"sse"`` (the default) or ``"websocket"``.
        position: the position to keep up to date (default: a new one).
    """

    cursor: str | None
    via: Literal["sse", "websocket"]
    position: MuxPosition


class Reader(Protocol):
    """An SSE stream's lines as notifications (:class:`SSENotifications`, :class:`MuxSSE`)."""

    def feed(self, line: str) -> Notification | None:
        """The notification a line completes, if any."""


@dataclass(frozen=True)
class SSELink:
    """How to open (and reopen) one SSE notification stream and read it.

    Attributes:
        path: the stream's path (``self.url + path`` names it in errors).
        params: its query.
        headers: its headers at each (re)connection, from where ``pos`` is.
        reader: a new reader of its lines for each connection.
        pos: where the stream is.
        once: stop after what the server has stored.
    """

    path: str
    params: dict[str, str]
    headers: Callable[[], dict[str, str]]
    reader: Callable[[], Reader]
    pos: StreamPosition
    once: bool = False


@dataclass(frozen=True)
class WebSocketLink:
    """How to open (and reopen) one WebSocket notification stream and read it.

    Attributes:
        url: the stream's URL (it names it in errors).
        address: the URL with its query at each (re)connection, from where ``pos`` is.
        accept: one message as a notification (``None``: nothing to yield).
        pos: where the stream is.
        subs: the subscriptions asked for over HTTP when the handshake is refused, so that
            the server names the error (the handshake's 403 does not).
    """

    url: str
    address: Callable[[], str]
    accept: Callable[[str], Notification | None]
    pos: StreamPosition
    subs: Sequence[str]


class Cursors:
    """The cursors of a paginated list, followed until the last page; a server that hands
    out a cursor twice would loop forever and is refused."""

    def __init__(self) -> None:
        self.cursor: str | None = None
        self._seen: set[str] = set()

    def advance(self, page: Page[Any]) -> bool:
        """Move on to the page after ``page``; ``False`` when it was the last."""
        if page.next is None:
            return False
        if page.next in self._seen:
            msg = f"the server repeated the cursor {page.next!r}"
            raise ClientError(msg)
        self._seen.add(page.next)
        self.cursor = page.next
        return True


class ClientBase(ABC, Generic[TransportT]):
    """The state and the request-building both clients share (see :class:`Client` for the
    arguments)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retry: Retry | None = None,
        transport: TransportT | None = None,
    ) -> None:
        self.url, self.token, self.retry = url.rstrip("/"), token, retry or Retry()
        self._timeout = timeout
        self._open(
            base_url=self.url,
            headers=auth_headers(token),
            timeout=timeout,
            transport=transport,
        )

    @abstractmethod
    def _open(self, **options: Any) -> None:
        """Open the ``httpx`` client with these keyword arguments."""

    @staticmethod
    def _request(call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of one ``httpx`` request."""
        return {
            "method": call.method,
            "url": call.path,
            "params": call.params,
            "headers": call.headers,
            "content": call.content,
        }

    def _failed(self, call: Call[Any], exc: Exception) -> ClientError:
        return transport_error(call.method, self.url + call.path, exc)

    @staticmethod
    def _batch_calls(
        sources: Iterable[calls.BatchSource], options: BatchOptions
    ) -> Iterator[Call[list[BatchSubscription]]]:
        """The requests of a ``subscribe_many``, ``progress`` told of each once it is sent
        (when the next is asked for)."""
        kind, progress = options.get("kind", "semantic"), options.get("progress")
        for entries in calls.batch_chunks(sources, options.get("chunk", BATCH_CHUNK)):
            yield calls.subscribe_batch(entries, kind)
            if progress is not None:
                progress(len(entries))

    def _notification_link(
        self, ref: SubscriptionRef, options: StreamOptions
    ) -> SSELink | WebSocketLink:
        """One subscription's notification stream, as ``options`` ask, checked."""
        once, via = options.get("once", False), options.get("via", "sse")
        if via == "websocket" and once:
            msg = "once=True reads what is stored, over SSE only"
            raise ClientError(msg)
        sub, pos = calls.sub_id(ref), StreamPosition(options.get("after", 0))
        if via == "websocket":
            return self._websocket_link(sub, pos)
        return self._sse_link(sub, pos, once)

    def _mux_link(
        self, refs: Iterable[SubscriptionRef] | None, options: MuxOptions
    ) -> SSELink | WebSocketLink:
        """A multiplexed stream of ``refs`` (``None``: all), as ``options`` ask."""
        subs = None if refs is None else [calls.sub_id(ref) for ref in refs]
        pos = options.get("position") or MuxPosition()
        if options.get("cursor"):
            pos.cursor = options.get("cursor")
        if options.get("via", "sse") == "websocket":
            return self._mux_websocket_link(subs, pos)
        return self._mux_sse_link(subs, pos)

    @staticmethod
    def _mux_url(url: str, subs: list[str] | None, pos: MuxPosition) -> str:
        """The multiplexed WebSocket's URL with its query."""
        params = mux_params(subs)
        if pos.cursor:
            params["cursor"] = pos.cursor
        return f"{url}?{urlencode(params)}" if params else url

    def _sse_link(self, sub: str, pos: StreamPosition, once: bool) -> SSELink:
        """One subscription's SSE stream, resuming after ``pos``."""
        return SSELink(
            f"/subscriptions/{sub}/notifications",
            {"once": "true"} if once else {},
            lambda: {"Last-Event-ID": str(pos.after)},
            partial(SSENotifications, pos),
            pos,
            once,
        )

    def _websocket_link(self, sub: str, pos: StreamPosition) -> WebSocketLink:
        """One subscription's WebSocket stream, resuming after ``pos``."""
        url = ws_url(self.url, sub)
        return WebSocketLink(url, lambda: f"{url}?after={pos.after}", pos.accept, pos, [sub])

    @staticmethod
    def _mux_sse_link(subs: list[str] | None, pos: MuxPosition) -> SSELink:
        """A multiplexed SSE stream of ``subs`` (``None``: all), resuming from ``pos``."""
        return SSELink(
            "/notifications",
            mux_params(subs),
            lambda: {"Last-Event-ID": pos.cursor} if pos.cursor else {},
            partial(MuxSSE, pos),
            pos,
        )

    def _mux_websocket_link(self, subs: list[str] | None, pos: MuxPosition) -> WebSocketLink:
        """A multiplexed WebSocket stream of ``subs`` (``None``: all), resuming from ``pos``."""
        url = ws_url(self.url, None)
        return WebSocketLink(
            url, lambda: self._mux_url(url, subs, pos), partial(mux_message, pos), pos, subs or ()
        )

    @staticmethod
    def _sse_refused(path: str, status: int, content: bytes) -> SempsError:
        """The refusal of an SSE connection, raised unless its status is one to retry."""
        refused = refusal(Call("GET", path, Reply.text), Reply(status, content))
        if status not in RETRY_STATUSES:
            raise refused
        return refused

    @staticmethod
    def _ws_refused(status: int) -> ClientError:
        return ClientError(f"the server refused the WebSocket ({status})", status=status)
