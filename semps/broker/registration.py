"""New stateless subscriptions registered in groups: one round trip to the workers and one
transaction (one fsync) for every request waiting, so concurrent subscribers, and the items
of a batch, share the fixed costs.

A request queues its pending subscriptions, either blocking (:meth:`Groups.run`: whoever
holds the broker's registration lock takes the whole queue) or with a callback
(:meth:`Groups.add`, how ``POST /subscriptions`` waits without holding a thread: a thread
of the queue's own takes the queue, group after group, until it stays empty, and waits
:data:`GATHER` at most for as many as its last group before taking fewer). A group is
registered by :func:`register_group`: ids in order, ``max_subscriptions`` counted over the
group's earlier items; the workers *check* the group, each its share of the distinct texts,
in parallel (each item accepted or refused on its own: what indexing it would raise); the
accepted ones are stored in one transaction with the ids' counter, remembered, and queued
for every worker to index (each reuses what it compiled checking its share), and only then
answered. Indexing runs after the answer, but a worker runs commands before any event
submitted after them, so a subscription answered is matched against every event published
after the answer; a worker started meanwhile loads it with the others.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

from semps.broker.contracts import SubscriptionStore
from semps.broker.pipeline import Pipeline
from semps.broker.worker_load import Packed
from semps.errors import MatcherError, SubscriptionLimitExceeded
from semps.limits import Limits
from semps.matcher.values import Subscription
from semps.pool import unpack_error

__all__ = ["Groups", "Pending", "check_apart", "register_group", "too_many"]


def too_many(owner: str, held: int) -> SubscriptionLimitExceeded:
    """The error of a subscription past its owner's ``max_subscriptions``."""
    msg = f"subscriber {owner!r} already holds {held} subscriptions, the limit (max_subscriptions)"
    return SubscriptionLimitExceeded(msg)


@dataclass(slots=True)
class Pending:
    """A new subscription waiting to be registered with others."""

    text: str
    kind: str
    owner: str
    name: str | None
    result: Subscription | BaseException | None = None
    failed: bool = False  # the whole group failed (its result says why)
    #: Called (on the registering thread) once ``result`` is set; ``None``: nobody waits.
    done: Callable[[], None] | None = None


#: Seconds a registering thread waits for the queue to hold as many subscriptions as its
#: last group before it takes fewer: clients answered together come back together, and a
#: group of the first few taken at once would leave the others a round trip to the workers
#: and a commit later (32 clients alternated groups of 31 and 1).
GATHER = 0.005


class Groups:
    """The queue of pending subscriptions; ``register`` registers one group (called with the
    registration ``lock`` held).

    A caller either registers its own in a group (:meth:`run`, blocking) or queues one and
    is called back (:meth:`add`): a thread of the queue's own then registers groups until
    the queue stays empty, so an answer waiting for its registration holds no thread."""

    def __init__(self, lock: threading.Lock, register: Callable[[list[Pending]], None]) -> None:
        self.lock, self.register = lock, register
        self._queue = threading.Condition()  # notified when a pending is queued
        self._queued: list[Pending] = []
        self._draining = False  # a thread of ours registers what is queued

    def run(self, mine: Sequence[Pending]) -> None:
        """Register ``mine`` in a group (this thread's or another's); each pending gets its
        result, ``failed`` when the workers or the store failed the whole group."""
        if not mine:
            return
        with self._queue:
            self._queued.extend(mine)  # together: one group takes all of them
        with self.lock:
            if mine[0].result is not None:  # another request's group took them
                return
            self._take_and_register()

    def add(self, mine: Pending) -> None:
        """Queue ``mine``; its ``done`` is called once its result is set (on another
        thread)."""
        with self._queue:
            self._queued.append(mine)
            self._queue.notify()
            if self._draining:
                return
            self._draining = True
        threading.Thread(target=self._drain, name="semps-register", daemon=True).start()

    def _drain(self) -> None:
        """Register groups until nothing is queued (for :data:`GATHER` seconds)."""
        last = 0
        try:
            while True:
                with self._queue:
                    if len(self._queued) < last:
                        self._queue.wait_for(partial(self._holds, last), GATHER)
                    if not self._queued:
                        self._draining = False
                        return
                with self.lock:
                    last = self._take_and_register()
        except BaseException:  # never left: whoever queues next starts another thread
            with self._queue:
                self._draining = False
            raise

    def _holds(self, count: int) -> bool:
        return len(self._queued) >= count

    def _take_and_register(self) -> int:
        """Register everything queued as one group (the lock held); how many it held."""
        with self._queue:
            group, self._queued = self._queued, []
        if not group:
            return 0
        try:
            self.register(group)
        except Exception as exc:  # the workers or the store: the whole group
            for pending in group:
                if pending.result is None:
                    pending.result = exc
                    pending.failed = True
        finally:
            for pending in group:
                if pending.result is None:
                    pending.result = MatcherError("registration failed")
                if pending.done is not None:
                    with suppress(Exception):  # the waiting side is gone (a closed loop)
                        pending.done()
        return len(group)


