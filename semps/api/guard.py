"""HTTP hygiene below the application: request-head limits, slow and idle connections, and
connection caps, enforced in uvicorn's protocol before any parser or route sees the bytes.

uvicorn's httptools parser has no header limit, and it grows a header's value by
concatenation, chunk after chunk: a 128 MB header took 40 s of the event loop to parse while
every other request waited. :func:`guarded_protocol` makes a subclass of uvicorn's
``HttpToolsProtocol`` that counts a request's head as its bytes arrive, before they are fed
to the parser, and refuses it past ``max_request_line`` (414), ``max_header_bytes`` or
``max_headers`` (431); a head must arrive within ``header_timeout`` seconds of the
connection (or of the previous response), a body within ``body_timeout`` of its head
(408); a kept-alive connection idle for ``idle_timeout`` seconds is closed.

:class:`Connections` keeps every open connection, by client address. Past
``max_client_connections`` for one address, its oldest connection that has not yet sent a
request head (idle, or trickling one in) is closed to make room. Past ``max_connections``
in all, the room is made by the address holding the most connections: its oldest that has
not sent a request head, else, for a newcomer from an address holding fewer, the one it
has kept alive longest since its last answer. When nothing may be closed the new
connection is refused (429 for one address, 503 in all). So a flood of idle connections,
or of connections from several addresses that ask for something now and then and wait in
between, neither exhausts the process's file descriptors nor keeps a well-behaved client
out. Every refusal and eviction is one log line (logger ``semps.http``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from semps.api.errors import error_parts
from semps.errors import (
    HeadersTooLarge,
    Overloaded,
    RequestLineTooLong,
    RequestTimeout,
    SempsError,
    TooManyRequests,
)
from semps.limits import Limits

__all__ = ["Connections", "fit_connections", "guarded_protocol"]

log = logging.getLogger("semps.http")

#: File descriptors kept free for the store, the workers' pipes, webhooks and the log.
FD_RESERVE = 64
_END = b"\r\n\r\n"


def fit_connections(wanted: int) -> tuple[int, str | None]:
    """``max_connections`` fitted to the process's file limit (raised to its hard limit
    first): at most what is free, less :data:`FD_RESERVE`; and a note when it was lowered."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 32
    free = (soft if soft != resource.RLIM_INFINITY else 1 << 20) - used - FD_RESERVE
    fitted = max(16, min(wanted, free))
    if fitted < wanted:
        note = (
            f"max_connections lowered from {wanted} to {fitted} to fit the file limit "
            f"({soft} open files, {used} in use)"
        )
        return fitted, note
    return wanted, None


class _Guarded(HttpToolsProtocol):
    """The protocol's interface :class:`Connections` needs (filled in by the subclass)."""

    address: str
    since: float

    def evict(self, reason: str) -> None:
        raise NotImplementedError


