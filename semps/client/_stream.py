"""Reading a subscription's notification stream: Server-Sent Events decoding, the resume
position, and the retry policy the sync and async clients share.

A stream resumes where it stopped: the client remembers the last ``seq`` it yielded and
reconnects with ``Last-Event-ID`` (SSE) or ``?after=`` (WebSocket), so across disconnects
no notification is lost, and one the server sends again is skipped, never yielded twice.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from semps.client._models import Notification
from semps.errors import ClientError, SempsError

__all__ = ["HEALTHY", "Retry", "SSEDecoder", "SSEEvent", "SSENotifications", "StreamPosition"]

#: Seconds a connection must stay open to count as a working one when it drops.
HEALTHY = 30.0


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched Server-Sent Event."""

    id: str | None
    event: str
    data: str


@dataclass
class SSEDecoder:
    """Lines of a ``text/event-stream`` in, events out (the WHATWG rules that matter here:
    ``id``, ``event`` and multi-line ``data`` fields, comments, dispatch on a blank line).

    Example:
        >>> d = SSEDecoder()
        >>> [d.feed(x) for x in ["id: 3", "event: notification", 'data: {"a": 1}', ""]][-1]
        SSEEvent(id='3', event='notification', data='{"a": 1}')
        >>> d.feed(": keep-alive") is None
        True
    """

    _id: str | None = None
    _event: str = ""
    _data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> SSEEvent | None:
        """The event a blank line completes, else ``None``."""
        line = line.rstrip("\r\n")
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = SSEEvent(self._id, self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


@dataclass(frozen=True)
class Retry:
    """How a notification stream reconnects: at most ``attempts`` reconnections in a row
    without a notification in between, waiting ``backoff`` seconds, doubled after each
    failure up to ``max_backoff``.

    Example:
        >>> [Retry(attempts=5, backoff=0.5, max_backoff=3).delay(n) for n in range(1, 6)]
        [0.5, 1.0, 2.0, 3, 3]
    """

    attempts: int = 8
    backoff: float = 0.25
    max_backoff: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 0 or self.backoff < 0 or self.max_backoff < 0:
            msg = f"retry settings must not be negative: {self!r}"
            raise ClientError(msg)

    def delay(self, failure: int) -> float:
        """Seconds to wait before reconnecting after the ``failure``-th failure in a row."""
        return min(self.backoff * 2.0 ** (failure - 1), self.max_backoff)


@dataclass
class StreamPosition:
    """Where a stream is (the last ``seq`` yielded) and how many reconnections in a row
    have failed. A connection that delivers anything (a notification, an SSE keep-alive)
    was a working one and starts the count again, so a quiet stream survives any number of
    drops spread over time, while a server that drops every connection at once is given up
    after :attr:`Retry.attempts`."""

    after: int = 0
    failures: int = 0
    since: float | None = None

    def alive(self) -> None:
        """The connection delivered something."""
        self.failures = 0

    def connected(self) -> None:
        """A connection is open; one that stays open :data:`HEALTHY` seconds counts as a
        working one when it drops (a WebSocket's keep-alives are pings the client does not
        see)."""
        self.since = time.monotonic()

    def accept(self, data: str, event_id: str | None = None) -> Notification | None:
        """The notification in one SSE event or WebSocket message, or ``None`` for one
        already yielded (a resumed stream may send it again)."""
        try:
            doc = json.loads(data)
        except ValueError as exc:
            msg = f"a notification that is not JSON: {data[:200]!r}"
            raise ClientError(msg) from exc
        seq = int(event_id) if event_id is not None and event_id.isdigit() else None
        note = Notification.from_json(doc, seq)
        if note.seq <= self.after:
            return None
        self.after, self.failures = note.seq, 0
        return note

    def failed(self, retry: Retry, url: str, cause: BaseException | str) -> float:
        """Count one failed or lost connection; the delay before the next. When the retries
        are spent, raises ``cause`` if it is the server's refusal (``TooManyRequests``),
        else :class:`ClientError`."""
        if self.since is not None and time.monotonic() - self.since >= HEALTHY:
            self.failures = 0
        self.since = None
        self.failures += 1
        if self.failures <= retry.attempts:
            return retry.delay(self.failures)
        if isinstance(cause, SempsError):
            raise cause
        msg = (
            f"lost the notification stream {url} after {retry.attempts} reconnections "
            f"(last: {cause}); resume with after={self.after}"
        )
        if isinstance(cause, BaseException):
            raise ClientError(msg) from cause
        raise ClientError(msg)


class SSENotifications:
    """An SSE stream's lines as notifications: the ones not yielded before, keep-alives
    counted as signs of life."""

    def __init__(self, pos: StreamPosition) -> None:
        self.pos, self._decoder = pos, SSEDecoder()

    def feed(self, line: str) -> Notification | None:
        """The notification a line completes, if any."""
        self.pos.alive()
        event = self._decoder.feed(line)
        if event is None or event.event != "notification":
            return None
        return self.pos.accept(event.data, event.id)