def register_group(
    group: list[Pending],
    *,
    owned: Counter[str],
    limits: Limits,
    store: SubscriptionStore,
    pipeline: Pipeline,
    remember: Callable[[Subscription], None],
) -> None:
    """Register a group (see the module docstring); ``owned`` counts each owner's
    subscriptions, ``remember`` adds a stored one to the broker's registry.

    Raises:
        Exception: the workers or the store failed (nothing of the group is registered).
    """
    held = Counter(owned)
    wanted: list[Pending] = []
    for p in group:
        if held[p.owner] >= limits.max_subscriptions:
            p.result = too_many(p.owner, held[p.owner])
            continue
        held[p.owner] += 1
        wanted.append(p)
    if not wanted:
        return
    # Kept with the subscriptions (or alone, when all are refused) before any is answered.
    ids = store.reserve_ids("sub-", len(wanted))
    accepted = [
        (p, Subscription(sub_id, p.kind, p.text, p.owner, p.name))
        for p, sub_id in zip(wanted, ids, strict=True)
    ]
    outcomes = check_apart(pipeline, [sub for _, sub in accepted])
    good: list[tuple[Pending, Subscription]] = []
    for (p, sub), outcome in zip(accepted, outcomes, strict=True):
        if outcome is None:
            good.append((p, sub))
        else:
            p.result = unpack_error(outcome)
    if not good:
        store.keep_ids()  # a refusal may name its id: never issued again
        return
    subs = [sub for _, sub in good]
    try:
        store.put_subscriptions(subs)  # nothing is indexed yet: a failure leaves nothing
    except Exception:
        with suppress(Exception):
            store.keep_ids()  # for the refusals answered
        raise
    for sub in subs:
        remember(sub)  # before indexing: a worker started from now on loads it
    # Every worker indexes them before any event submitted after this (commands go first).
    pipeline.command(("index", Packed.of(subs)), wait=False)  # columns: pickled once
    for p, sub in good:
        p.result = sub


#: Which worker checks a group's first text (turns: single registrations spread).
_turns = itertools.count()


def check_apart(pipeline: Pipeline, subs: list[Subscription]) -> list[Any]:
    """Check ``subs`` on the workers, each its share of their distinct texts: per
    subscription ``None`` or its packed error (the same for every subscription of a
    text; :meth:`semps.broker.worker.Worker.check`).

    Raises:
        Exception: a worker failed or stopped (nothing was checked).
    """
    n = pipeline.workers
    first = next(_turns)
    where = {text: (first + i) % n for i, text in enumerate(dict.fromkeys(s.text for s in subs))}
    shares: list[list[Subscription]] = [[] for _ in range(n)]
    for sub in subs:
        shares[where[sub.text]].append(sub)
    # As columns: pickling Subscription objects cost the main process 2.4 us each.
    replies = pipeline.scatter([("check", Packed.of(s)) if s else None for s in shares])
    found: dict[str, Any] = {}
    for share, (status, value) in zip(shares, replies, strict=True):
        if status == "error":
            raise unpack_error(value)
        if not share:
            continue
        if value is None:
            msg = "a matching worker stopped while checking new subscriptions"
            raise MatcherError(msg)
        for sub, outcome in zip(share, value, strict=True):
            found[sub.id] = outcome
    return [found[sub.id] for sub in subs]