class Connections:
    """The open connections of one server, in arrival order, all and by client address;
    and, by client address, those waiting for a request head, which may be closed to make
    room: those that have not sent one yet (``fresh``), and those kept alive since their
    last answer (``waiting``), each the longest waiting first. Past ``per_client``, the
    address's oldest fresh one goes. Past ``total``, one of the address that holds the most
    goes: its oldest fresh one, else, for a newcomer from an address holding fewer, its
    oldest kept alive; so a client with a few connections keeps them while another holds
    hundreds, and an address at the top does not churn its own."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total, self.per_client = total, per_client
        self._open: dict[_Guarded, None] = {}
        self._by_client: dict[str, dict[_Guarded, None]] = {}
        self._fresh_by_client: dict[str, dict[_Guarded, None]] = {}
        self._waiting_by_client: dict[str, dict[_Guarded, None]] = {}

    def __len__(self) -> int:
        return len(self._open)

    def of(self, address: str) -> int:
        """How many connections ``address`` holds open."""
        return len(self._by_client.get(address, ()))

    def admit(self, conn: _Guarded) -> SempsError | None:
        """Count ``conn`` in, closing a waiting connection to make room; or why it
        is refused (nothing to close: every connection is busy with a request)."""
        address = conn.address
        mine = self._by_client.get(address, {})
        if len(mine) >= self.per_client:
            victim = _oldest(self._fresh_by_client.get(address))
            if victim is None:
                msg = (
                    f"{address} already has {len(mine)} open connections, the limit "
                    "(max_client_connections)"
                )
                return TooManyRequests(msg)
            victim.evict(f"{address} has {len(mine)} open connections (max_client_connections)")
        if len(self._open) >= self.total:
            victim = self._room_for(address)
            if victim is None:
                msg = f"{len(self._open)} connections are open, the limit (max_connections)"
                return Overloaded(msg)
            held = len(self._by_client[victim.address])
            victim.evict(
                f"{len(self._open)} connections are open (max_connections), {held} of them "
                f"{victim.address}'s, the most"
            )
        self._open[conn] = None
        self._by_client.setdefault(address, {})[conn] = None
        self._fresh_by_client.setdefault(address, {})[conn] = None
        return None

    def _room_for(self, address: str) -> _Guarded | None:
        """The connection to close past ``total`` for a newcomer from ``address``: one of
        the address holding the most connections among those with one waiting, the oldest
        that never sent a request head, else (for a newcomer from a lighter address: an
        address does not churn its own) the one kept alive longest; None: refuse."""
        addresses = self._fresh_by_client.keys() | self._waiting_by_client.keys()
        heaviest = max(addresses, key=self.of, default=None)
        if heaviest is None:
            return None
        victim = _oldest(self._fresh_by_client.get(heaviest))
        if victim is None and self.of(address) < self.of(heaviest):
            victim = _oldest(self._waiting_by_client.get(heaviest))
        return victim

    def busy(self, conn: _Guarded) -> None:
        """``conn`` sent a whole request head: it may not go until answered."""
        self._drop(self._fresh_by_client, conn)
        self._drop(self._waiting_by_client, conn)

    def waiting(self, conn: _Guarded) -> None:
        """``conn`` was answered and is kept alive for the next request: past ``total`` it
        may go again for a lighter address's newcomer."""
        if conn in self._open:
            self._waiting_by_client.setdefault(conn.address, {})[conn] = None

    def forget(self, conn: _Guarded) -> None:
        """``conn`` closed."""
        self._open.pop(conn, None)
        self.busy(conn)
        self._drop(self._by_client, conn)

    @staticmethod
    def _drop(table: dict[str, dict[_Guarded, None]], conn: _Guarded) -> None:
        group = table.get(conn.address)
        if group is not None:
            group.pop(conn, None)
            if not group:
                del table[conn.address]


def _oldest(group: dict[_Guarded, None] | None) -> _Guarded | None:
    """The first connection of ``group`` (in the order they began waiting), if any."""
    return next(iter(group), None) if group else None


@dataclass(frozen=True, slots=True)
class _Budget:
    """The limits the protocol reads, once."""

    line: int
    header_bytes: int
    headers: int
    head_timeout: float
    body_timeout: float


