"""One matching worker as the pipeline drives it: its slot, its calls, a batch's triage.

A :class:`Slot` is one worker process (:mod:`semps.broker.worker`) and the pipeline thread
that drives it; :meth:`Slot.call` sends one request under the watchdog
(:meth:`semps.pool.Worker.call`). :func:`match_triaged` matches a batch so that one
culprit fails alone: a subscription the watchdog blames is suspended and the batch runs
again, an event it blames fails and the others run again, and a batch that failed or
overran without a culprit is split into single events.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from semps import pool
from semps.broker.jobs import Item
from semps.broker.worker import MATCHING, READING
from semps.errors import EventLimitExceeded

__all__ = ["Command", "Failed", "Slot", "match_triaged"]


@dataclass
class Command:
    """A request for every worker (or one), and the replies as they come."""

    request: tuple[Any, ...]
    pending: int
    replies: list[tuple[Any, ...]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class Slot:
    """One worker process and the thread that drives it."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.commands: deque[Command] = deque()
        self.worker: pool.Worker | None = None
        self.graph = 0  # the graph version the worker's replica is at
        self.ready = False
        self.thread: threading.Thread | None = None
        self._stopping = threading.Lock()

    def stop(self) -> None:
        """Kill the worker (the next job starts a fresh one). The slot's thread and the
        pipeline's close may both stop it: the worker is killed once."""
        self.ready = False
        with self._stopping:
            worker, self.worker = self.worker, None
        if worker is not None:
            worker.kill()

    def call(self, request: tuple[Any, ...], timeout: float | None) -> Any:
        """Send one request and wait for its reply, watching the worker's progress: a
        matcher that does not name the subscription it verifies has the whole batch's
        budget (``timeout`` an event)."""
        assert self.worker is not None

        def budget(where: tuple[int, int, str, int]) -> float:
            assert timeout is not None
            phase, _, subscription, _ = where
            if phase == MATCHING and not subscription and request[0] == "match":
                return timeout * len(request[1])
            return timeout

        return self.worker.call(request, timeout, budget)


@dataclass(slots=True)
class Failed:
    """A batch the worker answered with an error that names no event."""

    error: Exception


#: One attempt at matching some events: their outcomes, the watchdog's overrun, or a
#: failure that names no event.
Attempt = Callable[[list[Item]], "list[tuple[Any, ...]] | pool.Overrun | Failed"]


def match_triaged(
    items: list[Item],
    attempt: Attempt,
    on_overrun: Callable[[str, str], None],
) -> list[tuple[Any, ...]]:
    """Match ``items`` through ``attempt``, one outcome each. An overrun blames a
    subscription (``on_overrun`` suspends it, the group runs again), an event (it fails,
    the others run again) or, when the worker could not tell, splits the group into single
    events."""
    outcomes: dict[int, tuple[Any, ...]] = {}
    groups = [list(range(len(items)))]
    while groups:
        group = groups.pop(0)
        result = attempt([items[i] for i in group])
        if isinstance(result, Failed):  # one event's failure must not fail the rest
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
            on_overrun(result.subject, reason)
            groups.insert(0, group)
        elif result.phase == READING or len(group) == 1:
            at = group[min(result.item, len(group) - 1)] if result.phase == READING else group[0]
            what = "reading" if result.phase == READING else "matching"
            cause = result.late or f"failed: {result.why}"  # else the worker died under it
            msg = f"{what} this event {cause}; it was not published"
            outcomes[at] = ("error", pool.pack_error(EventLimitExceeded(msg)))
            rest = [i for i in group if i != at]
            if rest:
                groups.insert(0, rest)
        else:
            groups[0:0] = [[i] for i in group]
    return [outcomes[i] for i in range(len(items))]
