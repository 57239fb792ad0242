"""The event pipeline: accept -> match in batches (worker processes) -> commit in order.

Publishers' events wait in one queue. Each matching worker (:mod:`semps.broker.worker`, a
process with its own copy of every stateless matcher's index) is driven by a thread here
that takes *whatever is waiting* (up to ``max_batch`` events) as one numbered batch, so
under load batches grow and per-event overheads shrink, and when idle an event goes alone.
An event over :data:`HEAVY` bytes is always a batch of its own.
Finished batches are handed to the commit function, several at a time when they queue up
(one transaction, one fsync for the group): strictly in batch order while a stateful
matcher (composite detection) holds subscriptions, since it must see events in the order
they were taken, and as soon as each is matched otherwise, so one slow batch delays no other.

Commands (add, replace, remove a subscription) go to every worker, ahead of batches not yet
taken, and return once every worker has applied them; the ontology snapshot is sent to a
worker before its next batch whenever its version changed.

The watchdog (:meth:`semps.pool.Worker.call`): while a worker matches, its thread polls
the worker's shared progress. When it has not moved for ``match_timeout`` seconds (or the
process died), the worker is killed and the culprit named: the subscription being verified
(``on_overrun`` suspends it), or the event being read (it fails with
:class:`~semps.errors.EventLimitExceeded`). A fresh worker is loaded and the batch runs
again without the culprit, so every other event is still matched and acknowledged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semps import pool
from semps.broker.worker import MATCHING, READING, start_worker
from semps.errors import EventLimitExceeded, MatcherError
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion

_log = logging.getLogger("semps.pipeline")
#: Events larger than this (bytes) are matched in a batch of their own: their cost (reading,
#: closing) grows with their size, and no lighter event should wait for it.
HEAVY = 32 * 1024


@dataclass(slots=True)
class Item:
    """One accepted event waiting to be matched; ``done`` is the broker's to use."""

    event_id: str
    media_type: str
    body: bytes
    received: float
    done: Any = None
    #: Who published it (a token's subject; empty: unknown).
    publisher: str = ""


#: A finished batch: its items and one outcome per item (see :mod:`semps.broker.worker`).
Batch = tuple[list[Item], list[tuple[Any, ...]]]


