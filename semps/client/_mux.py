"""Reading a multiplexed notification stream (``GET /notifications``,
``WS /notifications/ws``): the position the sync and async clients keep, and how each frame
or message is read.

The server hands out the stream's position as an opaque cursor (an SSE event id, a WebSocket
``cursor`` message); the client keeps the last one and reconnects with it. A cursor lags the
notifications a little (the server sends one at most every quarter of a second while busy),
so a resumed stream may send some notifications again: the client remembers each
subscription's last seq and yields none twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from semps.client._models import Notification
from semps.client._stream import SSEDecoder, StreamPosition
from semps.errors import AuthError, ClientError, NotFound, SempsError

__all__ = ["MuxPosition", "MuxSSE", "mux_message", "mux_params"]


@dataclass
class MuxPosition(StreamPosition):
    """Where a multiplexed stream is: the server's last cursor and each subscription's last
    seq yielded (read :attr:`cursor` to resume another time with ``cursor=``)."""

    cursor: str | None = None
    seqs: dict[str, int] = field(default_factory=dict)

    def take(self, doc: object) -> Notification | None:
        """The notification of one payload, or ``None`` for one already yielded."""
        note = Notification.from_json(doc)
        if note.seq <= self.seqs.get(note.subscription, 0):
            return None
        self.seqs[note.subscription] = note.seq
        self.failures = 0
        return note


def mux_params(subscriptions: Iterable[str] | None) -> dict[str, str]:
    """The query of a multiplexed stream carrying ``subscriptions`` (``None``: all)."""
    return {} if subscriptions is None else {"subscriptions": ",".join(subscriptions)}


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        msg = f"a stream message that is not JSON: {text[:200]!r}"
        raise ClientError(msg) from exc


def _ended(body: Any) -> SempsError:
    """The error an ``end`` event or message carries."""
    body = body if isinstance(body, dict) else {}
    detail = str(body.get("detail", "the server ended the stream"))
    code = body.get("error")
    if code == "unauthorized":
        return AuthError(detail)
    if code == "not_found":
        return NotFound(detail)
    return ClientError(detail or "the server ended the stream")


class MuxSSE:
    """A multiplexed SSE stream's lines as notifications; an ``end`` event raises its
    error."""

    def __init__(self, pos: MuxPosition) -> None:
        self.pos, self._decoder = pos, SSEDecoder()

    def feed(self, line: str) -> Notification | None:
        """The notification a line completes, if any."""
        self.pos.alive()
        event = self._decoder.feed(line)
        if event is None:
            return None
        if event.event == "end":
            raise _ended(_parse(event.data))
        if event.event != "notification":
            return None
        note = self.pos.take(_parse(event.data))
        if event.id:
            self.pos.cursor = event.id
        return note


def mux_message(pos: MuxPosition, text: str) -> Notification | None:
    """One WebSocket message: a notification (``None`` if already yielded), a cursor kept,
    an error raised; anything else is ignored."""
    doc = _parse(text)
    kind = doc.get("type") if isinstance(doc, dict) else None
    if kind == "notification":
        return pos.take(doc.get("notification"))
    if kind == "cursor" and isinstance(doc.get("cursor"), str):
        pos.cursor = doc["cursor"]
    elif kind == "error":
        raise _ended(doc)
    return None
