"""Multiplexed notification streams: one stream carrying many subscriptions' notifications
(``GET /notifications`` over SSE, ``WS /notifications/ws``).

A :class:`MuxStream` follows a set of subscriptions, each from its own position (the last
seq delivered): it attaches a :class:`~semps.broker.multiplex.Tap` per subscription to the
fan-out, reads the store (the log) for the subscriptions its inbox marks stale (a new one,
one that fell behind, one whose notifications arrived with a gap), a page each, round robin
and several in one thread hop, and otherwise passes on what the fan-out hands it. Each
subscription's notifications go out in seq order with no gaps; subscriptions are not ordered
against each other. What a stream holds is bounded: its inbox
(:class:`~semps.broker.multiplex.MultiInbox`), at most :data:`HOP_BYTES` of store pages, and
one position per subscription (at most ``max_stream_subscriptions``).

The set is either the principal's own subscriptions ("all": a subscription registered later
joins from its start, a deleted one leaves) or a chosen one, which WebSocket messages change
on the open connection. Every :data:`RECHECK` seconds the stream checks that its token is
still good (a revoked or expired one ends it with the error) and that its subscriptions
still exist (a deleted one leaves the set, and the client is told).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field

from semps.api.positions import encode_positions
from semps.api.streams import PAGE, PAGE_BYTES, Lease, Streams
from semps.broker.contracts import Note
from semps.broker.multiplex import MultiInbox, Tap
from semps.errors import SempsError, SubscriptionLimitExceeded

__all__ = [
    "CURSOR_EVERY",
    "HOP_BYTES",
    "HOP_SUBSCRIPTIONS",
    "RECHECK",
    "Changed",
    "Item",
    "Multiplexer",
    "MuxStream",
    "Opening",
    "Reply",
    "cancel_all",
]

#: Seconds between two checks of a stream's token and subscriptions.
RECHECK = 1.0
#: Subscriptions whose store pages one thread hop reads, and the most text it holds.
HOP_SUBSCRIPTIONS = 256
HOP_BYTES = PAGE_BYTES
#: A cursor goes out at least this many seconds after the last one while notifications
#: keep coming, and at once when the stream has caught up (so a busy stream with thousands
#: of subscriptions does not send its whole position with every page).
CURSOR_EVERY = 0.25

#: The stream's check of its token: the error that ends it, or ``None``.
Check = Callable[[], SempsError | None]


@dataclass(frozen=True, slots=True)
class Changed:
    """The stream's set changed: subscriptions added, or removed with the reason."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    reason: SempsError | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer to a client's message, sent in line with the notifications."""

    body: dict[str, object]


#: What a stream yields: a page of notifications, a change of its set, a reply, the error
#: that ends it, or ``[]`` when it was idle for its keep-alive interval.
Item = list[Note] | Changed | Reply | SempsError


@dataclass(frozen=True, slots=True)
class Opening:
    """What a stream is opened with besides its positions: the ``roster`` of the
    principal's subscriptions (``None``: a chosen set), whether a subscription still
    ``exists``, the token's ``check`` and the ``lease`` on the principal's streams."""

    roster: Callable[[], Iterable[str]] | None
    exists: Callable[[str], bool]
    check: Check
    lease: Lease


@dataclass(eq=False)
class Multiplexer:
    """What every multiplexed stream of one application shares: the single streams' state
    (the store, the fan-out, the per-subscriber cap), the cursor key, the store readers and
    the limit on subscriptions per stream."""

    streams: Streams
    key: bytes = field(repr=False)
    max_subscriptions: int = 10_000
    readers: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(2))

    def open(
        self,
        subject: str,
        positions: dict[str, int],
        *,
        roster: Callable[[], Iterable[str]] | None,
        exists: Callable[[str], bool],
        check: Check,
        lease: Lease,
    ) -> MuxStream:
        """A stream for ``subject`` over ``positions`` (its set when ``roster`` is
        ``None``; else the roster's subscriptions, positions taken from it where given).

        Raises:
            SubscriptionLimitExceeded: more subscriptions than one stream may carry.
        """
        return MuxStream(self, subject, positions, Opening(roster, exists, check, lease))

    def cursor(self, positions: dict[str, int], subject: str) -> str:
        """The signed cursor of ``positions``."""
        return encode_positions(positions, self.key, subject)


class MuxStream:
    """One multiplexed stream (see the module's docstring); call :meth:`close` when done
    (:meth:`items` does, when it ends)."""

    def __init__(
        self,
        mux: Multiplexer,
        subject: str,
        positions: dict[str, int],
        opening: Opening,
    ) -> None:
        self.mux, self.subject, self.opening = mux, subject, opening
        roster = self.roster = opening.roster  # None from the first change of the set on
        streams = mux.streams
        self.inbox = MultiInbox(streams.fanout.capacity, streams.fanout.chars)
        self.positions: dict[str, int] = {}
        self._taps: dict[str, Tap] = {}
        self._queue: deque[str] = deque()  # stale subscriptions, in the order read
        self._queued: set[str] = set()
        self._changes: list[Changed | Reply] = []
        self._cursor_at = 0.0
        self._closed = False
        wanted = list(roster()) if roster is not None else list(positions)
        self.check_size(len(wanted))
        for sub in wanted:
            self._follow(sub, positions.get(sub, 0))

    # -- the set ---------------------------------------------------------------------------

    def check_size(self, count: int) -> None:
        """Raises :class:`SubscriptionLimitExceeded` if ``count`` subscriptions are more
        than one stream may carry."""
        limit = self.mux.max_subscriptions
        if count > limit:
            msg = (
                f"a stream carries at most {limit} subscriptions, not {count} "
                "(max_stream_subscriptions; name them with ?subscriptions=, or open several)"
            )
            raise SubscriptionLimitExceeded(msg)

    def _follow(self, sub: str, after: int) -> None:
        if sub in self._taps:
            return
        self.positions[sub] = after
        tap = self.inbox.tap(sub)  # stale: it replays the store first
        self._taps[sub] = tap
        self.mux.streams.fanout.attach(tap)

    def _unfollow(self, sub: str) -> None:
        tap = self._taps.pop(sub, None)
        if tap is not None:
            self.mux.streams.fanout.unlisten(tap)
        self.positions.pop(sub, None)
        self.inbox.stale.discard(sub)

    def add(self, positions: dict[str, int]) -> tuple[str, ...]:
        """Follow more subscriptions (each from its position; one already followed keeps
        its own); the stream now carries a chosen set. Returns those added.

        Raises:
            SubscriptionLimitExceeded: the set would pass the limit (nothing is added).
        """
        new = [sub for sub in positions if sub not in self._taps]
        self.check_size(len(self._taps) + len(new))
        self.roster = None
        for sub in new:
            self._follow(sub, positions[sub])
        self.inbox.wake()
        return tuple(new)

    def remove(self, subs: Iterable[str]) -> tuple[str, ...]:
        """Stop following ``subs``; the stream now carries a chosen set. Returns those
        that were followed."""
        self.roster = None
        gone = tuple(sub for sub in subs if sub in self._taps)
        for sub in gone:
            self._unfollow(sub)
        return gone

    def _refresh(self) -> None:
        """The roster's new subscriptions join from their start; deleted ones leave."""
        if self.roster is not None:
            wanted = set(self.roster())
            gone = [sub for sub in self._taps if sub not in wanted]
            new = [sub for sub in wanted if sub not in self._taps]
            new = new[: max(0, self.mux.max_subscriptions - (len(self._taps) - len(gone)))]
            for sub in new:
                self._follow(sub, 0)
            if new:
                self._changes.append(Changed(added=tuple(sorted(new))))
        else:
            gone = [sub for sub in self._taps if not self.opening.exists(sub)]
        for sub in gone:
            self._unfollow(sub)
        if gone:
            reason = SempsError("the subscription was deleted")
            self._changes.append(Changed(removed=tuple(sorted(gone)), reason=reason))

    def reply(self, body: dict[str, object]) -> None:
        """Send ``body`` in line with the notifications (a WebSocket's answers)."""
        self._changes.append(Reply(body))
        self.inbox.wake()

    # -- the cursor ------------------------------------------------------------------------

    def cursor(self) -> str:
        """The stream's position now, signed."""
        return self.mux.cursor(self.positions, self.subject)

    def cursor_due(self, now: float) -> bool:
        """Whether the page just sent should carry the cursor (see :data:`CURSOR_EVERY`);
        if so, counts it as sent."""
        if now - self._cursor_at >= CURSOR_EVERY or not self.inbox.pending():
            self._cursor_at = now
            return True
        return False

    # -- following -------------------------------------------------------------------------

    async def items(self, idle: float) -> AsyncGenerator[Item, None]:
        """Pages of notifications as they are stored and committed, changes of the set,
        ``[]`` after ``idle`` quiet seconds; ends with the error that ends the stream, or
        when the server stops."""
        loop = asyncio.get_running_loop()
        checked = quiet = loop.time()
        streams = self.mux.streams
        try:
            while not streams.closing:
                if loop.time() - checked >= RECHECK:
                    checked = loop.time()
                    problem = self.opening.check()
                    if problem is not None:
                        yield problem
                        return
                    self._refresh()
                while self._changes:
                    yield self._changes.pop(0)
                page = self._fresh()
                if not page and self.inbox.stale:
                    page = await self._read_stale()
                if page:
                    quiet = loop.time()
                    yield page
                    continue
                if self.inbox.stale:
                    continue
                wait = min(RECHECK - (loop.time() - checked), idle - (loop.time() - quiet))
                await self.inbox.wait(max(0.0, wait))
                if not self.inbox.pending() and loop.time() - quiet >= idle:
                    quiet = loop.time()
                    yield []
        finally:
            self.close()

    def close(self) -> None:
        """Detach from the fan-out and return the stream's slot (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for sub in list(self._taps):
            self._unfollow(sub)
        self.opening.lease.release()

    def _fresh(self) -> list[Note]:
        """What the inbox holds that follows on each subscription's position; a gap marks
        the subscription stale (the store has what is missing)."""
        page: list[Note] = []
        positions, stale = self.positions, self.inbox.stale
        for sub, seq, text in self.inbox.take():
            last = positions.get(sub)
            if last is None or seq <= last or sub in stale:
                continue
            if seq != last + 1:
                stale.add(sub)
                continue
            positions[sub] = seq
            page.append((sub, seq, text))
        return page

    async def _read_stale(self) -> list[Note]:
        """One store page of each of up to :data:`HOP_SUBSCRIPTIONS` stale subscriptions,
        round robin; a subscription with nothing more stored is no longer stale."""
        stale, queue = self.inbox.stale, self._queue
        for sub in stale - self._queued:
            queue.append(sub)
            self._queued.add(sub)
        batch: list[tuple[str, int]] = []
        while queue and len(batch) < HOP_SUBSCRIPTIONS:
            sub = queue.popleft()
            self._queued.discard(sub)
            if sub in stale and sub in self.positions:
                batch.append((sub, self.positions[sub]))
        if not batch:
            return []
        for sub, _ in batch:
            stale.discard(sub)  # cleared before the read: what arrives meanwhile counts
        async with self.mux.readers:
            pages = await asyncio.to_thread(self._read, batch)
        notes: list[Note] = []
        for sub, after in batch:
            page = pages.get(sub)
            if page is None:  # not read this hop: still stale
                stale.add(sub)
                continue
            if not page or sub not in self.positions or self.positions[sub] != after:
                continue  # caught up (or moved on meanwhile: the next gap says so)
            stale.add(sub)  # more may be stored: read until a page comes back empty
            self.positions[sub] = page[-1][0]
            notes.extend((sub, seq, text) for seq, text in page)
        return notes

    def _read(self, batch: list[tuple[str, int]]) -> dict[str, list[tuple[int, str]]]:
        """Store pages for ``batch`` (in a worker thread), at most :data:`HOP_BYTES` of
        text in all."""
        store, pages, held = self.mux.streams.store, {}, 0
        for sub, after in batch:
            if held >= HOP_BYTES:
                break
            page = store.notification_texts_after(sub, after, PAGE, HOP_BYTES - held)
            pages[sub] = page
            held += sum(len(text) for _, text in page)
        return pages


async def cancel_all(*tasks: asyncio.Task[None]) -> None:
    """Cancel ``tasks`` and wait for them."""
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        await asyncio.gather(*tasks, return_exceptions=True)
