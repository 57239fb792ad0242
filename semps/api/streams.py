"""The notification streams of the HTTP API: Server-Sent Events and WebSocket.

A stream replays the store (the log) from the client's position in pages (at most
:data:`PAGE` notifications and :data:`PAGE_BYTES` of text), then follows new ones from
memory through the :class:`~semps.broker.fanout.Fanout`; a stream that falls behind reads
pages again. One page is the most a stream holds, and a client that does not read stops its
stream at the socket (the server's send waits), so a slow reader costs a bounded amount of
memory. Each subscriber may hold :attr:`Streams.max_streams` streams at once (SSE and
WebSocket together); one more is refused with :class:`~semps.errors.TooManyRequests` (HTTP
429, WebSocket close code 4429). Positions (``Last-Event-ID``, ``?after=``) are ASCII digits
below 2**63 (:func:`parse_position`); anything else is a 400 (WebSocket close code 4400).
When the server shuts down (:meth:`Streams.close`, called by :class:`semps.api.server.Server`)
every stream ends after what it has sent: an SSE response completes, a WebSocket is closed
(uvicorn's code 1012, "service restart"), and clients resume from their position.

A stream checks every :data:`RECHECK` seconds that its bearer token is still valid and its
subscription still there (the route passes the check): once the token is revoked or expired,
or the subscription deleted, the stream ends within that time plus the broker's token cache
(:data:`~semps.broker.gate.TOKEN_CACHE_SECONDS`; a revocation through the API clears it),
with a last SSE event ``end`` whose data is the error (``{"error": "unauthorized", "detail":
...}``), or a WebSocket close code 4401 (token) or 4404 (subscription) with the reason, and
its slot is free.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field

from fastapi import WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from semps.api.errors import error_body, error_parts
from semps.broker.contracts import NotificationLog
from semps.broker.fanout import Fanout, Listener
from semps.errors import SempsError, TooManyRequests

__all__ = [
    "DEFAULT_MAX_STREAMS",
    "RECHECK",
    "Check",
    "PAGE",
    "PAGE_BYTES",
    "Lease",
    "Streams",
    "close_reason",
    "parse_position",
]

#: Notifications read from the store per page of a replay, and their most text (bytes).
PAGE = 200
PAGE_BYTES = 256 * 1024
#: Open streams per subscriber (SSE and WebSocket together).
DEFAULT_MAX_STREAMS = 16
#: Seconds between SSE keep-alive comments on an idle stream.
KEEPALIVE = 5.0
#: Store pages read at once over all streams (each in a worker thread).
READERS = 4
#: Seconds between two checks that a stream's token and subscription are still good.
RECHECK = 1.0
#: A stream's check: the error that ends it (revoked token, deleted subscription), or None.
Check = Callable[[], SempsError | None]
#: WebSocket close codes of a stream ended by its check, by error status.
_CLOSE_CODES = {401: 4401, 403: 4403, 404: 4404}
_LIMIT = 2**63


def parse_position(value: str | None, name: str) -> int:
    """A stream position from ``Last-Event-ID`` or ``after``: ASCII digits, below 2**63.

    ``None`` or an empty string is 0 (from the start).

    Example:
        >>> parse_position("42", "after")
        42
        >>> try:
        ...     parse_position("²", "Last-Event-ID")
        ... except SempsError as exc:
        ...     print(exc)
        Last-Event-ID must be ASCII digits for a number below 2**63, not '²'
    """
    if not value:
        return 0
    digits = value.lstrip("0") or "0"  # a long string of digits is not parsed at all
    if not (value.isascii() and value.isdigit()) or len(digits) > 19 or int(digits) >= _LIMIT:
        shown = value if len(value) <= 40 else value[:40] + "..."
        msg = f"{name} must be ASCII digits for a number below 2**63, not {shown!r}"
        raise SempsError(msg)
    return int(value)


def close_reason(exc: Exception) -> str:
    """``exc``'s message cut to fit a WebSocket close frame (123 bytes of UTF-8)."""
    return str(exc).encode()[:120].decode("utf-8", "ignore")


@dataclass(eq=False)
class Lease:
    """One open stream counted against its subscriber; :meth:`release` is idempotent."""

    streams: Streams
    subject: str
    released: bool = field(default=False)

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.streams.release(self.subject)


class _LeasedStream(StreamingResponse):
    """A streaming response that closes its generator and returns its lease however the
    response ends (completed, client gone, cancelled)."""

    def __init__(self, content: AsyncGenerator[bytes, None], lease: Lease) -> None:
        super().__init__(content, media_type="text/event-stream")
        self.lease = lease
        self._content = content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with contextlib.suppress(Exception):
                await self._content.aclose()
            self.lease.release()


