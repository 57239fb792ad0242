"""Committing: the one way a matched event goes after the pipeline, to the store and then
to the channels.

The :class:`~semps.broker.pipeline.Pipeline` hands finished batches to a
:class:`Committer` on its commit thread, several at a time when they queue up. For the
group, the stateful matchers (:class:`~semps.broker.observers.Observers`) observe each
event's matches in order; then one transaction commits the events, their notifications and
the matchers' states (:meth:`~semps.broker.contracts.NotificationLog.commit_events`); then
the channels get the numbered notifications (:class:`~semps.broker.contracts.Channel`:
live streams, webhooks); last, each publisher's request is answered (:class:`Waiter`: one
wake-up per event loop and group).

A change of the knowledge graph (:class:`~semps.broker.pipeline.Step`) commits alone
(:meth:`Committer.commit_change`): the change written by the graph inside the same
transaction as its notifications (and a retained event's row), the graph's commit lock held
so no worker reads the graph meanwhile; a failure rolls both back and reads the graph back
from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from semps.broker.contracts import Channel, EventRecord, Note, NotificationLog
from semps.broker.graphs import GraphDesk
from semps.broker.metrics import Metrics
from semps.broker.observers import Observers
from semps.broker.pipeline import Batch, Item, Step
from semps.limits import Limits
from semps.pool import unpack_error

__all__ = ["Committer", "Outcome", "Published", "Waiter"]

log = logging.getLogger("semps.broker")

#: One event's answer: (event id, notifications), (event id, notifications, graph version)
#: for an event that changed the knowledge graph, or why it was refused.
Published = tuple[str, int] | tuple[str, int, int]
Outcome = Published | BaseException


@dataclass(slots=True)
class Waiter:
    """Where the answers to one request's events go: one future on the server's event loop,
    set once every event is answered (an :class:`~semps.broker.pipeline.Item`'s ``done``
    is (waiter, index))."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[list[Outcome]]
    results: list[Outcome | None]
    left: int

    @classmethod
    def on(cls, loop: asyncio.AbstractEventLoop, events: int) -> Waiter:
        """A waiter for ``events`` answers on ``loop``."""
        return cls(loop, loop.create_future(), [None] * events, events)


class Committer:
    """Commits finished batches (called by the pipeline's commit thread).

    Args:
        store: where events and notifications are committed.
        channels: where committed notifications go, in order (a failing one is logged);
            the list is read at each commit (the app adds the live streams' fan-out).
        observers: the stateful matchers.
        metrics: counted as requests are answered.
        limits: the notifications' bounds (derived notifications' payloads).
        graphs: the knowledge graph, for the changes it commits.
    """

    def __init__(
        self,
        store: NotificationLog,
        channels: list[Channel],
        observers: Observers,
        metrics: Metrics,
        limits: Limits,
        graphs: GraphDesk,
    ) -> None:
        self.store, self.channels, self.observers = store, channels, observers
        self.metrics, self.limits, self.graphs = metrics, limits, graphs

    def commit_change(self, step: Step) -> BaseException | int:
        """Commit a graph change with its notifications (the stateful matchers observe the
        subscriptions it added solutions to) and hand them to the channels. Returns the
        edit's answer: how many notifications it made, or why it failed (the pipeline
        answers it once the change's order is settled, so the next edit follows it)."""
        assert step.outcome is not None
        if step.outcome[0] == "error":
            return unpack_error(step.outcome[1])
        _, when, notes, gained = step.outcome
        observers = self.observers
        with observers.lock:
            if observers.holding() and gained:
                marks = [(sub_id, "") for sub_id in gained]
                notes = notes + observers.observe(step.event_id, when, marks, self.limits)
            states = observers.states()
        record = _record(step, notes)
        before = self.graphs.graph.view.expansion
        try:
            with self.graphs.commit_lock:
                try:
                    committed = self.store.commit_events(
                        [record], states, lambda: self.graphs.write(step)
                    )
                except Exception:
                    self.graphs.restore(before)
                    raise
        except Exception as exc:  # the change and its notifications are not committed
            log.error("graph change %d not committed: %s", step.version, exc)
            return exc
        self._publish(committed[0])
        if record.logged:
            self.metrics.events_in += 1
        self.metrics.matches += len(notes)
        return len(notes)

    def __call__(self, batches: list[Batch]) -> None:
        """Observers, one transaction, then channels and answers."""
        records: list[EventRecord] = []
        answered: list[tuple[Item, Any]] = []
        observers = self.observers
        with observers.lock:
            observing = observers.holding()  # a stateful matcher holds subscriptions
            for items, outcomes in batches:
                for item, outcome in zip(items, outcomes, strict=True):
                    if outcome[0] == "error":
                        answered.append((item, unpack_error(outcome[1])))
                        continue
                    notes = outcome[2]
                    if observing:
                        notes = notes + observers.observe(
                            item.event_id, outcome[1], notes, self.limits
                        )
                    record = EventRecord(
                        item.event_id,
                        item.received,
                        item.media_type,
                        len(item.body),
                        notes,
                        body=item.body,
                        publisher=item.publisher,
                    )
                    records.append(record)
                    answered.append((item, record))
            states = observers.states()
        try:
            committed = self.store.commit_events(records, states) if records else []
        except Exception as exc:  # the store failed: every publisher of the group hears it
            log.error("commit failed: %s", exc)
            self._answer([(item, exc, 0) for item, _ in answered])
            return
        self._publish([note for notes in committed for note in notes])
        numbered = iter(committed)
        self._answer(
            [
                (item, outcome, 0)
                if isinstance(outcome, BaseException)
                else (item, None, len(next(numbered)))
                for item, outcome in answered
            ]
        )

    def _publish(self, notes: Sequence[Note]) -> None:
        """Hand committed notifications to every channel (a failing one is logged)."""
        if not notes:
            return
        for channel in self.channels:
            try:
                channel.publish(notes)
            except Exception:
                log.exception("channel %s failed", type(channel).__name__)

    def _answer(self, answers: list[tuple[Item, BaseException | None, int]]) -> None:
        """Hand a committed group's answers (item, error, notifications) to the event loops
        that wait for them: one wake-up per loop and group, not one per event."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Item, BaseException | None, int]]]
        by_loop = {}
        for answer in answers:
            by_loop.setdefault(answer[0].done[0].loop, []).append(answer)
        for loop, group in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(self._settle, group)

    def _settle(self, answers: list[tuple[Item, BaseException | None, int]]) -> None:
        """On the event loop: note each answer, and answer each request whose events are
        all answered."""
        metrics, now = self.metrics, time.time()
        for item, error, matched in answers:
            waiter, index = item.done
            if error is not None:
                metrics.events_refused += 1
                waiter.results[index] = error
            else:
                metrics.events_in += 1
                metrics.matches += matched
                metrics.observe(now - item.received)
                waiter.results[index] = (item.event_id, matched)
            waiter.left -= 1
            if waiter.left == 0 and not waiter.future.done():
                waiter.future.set_result(waiter.results)


def _record(step: Step, notes: list[tuple[str, str]]) -> EventRecord:
    """A change's row: a retained event (or an update published as one) is logged as an
    event; an edit through ``/graph`` only numbers its notifications."""
    if step.logged is None:
        return EventRecord(step.event_id, time.time(), "", 0, notes, logged=False)
    received, media_type, size = step.logged
    body = step.document[1] if step.document is not None else b""
    return EventRecord(step.event_id, received, media_type, size, notes, body=body)
