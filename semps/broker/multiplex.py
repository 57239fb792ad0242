"""One inbox for a stream that carries many subscriptions (``GET /notifications``, the MQTT
bridge's outbound side): the fan-out hands it each followed subscription's committed
notifications through a :class:`Tap` per subscription.

Like a :class:`~semps.broker.fanout.Listener`, the inbox is bounded (notifications and
characters): past either bound it is emptied and every subscription whose notifications it
dropped is marked *stale*, so the stream reads those from the store (the log) from its
position. A plain wake-up (:meth:`Tap.poke`) marks one subscription stale. What a stream
holds is therefore bounded whatever the rate of events or the number of subscriptions it
carries: the inbox, one set of subscription ids, one position per subscription.

Everything here runs on the server's event loop.

Example:
    >>> import asyncio
    >>> from semps.broker.fanout import Fanout
    >>> async def demo() -> list[tuple[str, int, str]]:
    ...     fanout, inbox = Fanout(), MultiInbox(capacity=8)
    ...     for sub in ("sub-1", "sub-2"):
    ...         fanout.attach(inbox.tap(sub))
    ...     inbox.stale.clear()  # (a stream would replay the store first)
    ...     fanout.publish([("sub-1", 1, "a"), ("sub-3", 1, "b"), ("sub-2", 4, "c")])
    ...     return inbox.take()
    >>> asyncio.run(demo())
    [('sub-1', 1, 'a'), ('sub-2', 4, 'c')]
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass

from semps.broker.contracts import Note
from semps.broker.fanout import DEFAULT_INBOX, DEFAULT_INBOX_CHARS

__all__ = ["MultiInbox", "Tap"]


@dataclass(frozen=True, slots=True, eq=False)
class Tap:
    """One subscription's way into a :class:`MultiInbox` (what the fan-out holds)."""

    subscription: str
    inbox: MultiInbox

    def put(self, seq: int, text: str) -> None:
        self.inbox.put(self.subscription, seq, text)

    def poke(self) -> None:
        self.inbox.poke(self.subscription)


class MultiInbox:
    """Recent notifications of several subscriptions, bounded, with the set of those that
    must be read from the store.

    Attributes:
        stale: the subscriptions whose stream must read the store (a new tap's starts
            there: it has not replayed yet); the stream removes one once it has caught up.
    """

    def __init__(self, capacity: int = DEFAULT_INBOX, chars: int = DEFAULT_INBOX_CHARS) -> None:
        self.capacity = capacity
        self.chars = chars
        self.stale: set[str] = set()
        self._notes: deque[Note] = deque()
        self._held = 0
        self._ready = asyncio.Event()

    def tap(self, subscription: str) -> Tap:
        """A tap for ``subscription``, which starts stale (attach it to the fan-out before
        reading the store, so nothing falls between)."""
        self.stale.add(subscription)
        self._ready.set()
        return Tap(subscription, self)

    def put(self, subscription: str, seq: int, text: str) -> None:
        """Queue one notification; past a bound, drop what is held and mark its
        subscriptions (and this one) stale."""
        if len(self._notes) >= self.capacity or self._held + len(text) > self.chars:
            self.stale.update(sub for sub, _, _ in self._notes)
            self.stale.add(subscription)
            self._notes.clear()
            self._held = 0
        else:
            self._notes.append((subscription, seq, text))
            self._held += len(text)
        self._ready.set()

    def poke(self, subscription: str) -> None:
        """``subscription`` has stored notifications that did not come through :meth:`put`."""
        self.stale.add(subscription)
        self._ready.set()

    def take(self) -> list[Note]:
        """Everything queued, oldest first, and an empty inbox."""
        notes = list(self._notes)
        self._notes.clear()
        self._held = 0
        self._ready.clear()
        return notes

    def pending(self) -> bool:
        """Whether anything is queued or stale."""
        return bool(self._notes or self.stale)

    def wake(self) -> None:
        """Make a waiting :meth:`wait` return (the stream's set changed)."""
        self._ready.set()

    async def wait(self, timeout: float) -> bool:
        """Wait until something arrives or ``timeout`` seconds pass; ``True`` if it did."""
        if self.pending():
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        self._ready.clear()
        return self.pending()
