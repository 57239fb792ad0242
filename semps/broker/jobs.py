"""What goes through the pipeline, and the order of the knowledge graph's changes among it.

Two kinds of work go from the broker to the matching workers: accepted events
(:class:`Item`) and changes of the knowledge graph (:class:`Step`: an update, a load, an
ontology edit, a retained event). :class:`ChangeOrder` keeps the changes in order with the
events, by graph version: each event is stamped with the version it is matched against
(every change submitted before it, but the one whose notifications are still being
computed); a change's notifications are computed by one worker on its replica before the
change; the change commits once every event stamped before it has, then
each worker applies it, as soon as no waiting event needs the graph before it. The pipeline
(:mod:`semps.broker.pipeline`) calls every method of :class:`ChangeOrder` under its lock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from semps.graph.change import GraphChange
from semps.ontology.expansion import Expansion

__all__ = ["ApplyChange", "ChangeOrder", "ComputeNotes", "Item", "Step"]


@dataclass(slots=True)
class Item:
    """One accepted event waiting to be matched; ``done`` is the broker's to use;
    ``graph`` the knowledge graph's version it is matched against (set when submitted)."""

    event_id: str
    media_type: str
    body: bytes
    received: float
    done: Any = None
    graph: int = 0
    #: Who published it (a token's subject; empty: unknown).
    publisher: str = ""
    #: Committed after every earlier ``in_order`` event (a bridge's messages: MQTT's
    #: ordered topics), even when the pipeline otherwise commits whatever finished first.
    in_order: bool = False


@dataclass(eq=False)
class Step:
    """A change of the knowledge graph going through the pipeline, in order with events.

    Attributes:
        change: the planned change (version ``change.version``).
        event_id: what its notifications name as their ``event`` (a retained event's id,
            ``graph-<version>`` for an edit).
        expansion: the new ontology an ontology edit brings, or ``None``.
        document: a retained event's ``(media type, body)``, which the matchers that do not
            read graphs match as any event (``None``: no event to read).
        logged: (received, media type, bytes) of the event the event log keeps for it (a
            retained event, an update published as an event); ``None``: not an event.
        done: the broker's to use.
        outcome: the worker's answer (see :mod:`semps.broker.worker`), set by the pipeline.
        claimed: a worker is computing its notifications.
        committed: it is committed (the workers may apply it).
    """

    change: GraphChange
    event_id: str
    expansion: Expansion | None = None
    document: tuple[str, bytes] | None = None
    logged: tuple[float, str, int] | None = None
    done: Any = None
    outcome: tuple[Any, ...] | None = None
    claimed: bool = False
    committed: bool = False

    @property
    def version(self) -> int:
        """The graph's version after this change."""
        return self.change.version


@dataclass(slots=True)
class ComputeNotes:
    """A worker's job: compute a change's notifications on its replica (before the change)."""

    step: Step


@dataclass(slots=True)
class ApplyChange:
    """A worker's job: bring its replica to a committed change's version."""

    step: Step


class ChangeOrder:
    """The changes of the knowledge graph in flight, and the events each must follow.

    At most one change is submitted and not yet committed (or failed); committed ones stay
    until every worker has applied them.

    Attributes:
        submitted: the version of the last change submitted (events submitted now are
            matched against it once its notifications are computed, before it until then).
        committed: the version of the last change committed.
        steps: the changes submitted and not yet applied by every worker, by version.
    """

    def __init__(self, version: int = 0) -> None:
        self.submitted = self.committed = version
        self.steps: dict[int, Step] = {}
        self._open: Counter[int] = Counter()  # events per version, not yet answered

    def stamp(self, items: Sequence[Item]) -> None:
        """Note events being submitted: they are matched against the last change whose
        notifications are computed. While the change in flight is still being computed
        (nobody has been answered about it), they go before it, matched against the graph
        without it, so a large change holds up only the events that come after its
        notifications, not those that come during them."""
        version = self.submitted
        step = self.steps.get(version)
        if step is not None and step.outcome is None:  # (a committed change has one)
            version -= 1
        for item in items:
            item.graph = version
        self._open[version] += len(items)

    def submit(self, step: Step) -> None:
        """Note a change being submitted, after every event stamped so far.

        Raises:
            ValueError: it does not follow the last change, or that one is still in flight.
        """
        if step.version != self.submitted + 1 or self.committed != self.submitted:
            msg = (
                f"graph change {step.version} does not follow {self.submitted} "
                f"(committed: {self.committed})"
            )
            raise ValueError(msg)
        self.submitted = step.version
        self.steps[step.version] = step

    def job(self, at: int, head: int | None) -> ComputeNotes | ApplyChange | None:
        """The work on changes for a worker whose replica is at version ``at``, when the
        first waiting event needs version ``head`` (``None``: none waits): the next change's
        notifications when nobody computes them yet, or the next committed change once no
        waiting event needs the graph before it."""
        step = self.steps.get(at + 1)
        if step is None:
            return None
        if not step.committed:
            if step.claimed:
                return None
            step.claimed = True
            return ComputeNotes(step)
        if head is not None and head < step.version:
            return None
        return ApplyChange(step)

    def applied(self, versions: Iterable[int]) -> None:
        """Forget the changes every worker has applied (``versions``: each one's replica)."""
        lowest = min(versions, default=self.committed)
        for version in [v for v in self.steps if v <= lowest]:
            del self.steps[version]

    def answered(self, items: Iterable[Item]) -> None:
        """Note events committed (or refused)."""
        for item in items:
            self._open[item.graph] -= 1
        for version in [v for v, n in self._open.items() if n <= 0]:
            del self._open[version]

    def ready(self) -> Step | None:
        """The change to commit now: its notifications computed (or failed), and every
        event submitted before it answered."""
        step = self.steps.get(self.committed + 1)
        if step is None or step.outcome is None:
            return None
        if any(n > 0 for v, n in self._open.items() if v < step.version):
            return None
        return step

    def settled(self, step: Step, committed: bool, pending: Iterable[Item]) -> None:
        """Note a change committed, or failed: then it is forgotten, and the events
        submitted after it (``pending``: all still waiting) are matched without it."""
        if committed:
            step.committed = True
            self.committed = step.version
            return
        del self.steps[step.version]
        before = step.version - 1
        self.submitted = before
        for item in pending:
            if item.graph == step.version:
                item.graph = before
        self._open[before] += self._open.pop(step.version, 0)