@dataclass
class _Command:
    request: tuple[Any, ...]
    pending: int
    replies: list[tuple[Any, ...]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class _Slot:
    """One worker process and the thread that drives it."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.commands: deque[_Command] = deque()
        self.worker: pool.Worker | None = None
        self.version = -1
        self.ready = False
        self.thread: threading.Thread | None = None


@dataclass(slots=True)
class _Failed:
    """A batch the worker answered with an error that names no event."""

    error: Exception


class Pipeline:
    """Batches events through matching workers and commits them in order.

    Args:
        load: the stateless subscriptions a fresh worker indexes (the broker's registry).
        expansion: the current ontology snapshot.
        commit: called on the commit thread with consecutive finished batches, in order.
        on_overrun: called with (subscription id, reason) when a subscription overran.
        ordered: whether batches must commit in the order they were taken (stateful
            matchers hold subscriptions); otherwise each commits as soon as it is matched,
            so a slow batch holds up no other.
        workers: matching processes.
        limits: passed to the workers (event size) and read for ``match_timeout``.
        max_batch: events per batch at most.
        snapshots: the folder of the matchers' snapshots the workers load with and rewrite
            when stale (:meth:`~semps.matcher.base.Matcher.persisted`); ``None``: none.
    """

    def __init__(
        self,
        *,
        load: Callable[[], list[Subscription]],
        expansion: Callable[[], Expansion],
        commit: Callable[[list[Batch]], None],
        on_overrun: Callable[[str, str], None],
        ordered: Callable[[], bool] = lambda: True,
        workers: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        max_batch: int = 256,
        snapshots: Path | None = None,
    ) -> None:
        if workers < 1:
            msg = f"the pipeline needs at least one worker, not {workers}"
            raise ValueError(msg)
        self._load, self._expansion = load, expansion
        self._commit, self._on_overrun = commit, on_overrun
        self.limits, self.max_batch = limits, max_batch
        self._cond = threading.Condition()
        self._pending: deque[Item] = deque()
        self._next_batch = 0
        self._done: dict[int, Batch] = {}
        self._commit_next = 0
        self._ahead: set[int] = set()  # batches committed out of order
        self._ordered = ordered
        self._done_cond = threading.Condition()
        self.snapshots = snapshots
        self._running = True
        self.respawns = 0
        self._slots = [_Slot(i) for i in range(workers)]
        for slot in self._slots:
            slot.thread = threading.Thread(
                target=self._drive, args=(slot,), name=f"semps-match-{slot.number}", daemon=True
            )
            slot.thread.start()
        self._committer = threading.Thread(target=self._commit_loop, name="semps-commit")
        self._committer.daemon = True
        self._committer.start()

    # -- the broker's side -----------------------------------------------------------------

    def submit(self, items: Sequence[Item]) -> None:
        """Queue accepted events (never blocks)."""
        with self._cond:
            self._pending.extend(items)
            self._cond.notify()  # one idle worker; it wakes the next if it leaves some

    @property
    def depth(self) -> int:
        """Events waiting to be taken by a worker."""
        return len(self._pending)

    def command(self, request: tuple[Any, ...], wait: bool = True) -> list[tuple[Any, ...]]:
        """Send ``request`` to every worker ahead of queued batches; with ``wait``, block
        until all applied it and return their replies."""
        cmd = _Command(request, len(self._slots))
        with self._cond:
            for slot in self._slots:
                slot.commands.append(cmd)
            self._cond.notify_all()
        if wait:
            cmd.done.wait()
        return cmd.replies

    def close(self) -> None:
        """Stop the threads and the worker processes."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        with self._done_cond:
            self._done_cond.notify_all()
        for slot in self._slots:
            self._stop(slot)
        for slot in self._slots:
            if slot.thread is not None:
                slot.thread.join(timeout=2)
        self._committer.join(timeout=2)

    # -- the worker threads ----------------------------------------------------------------

    def _drive(self, slot: _Slot) -> None:
        while self._running:
            try:
                if not slot.ready:
                    self._spawn(slot)
                    continue
                job = self._next_job(slot)
                if job is None:
                    return
                if isinstance(job, _Command):
                    self._run_command(slot, job)
                else:
                    number, items = job
                    outcomes = self._run_batch(slot, items)
                    self._finished(number, items, outcomes)
            except Exception:  # a worker that cannot start: back off, try again
                if not self._running:
                    return
                self._stop(slot)
                time.sleep(1.0)

    def _next_job(self, slot: _Slot) -> _Command | tuple[int, list[Item]] | None:
        with self._cond:
            while self._running and not slot.commands and not self._pending:
                self._cond.wait()
            if not self._running:
                return None
            if slot.commands:
                if self._pending:  # events wait too: another idle worker takes them
                    self._cond.notify()
                return slot.commands.popleft()
            items = [self._pending.popleft()]
            if len(items[0].body) <= HEAVY:  # a heavy event goes alone: it delays no other
                pending = self._pending
                while pending and len(items) < self.max_batch and len(pending[0].body) <= HEAVY:
                    items.append(pending.popleft())
            if self._pending:  # more than one batch waits: another idle worker takes it
                self._cond.notify()
            number = self._next_batch
            self._next_batch += 1
            return number, items

    def _spawn(self, slot: _Slot) -> None:
        self._stop(slot)
        slot.worker = start_worker(self.limits)
        expansion = self._expansion()
        # Every worker reads the snapshots; the first alone rewrites them when stale.
        request = ("load", self._load(), expansion, self.snapshots, slot.number == 0)
        self._call(slot, request, timeout=None)
        slot.version = expansion.version
        slot.ready = True

    def _stop(self, slot: _Slot) -> None:
        slot.ready = False
        if slot.worker is not None:
            slot.worker.kill()
        slot.worker = None

    def _call(self, slot: _Slot, request: tuple[Any, ...], timeout: float | None) -> Any:
        """Send one request and wait for its reply, watching the worker's progress: a
        matcher that does not name the subscription it verifies has the whole batch's
        budget (``timeout`` an event)."""
        assert slot.worker is not None

        def budget(where: tuple[int, int, str, int]) -> float:
            assert timeout is not None
            phase, _, subscription, _ = where
            if phase == MATCHING and not subscription:
                return timeout * len(request[1])
            return timeout

        return slot.worker.call(request, timeout, budget)

    def _run_command(self, slot: _Slot, cmd: _Command) -> None:
        try:
            reply: tuple[Any, ...] = ("ok", self._call(slot, cmd.request, timeout=None))
        except pool.Overrun:
            slot.ready = False  # respawned (and reloaded) before the next job
            reply = ("ok", None)
        except Exception as exc:
            reply = ("error", pool.pack_error(exc))
        cmd.replies.append(reply)
        with self._cond:
            cmd.pending -= 1
            if cmd.pending == 0:
                cmd.done.set()

    def _run_batch(self, slot: _Slot, items: list[Item]) -> list[tuple[Any, ...]]:
        """Match ``items`` on ``slot``. An overrun blames a subscription (suspended, the
        group runs again), an event (it fails, the others run again) or, when the worker
        could not tell, splits the group into single events."""
        outcomes: dict[int, tuple[Any, ...]] = {}
        groups = [list(range(len(items)))]
        timeout = self.limits.match_timeout
        while groups:
            group = groups.pop(0)
            result = self._try(slot, [items[i] for i in group])
            if isinstance(result, _Failed):  # one event's failure must not fail the rest
                if len(group) == 1:
                    outcomes[group[0]] = ("error", pool.pack_error(result.error))
                else:
                    groups[0:0] = [[i] for i in group]
                continue
            if not isinstance(result, pool.Overrun):
                outcomes.update(zip(group, result, strict=True))
                continue
            if result.phase == MATCHING and result.subject:
                event = items[group[0]].event_id if len(group) == 1 else "of a batch"
                reason = f"{result.why} while matching event {event}"
                self._on_overrun(result.subject, reason)
                groups.insert(0, group)
            elif result.phase == READING or len(group) == 1:
                at = (
                    group[min(result.item, len(group) - 1)] if result.phase == READING else group[0]
                )
                what = "reading" if result.phase == READING else "matching"
                msg = f"{what} this event took more than {timeout:g} s; it was not published"
                outcomes[at] = ("error", pool.pack_error(EventLimitExceeded(msg)))
                rest = [i for i in group if i != at]
                if rest:
                    groups.insert(0, rest)
            else:
                groups[0:0] = [[i] for i in group]
        return [outcomes[i] for i in range(len(items))]

    def _try(
        self, slot: _Slot, items: list[Item]
    ) -> list[tuple[Any, ...]] | pool.Overrun | _Failed:
        try:
            if not slot.ready:
                self._spawn(slot)
            expansion = self._expansion()
            if slot.version != expansion.version:
                self._call(slot, ("ontology", expansion), timeout=None)
                slot.version = expansion.version
            request = ("match", [(i.event_id, i.media_type, i.body) for i in items])
            outcomes: list[tuple[Any, ...]] = self._call(slot, request, self.limits.match_timeout)
            return outcomes
        except pool.Overrun as overrun:
            self.respawns += 1
            _log.warning("matching worker %d restarted: %s", slot.number, overrun.why)
            self._stop(slot)
            return overrun
        except Exception as exc:  # the batch failed in the worker: which event, unknown
            error = MatcherError(f"matching failed: {type(exc).__name__}: {exc}")
            return _Failed(error)

    # -- committing in order ---------------------------------------------------------------

    def _finished(self, number: int, items: list[Item], outcomes: list[tuple[Any, ...]]) -> None:
        with self._done_cond:
            self._done[number] = (items, outcomes)
            self._done_cond.notify_all()

    def _commit_loop(self) -> None:
        while True:
            with self._done_cond:
                while self._running and not self._commit_ready():
                    self._done_cond.wait()
                if not self._running:
                    return
                group: list[Batch] = []
                if self._ordered():
                    while self._commit_next in self._done and len(group) < 64:
                        group.append(self._done.pop(self._commit_next))
                        self._advance(self._commit_next)
                else:  # nobody depends on the order: whatever is finished, now
                    for number in sorted(self._done)[:64]:
                        group.append(self._done.pop(number))
                        self._advance(number)
            self._commit(group)

    def _commit_ready(self) -> bool:
        if self._ordered():
            return self._commit_next in self._done
        return bool(self._done)

    def _advance(self, number: int) -> None:
        """Note batch ``number`` as committed; ``_commit_next`` is the first that is not."""
        self._ahead.add(number)
        while self._commit_next in self._ahead:
            self._ahead.discard(self._commit_next)
            self._commit_next += 1
