"""In-memory fan-out of committed notifications to the live streams (SSE, WebSocket).

The store is the log: a stream replays it in pages from the client's position. A stream that
has caught up waits on its :class:`Listener`, and :meth:`Fanout.publish` hands it each new
notification from memory (no database read per event). A listener's inbox is bounded: when
it overflows (the client reads too slowly) it is emptied and marked *stale*, and the stream
goes back to reading pages from the store from its last seq. A seq gap in the inbox, or a
plain :meth:`Fanout.wake` (publishers that do not pass the notifications), also sends it
back to the store, so nothing is skipped and memory per stream stays bounded.

All state lives on the server's event loop; :meth:`Fanout.publish` and :meth:`Fanout.wake`
may be called from any thread (they hop onto the loop when needed) and never block.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from typing import Protocol

from semps.broker.contracts import Channel, Note

__all__ = ["DEFAULT_INBOX", "DEFAULT_INBOX_CHARS", "Fanout", "Inbox", "Listener", "Note"]

#: Notifications a listener may hold before it falls back to reading the store. Above the
#: notifications one commit may bring a subscription that every event matches (a commit
#: takes a worker's batch of up to 256 events, often two): with 256, such a stream fell
#: back to the store at every commit, and its reads took 10% of the server's main process
#: in ``bench/service.py``'s batches.
DEFAULT_INBOX = 2048
#: Text (characters) a listener may hold before it falls back to reading the store, so a
#: stream's memory stays bounded by this whatever the notifications' size.
DEFAULT_INBOX_CHARS = 1 << 20


class Inbox(Protocol):
    """What the fan-out hands one subscription's notifications to: a :class:`Listener`, or
    one subscription's tap into a multiplexed stream's inbox
    (:class:`semps.broker.multiplex.Tap`). ``put`` and ``poke`` run on the event loop and
    never block."""

    @property
    def subscription(self) -> str: ...

    def put(self, seq: int, text: str) -> None: ...

    def poke(self) -> None: ...


class Listener:
    """One open stream's inbox: recent notifications of one subscription, bounded.

    Attributes:
        subscription: the subscription it follows.
        stale: ``True`` when the stream must read the store (it starts that way: it has not
            replayed yet); the stream clears it before reading.
    """

    def __init__(
        self, subscription: str, capacity: int = DEFAULT_INBOX, chars: int = DEFAULT_INBOX_CHARS
    ) -> None:
        self.subscription = subscription
        self.capacity = capacity
        self.chars = chars
        self.stale = True
        self._inbox: deque[tuple[int, str]] = deque()
        self._held = 0  # characters in the inbox
        self._ready = asyncio.Event()

    def put(self, seq: int, text: str) -> None:
        """Queue one notification; an overflow (``capacity`` notifications or ``chars``
        characters) empties the inbox and marks it stale."""
        if len(self._inbox) >= self.capacity or self._held + len(text) > self.chars:
            self._inbox.clear()
            self._held = 0
            self.stale = True
        else:
            self._inbox.append((seq, text))
            self._held += len(text)
        self._ready.set()

    def poke(self) -> None:
        """Something was stored that did not come through :meth:`put`: read the store."""
        self.stale = True
        self._ready.set()

    def take(self) -> list[tuple[int, str]]:
        """Everything queued, oldest first, and an empty inbox."""
        items = list(self._inbox)
        self._inbox.clear()
        self._held = 0
        self._ready.clear()
        return items

    async def wait(self, timeout: float) -> bool:
        """Wait until something arrives or ``timeout`` seconds pass; ``True`` if it did."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self._ready.is_set()


class Fanout(Channel):
    """Live streams by subscription, fed from memory after each commit: the live-stream
    :class:`~semps.broker.contracts.Channel` (SSE and WebSocket read its listeners).

    Example:
        >>> async def demo() -> list[tuple[int, str]]:
        ...     fanout = Fanout()
        ...     listener = fanout.listen("sub-1")
        ...     fanout.publish([("sub-1", 1, '{"id": 1}'), ("sub-2", 1, '{"id": 1}')])
        ...     return listener.take()
        >>> asyncio.run(demo())
        [(1, '{"id": 1}')]
    """

    def __init__(self, capacity: int = DEFAULT_INBOX, chars: int = DEFAULT_INBOX_CHARS) -> None:
        self.capacity, self.chars = capacity, chars
        self._listeners: dict[str, set[Inbox]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def listen(self, subscription: str) -> Listener:
        """A new listener for ``subscription`` (call on the event loop, before replaying)."""
        listener = Listener(subscription, self.capacity, self.chars)
        self.attach(listener)
        return listener

    def attach(self, inbox: Inbox) -> None:
        """Hand ``inbox`` its subscription's notifications from now on (call on the event
        loop, before replaying)."""
        self._loop = asyncio.get_running_loop()
        self._listeners.setdefault(inbox.subscription, set()).add(inbox)

    def unlisten(self, listener: Inbox) -> None:
        """Forget ``listener`` (its stream closed)."""
        group = self._listeners.get(listener.subscription)
        if group is not None:
            group.discard(listener)
            if not group:
                del self._listeners[listener.subscription]

    def streams(self, subscription: str) -> int:
        """How many streams follow ``subscription``."""
        return len(self._listeners.get(subscription, ()))

    def publish(self, notes: Sequence[Note]) -> None:
        """Hand committed notifications, in seq order per subscription, to the listeners."""
        if self._hop(self.publish, notes):
            return
        for subscription, seq, text in notes:
            for listener in self._listeners.get(subscription, ()):
                listener.put(seq, text)

    def wake(self) -> None:
        """Notifications were committed without being passed here: every stream rereads the
        store from its position."""
        if self._hop(self.wake):
            return
        for group in self._listeners.values():
            for listener in group:
                listener.poke()

    def _hop(self, method: object, *args: object) -> bool:
        """Re-schedule ``method(*args)`` on the loop if called from elsewhere; ``True`` if
        it was (or if no stream ever listened, so there is nothing to do)."""
        loop = self._loop
        if loop is None:
            return True
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return False
        with contextlib.suppress(RuntimeError):  # the loop is closed: no stream is left
            loop.call_soon_threadsafe(method, *args)  # type: ignore[arg-type]
        return True