def guarded_protocol(limits: Limits, connections: Connections) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with ``limits``' HTTP limits, counting its connections
    in ``connections`` (pass the class as ``uvicorn.Config(http=...)``)."""
    budget = _Budget(
        limits.max_request_line,
        limits.max_header_bytes,
        limits.max_headers,
        limits.header_timeout,
        limits.body_timeout,
    )

    class GuardedHttpToolsProtocol(_Guarded):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.address = "?"
            self.since = 0.0
            self._closed = False
            self._timer: asyncio.TimerHandle | None = None
            self._body_timer: asyncio.TimerHandle | None = None
            self._new_head()

        # -- the connection ------------------------------------------------------------

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.address = self.client[0] if self.client else "?"
            self.since = self.loop.time()
            refused = connections.admit(self)
            if refused is not None:
                self._refuse(refused, admitted=False)
                return
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timers()
            connections.forget(self)
            super().connection_lost(exc)

        def evict(self, reason: str) -> None:
            idle = self.loop.time() - self.since
            log.warning(
                "closed the connection of %s, %.0f s without a whole request, to make room: %s",
                self._who(),
                idle,
                reason,
            )
            self._closed = True
            self._stop_timers()
            connections.forget(self)
            self.transport.close()

        # -- the request head ----------------------------------------------------------

        def _new_head(self) -> None:
            self._in_head = True
            self._tail = b""
            self._head_bytes = 0
            self._line_bytes = 0
            self._line_done = False
            self._lines = 0

        def data_received(self, data: bytes) -> None:
            if self._closed:
                return
            if self._in_head:
                refused = self._count_head(data)
                if refused is not None:
                    self._refuse(refused)
                    return
            super().data_received(data)

        def _count_head(self, data: bytes) -> SempsError | None:
            """Count the head's part of ``data``; why the request is refused, if it is."""
            joined = self._tail + data
            end = joined.find(_END)
            part = data if end < 0 else data[: max(0, end + len(_END) - len(self._tail))]
            self._head_bytes += len(part)
            if not self._line_done:
                newline = part.find(b"\n")
                self._line_bytes += len(part) if newline < 0 else newline
                self._line_done = newline >= 0
            if self._line_bytes > budget.line:
                msg = (
                    f"the request line is over the limit of {budget.line} bytes (max_request_line)"
                )
                return RequestLineTooLong(msg)
            self._lines += part.count(b"\n")
            if self._head_bytes - self._line_bytes > budget.header_bytes:
                msg = (
                    f"the request's header fields are over the limit of {budget.header_bytes} "
                    "bytes (max_header_bytes)"
                )
                return HeadersTooLarge(msg)
            if self._lines - 2 > budget.headers:
                msg = (
                    f"the request has more than the limit of {budget.headers} header fields "
                    "(max_headers)"
                )
                return HeadersTooLarge(msg)
            if end >= 0:
                self._in_head = False
                self._cancel("_timer")
            else:
                self._tail = joined[-3:]
            return None

        def on_headers_complete(self) -> None:
            connections.busy(self)
            self._cancel("_timer")
            super().on_headers_complete()
            self._body_timer = self.loop.call_later(budget.body_timeout, self._body_late)

        def on_message_complete(self) -> None:
            self._cancel("_body_timer")
            self._new_head()  # what follows (pipelined or not) is the next request's head
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_head_timer()
                if self._idle():
                    self.since = self.loop.time()
                    connections.waiting(self)

        def _idle(self) -> bool:
            """Whether the connection waits for a request head: not in a body the
            application did not read, no request started (pipelined) and unanswered."""
            answered = self.cycle is None or self.cycle.response_complete
            return self._in_head and answered

        def handle_websocket_upgrade(self) -> None:
            self._stop_timers()
            super().handle_websocket_upgrade()
            upgraded = self.transport.get_protocol()
            lost: Callable[[Exception | None], None] = upgraded.connection_lost

            def connection_lost(exc: Exception | None) -> None:
                connections.forget(self)
                lost(exc)

            upgraded.connection_lost = connection_lost  # type: ignore[method-assign]

        # -- time-outs -----------------------------------------------------------------

        def _arm_head_timer(self) -> None:
            self._cancel("_timer")
            self._timer = self.loop.call_later(budget.head_timeout, self._head_late)

        def _head_late(self) -> None:
            self._timer = None
            if self._closed or self.transport.is_closing():
                return
            if self._head_bytes == 0 and self._idle():
                log.warning(
                    "closed the idle connection of %s: no request in %g s (header_timeout)",
                    self._who(),
                    budget.head_timeout,
                )
                self._closed = True
                self.transport.close()
                return
            msg = (
                f"the request head did not arrive within {budget.head_timeout:g} s (header_timeout)"
            )
            self._refuse(RequestTimeout(msg))

        def _body_late(self) -> None:
            self._body_timer = None
            if self._closed or self.transport.is_closing():
                return
            if self.flow.read_paused:  # the application is not reading: not the client's pace
                self._body_timer = self.loop.call_later(budget.body_timeout, self._body_late)
                return
            msg = f"the request body did not arrive within {budget.body_timeout:g} s (body_timeout)"
            started = self.cycle is not None and self.cycle.response_started
            self._refuse(RequestTimeout(msg), answer=not started)

        def _cancel(self, name: str) -> None:
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)

        def _stop_timers(self) -> None:
            self._cancel("_timer")
            self._cancel("_body_timer")

        # -- refusing ------------------------------------------------------------------

        def _who(self) -> str:
            return f"{self.client[0]}:{self.client[1]}" if self.client else "a client"

        def _refuse(self, error: SempsError, *, admitted: bool = True, answer: bool = True) -> None:
            """Answer ``error`` (unless a response has begun), log it and close."""
            status, body, headers = error_parts(error)
            log.warning("refused a request from %s (%d): %s", self._who(), status, error)
            self._closed = True
            self._stop_timers()
            if answer:
                self.transport.write(_response(status, body, headers))
            if admitted:
                connections.forget(self)
            self.transport.close()

    return GuardedHttpToolsProtocol


def _response(status: int, body: dict[str, object], headers: dict[str, str]) -> bytes:
    """A whole ``Connection: close`` HTTP/1.1 response with the API's JSON error body."""
    content = json.dumps(body, separators=(",", ":")).encode()
    reason = {408: "Request Timeout", 414: "URI Too Long", 429: "Too Many Requests"}.get(
        status,
        {431: "Request Header Fields Too Large", 503: "Service Unavailable"}.get(status, "Error"),
    )
    lines = [
        f"HTTP/1.1 {status} {reason}",
        "content-type: application/json",
        f"content-length: {len(content)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + content
