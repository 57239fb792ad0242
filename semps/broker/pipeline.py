"""The event pipeline: accept -> match in batches (worker processes) -> commit in order.

Publishers' events wait in one queue. Each matching worker (:mod:`semps.broker.worker`, a
process with its own copy of every stateless matcher's index) is driven by a thread here
that takes *whatever is waiting* (up to ``max_batch`` events) as one numbered batch, so
under load batches grow and per-event overheads shrink, and when idle an event goes alone.
An event over :data:`HEAVY` bytes is always a batch of its own.
Finished batches are handed to the commit function, several at a time when they queue up
(one transaction, one fsync for the group): strictly in batch order while a stateful
matcher (composite detection) holds subscriptions, since it must see events in the order
they were taken, and as soon as each is matched otherwise, so one slow batch delays no other
(except that a batch holding ``in_order`` events, a bridge's, waits for the batches taken
before it that hold such events: MQTT messages become events in the order they came).

Commands (add, replace, remove a subscription) go to every worker, ahead of batches not yet
taken, and return once every worker has applied them.

**Changes of the knowledge graph** (:class:`Step`: an update, a load, an ontology edit, a
retained event) are ordered with the events: an event submitted after a change's
notifications are computed is matched against the graph with it; one submitted before the
change, or while its notifications are being computed (nobody has been answered about it
yet), against the graph without it, and commits before it. At most one change is in flight
(:mod:`semps.broker.graphs` plans the next once this one committed). The first worker free
takes it and computes its notifications on its replica (the graph before the change),
while the others go on matching events; it commits once every event ordered before it has
committed, and alone in its transaction (:meth:`~semps.broker.commit.Committer.commit_change`),
and its edit is answered after; only then does each worker apply it to its replica, as soon
as no event waiting needs the graph before it, and go on with the events after it. A
change that fails (its
notifications, or the commit) is forgotten: the events after it are matched without it.
A worker starts from the store, at the version last committed (:meth:`_spawn`).

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
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from semps import pool
from semps.broker.jobs import ApplyChange, ChangeOrder, ComputeNotes, Item, Step
from semps.broker.replica import GraphSource
from semps.broker.slots import Command, Failed, Slot, match_triaged
from semps.broker.worker import MATCHING, start_worker
from semps.broker.worker_load import Packed
from semps.errors import MatcherError
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion

_log = logging.getLogger("semps.pipeline")
#: Events larger than this (bytes) are matched in a batch of their own: their cost (reading,
#: closing) grows with their size, and no lighter event should wait for it.
HEAVY = 32 * 1024


#: Where a starting worker reads the knowledge graph, and the ontology it is closed under,
#: held still (no change commits) while the worker reads it.
Replica = Callable[[], AbstractContextManager[tuple[GraphSource | None, Expansion]]]


__all__ = ["HEAVY", "Batch", "Item", "Pipeline", "Replica", "Step", "committable"]

#: A finished batch: its items and one outcome per item (see :mod:`semps.broker.worker`).
Batch = tuple[list[Item], list[tuple[Any, ...]]]


def _took(step: Step, what: str, start: float) -> None:
    """Log (at debug level) how long one phase of a graph change took."""
    _log.debug("graph change %d: %s in %.3f s", step.version, what, time.perf_counter() - start)


def committable(done: Iterable[int], in_order: Collection[int]) -> list[int]:
    """Of the finished batches ``done``, those that may commit now when the order does not
    matter, lowest first: all, but of the batches in ``in_order`` (taken, not committed,
    holding a bridge's ordered events) only the first."""
    first = min(in_order, default=None)
    return [n for n in sorted(done) if n == first or n not in in_order]


class Pipeline:
    """Batches events through matching workers and commits them in order.

    Args:
        load: the stateless subscriptions a fresh worker indexes (the broker's registry).
        replica: where a fresh worker reads the knowledge graph and its ontology.
        commit: called on the commit thread with consecutive finished batches, in order.
        commit_change: called on the commit thread with a graph change whose notifications
            are computed (or failed); the edit's answer: how many notifications it
            made, or the error that failed it.
        answer_change: called with the change and that answer once the pipeline has
            settled the change's order (the edit after it may then be submitted).
        on_overrun: called with (subscription id, reason) when a subscription overran.
        ordered: whether batches must commit in the order they were taken (stateful
            matchers hold subscriptions); otherwise each commits as soon as it is matched,
            so a slow batch holds up no other.
        workers: matching processes.
        limits: passed to the workers (event size) and read for ``match_timeout``.
        max_batch: events per batch at most.
        snapshots: the folder of the matchers' snapshots the workers load with and rewrite
            when stale (:meth:`~semps.matcher.base.Matcher.persisted`); ``None``: none.
        state_key: the key of the matchers' saved states in ``snapshots``
            (:mod:`semps.broker.worker_load`); ``None``: the workers neither read nor save
            any.
        graph_version: the knowledge graph's version when the pipeline starts.
    """

    def __init__(
        self,
        *,
        load: Callable[[], list[Subscription]],
        replica: Replica,
        commit: Callable[[list[Batch]], None],
        commit_change: Callable[[Step], BaseException | int],
        answer_change: Callable[[Step, BaseException | int], None],
        on_overrun: Callable[[str, str], None],
        ordered: Callable[[], bool] = lambda: True,
        workers: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        max_batch: int = 256,
        snapshots: Path | None = None,
        state_key: bytes | None = None,
        graph_version: int = 0,
    ) -> None:
        if workers < 1:
            msg = f"the pipeline needs at least one worker, not {workers}"
            raise ValueError(msg)
        self._load, self._replica = load, replica
        self._commit, self._commit_change, self._on_overrun = commit, commit_change, on_overrun
        self._answer_change = answer_change
        self.limits, self.max_batch = limits, max_batch
        self._cond = threading.Condition()
        self._pending: deque[Item] = deque()
        self._next_batch = 0
        self._done: dict[int, Batch] = {}
        self._commit_next = 0
        self._ahead: set[int] = set()  # batches committed out of order
        self._in_order: set[int] = set()  # batches taken, not committed, with in_order items
        self._in_order_lock = threading.Lock()  # a leaf: taken under _cond or _done_cond
        self._ordered = ordered
        self._done_cond = threading.Condition()
        self._changes = ChangeOrder(graph_version)  # the graph's changes among the events
        self.snapshots, self.state_key = snapshots, state_key
        self._running = True
        self.respawns = 0
        self._slots = [Slot(i) for i in range(workers)]
        self._packing = threading.Lock()  # the subscriptions made once for the first loads
        self._unstarted = set(range(workers))
        self._first_packed: Packed | None = None
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
        """Queue accepted events (never blocks): each is matched against the graph with
        every change submitted before it whose notifications are computed (see
        :meth:`~semps.broker.jobs.ChangeOrder.stamp`)."""
        with self._cond:
            self._changes.stamp(items)
            self._pending.extend(items)
            if self._changes.steps:
                self._cond.notify_all()
            else:
                self._cond.notify()  # one idle worker; it wakes the next if it leaves some

    def submit_change(self, step: Step) -> None:
        """Queue a change of the knowledge graph after every event submitted so far
        (never blocks; ``step.version`` follows the last change submitted, which has
        committed or failed).

        Raises:
            ValueError: the step does not follow the last change.
        """
        with self._cond:
            self._changes.submit(step)
            self._cond.notify_all()

    @property
    def depth(self) -> int:
        """Events waiting to be taken by a worker."""
        return len(self._pending)

    def command(self, request: tuple[Any, ...], wait: bool = True) -> list[tuple[Any, ...]]:
        """Send ``request`` to every worker ahead of queued batches; with ``wait``, block
        until all applied it and return their replies."""
        cmd = Command(request, len(self._slots))
        with self._cond:
            for slot in self._slots:
                slot.commands.append(cmd)
            self._cond.notify_all()
        if wait:
            cmd.done.wait()
        return cmd.replies

    @property
    def workers(self) -> int:
        """How many matching workers run."""
        return len(self._slots)

    def scatter(self, requests: Sequence[tuple[Any, ...] | None]) -> list[tuple[Any, ...]]:
        """Send ``requests[i]`` to worker ``i`` (``None``: nothing) ahead of queued
        batches *and commands*, block until each ran its own; their replies, in order
        (``None``'s: ``("ok", None)``). For requests that change nothing the others read
        (checking new subscriptions), so they need not wait for queued indexing."""
        cmds = [Command(r, 1) if r is not None else None for r in requests]
        with self._cond:
            for slot, cmd in zip(self._slots, cmds, strict=True):
                if cmd is not None:
                    slot.commands.appendleft(cmd)
            self._cond.notify_all()
        for cmd in cmds:
            if cmd is not None:
                cmd.done.wait()
        return [("ok", None) if c is None else c.replies[0] for c in cmds]

    def close(self) -> None:
        """Stop the threads and the worker processes."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        with self._done_cond:
            self._done_cond.notify_all()
        for slot in self._slots:
            slot.stop()
        for slot in self._slots:
            if slot.thread is not None:
                slot.thread.join(timeout=2)
        self._committer.join(timeout=2)

    # -- the worker threads ----------------------------------------------------------------

    def _drive(self, slot: Slot) -> None:
        while self._running:
            try:
                if not slot.ready:
                    self._spawn(slot)
                    continue
                job = self._next_job(slot)
                if job is None:
                    return
                if isinstance(job, Command):
                    self._run_command(slot, job)
                elif isinstance(job, ComputeNotes):
                    self._run_notes(slot, job.step)
                elif isinstance(job, ApplyChange):
                    self._run_apply(slot, job.step)
                else:
                    number, items = job
                    outcomes = self._run_batch(slot, items)
                    self._finished(number, items, outcomes)
            except Exception:  # a worker that cannot start: back off, try again
                if not self._running:
                    return
                slot.stop()
                time.sleep(1.0)

    def _next_job(
        self, slot: Slot
    ) -> Command | ComputeNotes | ApplyChange | tuple[int, list[Item]] | None:
        with self._cond:
            while True:
                if not self._running:
                    return None
                if slot.commands:
                    if self._pending:  # events wait too: another idle worker takes them
                        self._cond.notify()
                    return slot.commands.popleft()
                head = self._pending[0].graph if self._pending else None
                job = self._changes.job(slot.graph, head) if self._changes.steps else None
                if job is not None:
                    return job
                if head == slot.graph:
                    return self._take()
                self._cond.wait()

    def _take(self) -> tuple[int, list[Item]]:
        """The next batch: what waits, up to ``max_batch`` events of one graph version
        (call under ``_cond``)."""
        pending = self._pending
        items = [pending.popleft()]
        version = items[0].graph
        if len(items[0].body) <= HEAVY:  # a heavy event goes alone: it delays no other
            while (
                pending
                and len(items) < self.max_batch
                and len(pending[0].body) <= HEAVY
                and pending[0].graph == version
            ):
                items.append(pending.popleft())
        if self._changes.steps:  # the head moved: a worker may apply a change, or take the rest
            self._cond.notify_all()
        elif pending:  # more than one batch waits: another idle worker takes it
            self._cond.notify()
        number = self._next_batch
        self._next_batch += 1
        if any(item.in_order for item in items):
            with self._in_order_lock:
                self._in_order.add(number)
        return number, items

    def _spawn(self, slot: Slot) -> None:
        """A fresh worker: the subscriptions indexed, the graph read from the store with
        no change committing meanwhile (its version is then the last committed)."""
        slot.stop()
        started = time.perf_counter()
        slot.worker = start_worker(self.limits)
        # Every worker reads the snapshots and states; the first alone writes them. The
        # states are read while the subscriptions are gathered (at start, while the broker
        # reads them from the store), then brought up to date with them.
        folder, key = self.snapshots, self.state_key
        if folder is not None and key is not None:
            slot.worker.send(("restore", folder, key))
        subs = self._subscriptions(slot)
        if folder is not None and key is not None:
            slot.worker.recv()
        request = ("load", subs, Expansion(), folder, slot.number == 0, None, key)
        loaded = slot.call(request, timeout=None)
        took = time.perf_counter() - started
        _log.info("matching worker %d loaded %s in %.1f s", slot.number, loaded, took)
        with self._replica() as (source, expansion):
            slot.call(("graph", source, expansion), timeout=None)
            with self._cond:
                slot.graph = source.version if source is not None else self._changes.committed
                self._changes.applied(s.graph for s in self._slots)
                self._cond.notify_all()
        slot.ready = True

    def _subscriptions(self, slot: Slot) -> Packed:
        """What a starting worker indexes, as columns: made once for the workers that
        start with the pipeline (1.5 s of this process at 1M subscriptions), afresh for a
        worker started again. Commands sent meanwhile reach every worker after its load,
        so one made a little earlier ends the same."""
        with self._packing:
            first = slot.number in self._unstarted
            self._unstarted.discard(slot.number)
            packed = self._first_packed if first else None
            if packed is None:
                packed = Packed.of(self._load())
            self._first_packed = packed if first and self._unstarted else None
            return packed

    def _run_notes(self, slot: Slot, step: Step) -> None:
        """Compute a change's notifications on ``slot`` (its replica is before the change).
        A subscription that overruns is suspended and the change computed again; any other
        failure fails the change."""
        request = ("graph_notes", step.change, step.event_id, step.document)
        start = time.perf_counter()
        while True:
            try:
                if not slot.ready:
                    self._spawn(slot)
                outcome: tuple[Any, ...] = slot.call(request, self.limits.match_timeout)
            except pool.Overrun as overrun:
                self.respawns += 1
                _log.warning("matching worker %d restarted: %s", slot.number, overrun.why)
                slot.stop()
                if overrun.phase == MATCHING and overrun.subject:
                    reason = f"{overrun.why} while matching graph change {step.version}"
                    self._on_overrun(overrun.subject, reason)
                    continue
                error = MatcherError(f"graph change {step.version} failed: {overrun.why}")
                outcome = ("error", pool.pack_error(error))
            except Exception as exc:  # a bug in the worker: the change fails, nothing else
                error = MatcherError(f"graph change {step.version} failed: {exc}")
                outcome = ("error", pool.pack_error(error))
            break
        _took(step, f"notifications computed on worker {slot.number}", start)
        with self._done_cond:
            step.outcome = outcome
            self._done_cond.notify_all()

    def _run_apply(self, slot: Slot, step: Step) -> None:
        """Bring ``slot``'s replica to a committed change's version (a worker that cannot is
        started again: it reads the graph from the store)."""
        start = time.perf_counter()
        try:
            slot.call(("graph_apply", step.change, step.expansion), timeout=None)
        except Exception as exc:  # noqa: BLE001 (any failure: the replica is rebuilt)
            if self._running:  # (closing kills the workers: no restart to report)
                _log.warning("matching worker %d restarted: %s", slot.number, exc)
            slot.stop()
            return
        _took(step, f"applied on worker {slot.number}", start)
        with self._cond:
            slot.graph = step.version
            self._changes.applied(s.graph for s in self._slots)
            self._cond.notify_all()

    def _run_command(self, slot: Slot, cmd: Command) -> None:
        try:
            reply: tuple[Any, ...] = ("ok", slot.call(cmd.request, timeout=None))
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

    def _run_batch(self, slot: Slot, items: list[Item]) -> list[tuple[Any, ...]]:
        """Match ``items`` on ``slot``, a culprit failing alone (:func:`.match_triaged`)."""
        return match_triaged(items, lambda some: self._try(slot, some), self._on_overrun)

    def _try(self, slot: Slot, items: list[Item]) -> list[tuple[Any, ...]] | pool.Overrun | Failed:
        try:
            if not slot.ready:
                self._spawn(slot)
            request = ("match", [(i.event_id, i.media_type, i.body) for i in items])
            outcomes: list[tuple[Any, ...]] = slot.call(request, self.limits.match_timeout)
            return outcomes
        except pool.Overrun as overrun:
            self.respawns += 1
            _log.warning("matching worker %d restarted: %s", slot.number, overrun.why)
            slot.stop()
            return overrun
        except Exception as exc:  # the batch failed in the worker: which event, unknown
            error = MatcherError(f"matching failed: {type(exc).__name__}: {exc}")
            return Failed(error)

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
                step = self._step_ready()
            if step is not None:
                self._commit_step(step)
                continue
            with self._done_cond:
                group: list[Batch] = []
                if self._ordered():
                    while self._commit_next in self._done and len(group) < 64:
                        group.append(self._done.pop(self._commit_next))
                        self._advance(self._commit_next)
                else:  # nobody depends on the order: whatever is finished, now
                    for number in self._committable()[:64]:
                        group.append(self._done.pop(number))
                        self._advance(number)
            self._commit(group)
            with self._cond:
                for items, _ in group:
                    self._changes.answered(items)

    def _commit_ready(self) -> bool:
        if self._step_ready() is not None:
            return True
        if self._ordered():
            return self._commit_next in self._done
        return bool(self._committable())

    def _committable(self) -> list[int]:
        """The finished batches that may commit now (call under ``_done_cond``)."""
        with self._in_order_lock:
            return committable(self._done, self._in_order)

    def _step_ready(self) -> Step | None:
        """The change to commit now (call under ``_done_cond``)."""
        with self._cond:
            return self._changes.ready()

    def _commit_step(self, step: Step) -> None:
        """Commit a change and answer its edit (or answer its failure) once its order is
        settled: the edit's answer lets the next edit be submitted, which must follow this
        one. A failed change is forgotten: the events submitted after it are matched
        against the graph before it."""
        start = time.perf_counter()
        answer = self._commit_change(step)
        committed = not isinstance(answer, BaseException)
        _took(step, "committed" if committed else "failed", start)
        with self._done_cond, self._cond:
            self._changes.settled(step, committed, self._pending)
            self._cond.notify_all()
        self._answer_change(step, answer)

    def _advance(self, number: int) -> None:
        """Note batch ``number`` as committed; ``_commit_next`` is the first that is not."""
        self._ahead.add(number)
        with self._in_order_lock:
            self._in_order.discard(number)
        while self._commit_next in self._ahead:
            self._ahead.discard(self._commit_next)
            self._commit_next += 1