class Streams:
    """The streaming endpoints' shared state: the fan-out, the per-subscriber cap, and the
    store readers.

    Args:
        store: the notification log.
        fanout: live notifications from memory.
        max_streams: open streams per subscriber.
        sent: called with the number of notifications each time a stream sends some.
    """

    def __init__(
        self,
        store: NotificationLog,
        fanout: Fanout,
        *,
        max_streams: int = DEFAULT_MAX_STREAMS,
        sent: Callable[[int], None] = lambda n: None,
    ) -> None:
        self.store = store
        self.fanout = fanout
        self.max_streams = max_streams
        self.sent = sent
        self._open: dict[str, int] = {}
        self._readers = asyncio.Semaphore(READERS)
        #: Set by :meth:`close`: every stream ends, and one opened after ends at once.
        self.closing = False

    def close(self) -> None:
        """End every stream (the server is shutting down): each ends after what it has
        sent, cleanly, so that its client resumes elsewhere with its position rather than
        have its connection cut once the server stops waiting. Call on the event loop."""
        self.closing = True
        self.fanout.wake()  # every waiting stream looks again, and sees it

    # -- the cap ---------------------------------------------------------------------------

    def lease(self, subject: str) -> Lease:
        """Count one more open stream of ``subject``; raises :class:`TooManyRequests`."""
        count = self._open.get(subject, 0)
        if count >= self.max_streams:
            msg = f"{subject} already has {count} open streams, the limit (--max-streams)"
            raise TooManyRequests(msg)
        self._open[subject] = count + 1
        return Lease(self, subject)

    def release(self, subject: str) -> None:
        count = self._open.get(subject, 0) - 1
        if count > 0:
            self._open[subject] = count
        else:
            self._open.pop(subject, None)

    def open_streams(self, subject: str) -> int:
        """How many streams ``subject`` holds open."""
        return self._open.get(subject, 0)

    def total_open(self) -> int:
        """How many streams are open, over every subscriber."""
        return sum(self._open.values())

    # -- following a subscription ------------------------------------------------------------

    async def _page(self, sub_id: str, after: int) -> list[tuple[int, str]]:
        async with self._readers:
            return await asyncio.to_thread(
                self.store.notification_texts_after, sub_id, after, PAGE, PAGE_BYTES
            )

    async def follow(
        self,
        sub_id: str,
        after: int,
        *,
        once: bool = False,
        idle: float = KEEPALIVE,
        check: Check | None = None,
    ) -> AsyncGenerator[list[tuple[int, str]] | SempsError, None]:
        """Pages of (seq, JSON text) after ``after``, in seq order, with no gaps: the store
        first, then memory; an empty page every ``idle`` seconds without news. With
        ``once``, stops when the stored ones are sent. Every :data:`RECHECK` seconds,
        ``check`` runs: an error it returns is the last thing yielded."""
        listener = self.fanout.listen(sub_id)  # before the first read: nothing falls between
        loop = asyncio.get_running_loop()
        checked = quiet = loop.time()
        try:
            last = after
            while not self.closing:
                if check is not None and loop.time() - checked >= RECHECK:
                    checked = loop.time()
                    problem = check()
                    if problem is not None:
                        yield problem
                        return
                if listener.stale:
                    listener.stale = False
                    page = await self._page(sub_id, last)
                    if page:
                        last = page[-1][0]
                        listener.stale = True  # more may be stored: read until none is
                        yield page
                    elif once:
                        return
                    continue
                page = self._fresh(listener, last)
                if page:
                    last = page[-1][0]
                    quiet = loop.time()
                    yield page
                elif not listener.stale:
                    wait = idle - (loop.time() - quiet)
                    if check is not None:
                        wait = min(wait, RECHECK)
                    if not await listener.wait(max(0.0, wait)) and loop.time() - quiet >= idle:
                        quiet = loop.time()
                        yield []
        finally:
            self.fanout.unlisten(listener)

    @staticmethod
    def _fresh(listener: Listener, last: int) -> list[tuple[int, str]]:
        """The inbox's notifications after ``last`` if they follow on without a gap; on a gap
        the listener is marked stale (the store has them) and nothing is returned."""
        page = [(seq, text) for seq, text in listener.take() if seq > last]
        for seq, _ in page:
            if seq != last + 1:
                listener.stale = True
                return []
            last = seq
        return page

    # -- Server-Sent Events ----------------------------------------------------------------

    def sse(
        self, sub_id: str, after: int, once: bool, lease: Lease, check: Check | None = None
    ) -> StreamingResponse:
        """The ``text/event-stream`` response for one subscription from ``after``."""
        return _LeasedStream(self._sse(sub_id, after, once, check), lease)

    async def _sse(
        self, sub_id: str, after: int, once: bool, check: Check | None
    ) -> AsyncGenerator[bytes, None]:
        async for page in self.follow(sub_id, after, once=once, check=check):
            if isinstance(page, SempsError):  # the last event: why the stream ends
                yield f"event: end\ndata: {json.dumps(error_body(page))}\n\n".encode()
                return
            if not page:
                yield b": keep-alive\n\n"
                continue
            yield "".join(_frame(seq, text) for seq, text in page).encode()
            self.sent(len(page))

    # -- WebSocket -------------------------------------------------------------------------

    async def websocket(
        self, ws: WebSocket, sub_id: str, after: int, lease: Lease, check: Check | None = None
    ) -> None:
        """Send each notification as one text message until the client closes (or
        ``check`` ends the stream: a close code and reason); the client's messages are
        ignored."""
        try:
            watcher = asyncio.create_task(self._watch(ws))
            sender = asyncio.create_task(self._send(ws, sub_id, after, check))
            done, pending = await asyncio.wait({watcher, sender}, return_when="FIRST_COMPLETED")
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        finally:
            lease.release()

    @staticmethod
    async def _watch(ws: WebSocket) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass

    async def _send(self, ws: WebSocket, sub_id: str, after: int, check: Check | None) -> None:
        pages = self.follow(sub_id, after, idle=30.0, check=check)
        try:
            async for page in pages:
                if isinstance(page, SempsError):
                    status = error_parts(page)[0]
                    await ws.close(code=_CLOSE_CODES.get(status, 4400), reason=close_reason(page))
                    return
                for _seq, text in page:
                    await ws.send_text(text)
                self.sent(len(page))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            await pages.aclose()


def _frame(seq: int, text: str) -> str:
    """One SSE event; a payload with line breaks becomes several ``data:`` lines."""
    if "\n" in text or "\r" in text:
        data = "".join(f"data: {line}\n" for line in text.splitlines())
    else:
        data = f"data: {text}\n"
    return f"id: {seq}\nevent: notification\n{data}\n"
