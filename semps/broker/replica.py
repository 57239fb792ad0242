"""A matching worker's replica of the knowledge graph: where it is read from, and what a
graph change does in a worker.

The main process owns the :class:`~semps.graph.graph.KnowledgeGraph` (it plans and commits
every change); each matching worker keeps a :class:`~semps.graph.view.GraphView` of its
own, read from the store when the worker starts (:class:`GraphSource`: the database file
and the version the main process committed last, or, without a file, the view itself),
then brought forward change by change, in order with the events
(:func:`apply_change`). One worker computes each change's notifications on its replica
*before* the change (:func:`change_notes`): the solutions the change adds to and removes
from each subscription's answers, plus, for a retained event, what the matchers that do not
read graphs find in the event itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from semps.broker.payload import change_heads, verdict_heads
from semps.errors import StoreError
from semps.event import Event
from semps.graph.change import GraphChange
from semps.graph.graph import KnowledgeGraph, connect
from semps.graph.view import GraphView
from semps.limits import Limits
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.values import ChangeMatch
from semps.ontology.expansion import Expansion

__all__ = ["ChangeNotes", "GraphSource", "apply_change", "change_notes"]

#: A worker reads what the main process committed (and bounded): it re-closes it in memory
#: without limits of its own, never refusing what the service holds.
_READER = Limits(max_edit_inferred=1 << 40, max_graph_triples=1 << 40, graph_timeout=math.inf)


@dataclass(frozen=True)
class GraphSource:
    """Where a starting worker reads the knowledge graph: the SQLite file (``path``) at
    the version the main process committed last, or a copy of the view itself (``view``,
    for a store that is not a file)."""

    version: int
    path: Path | None = None
    view: GraphView | None = None

    def open(self, expansion: Expansion) -> GraphView:
        """The graph as the worker matches against it, closed under ``expansion``.

        Raises:
            StoreError: the file cannot be read, or holds another version than expected
                (a change was committed while reading: the caller holds the graph's commit
                lock to prevent it).
        """
        if self.view is not None:
            return self.view
        if self.path is None:
            return GraphView(expansion)
        conn = connect(self.path)
        try:
            view = KnowledgeGraph.open(conn, expansion, limits=_READER, write=False).view
        finally:
            conn.close()
        if view.version != self.version:
            msg = f"read graph version {view.version} from {self.path}, expected {self.version}"
            raise StoreError(msg)
        return view


#: What one change notifies: (subscription id, payload head) pairs, in subscription order,
#: and the ids of the subscriptions it added solutions to (for the stateful matchers).
ChangeNotes = tuple[list[tuple[str, str]], list[str]]


def change_notes(
    matchers: Iterable[Matcher],
    change: GraphChange,
    view: GraphView,
    event: Event | None,
    context: Callable[[Event], MatchContext],
    limits: Limits,
    *,
    event_id: str,
    watch: Callable[[str], None] | None = None,
) -> ChangeNotes:
    """The notifications of ``change`` (``view``: the graph before it): each matcher's
    :meth:`~semps.matcher.base.Matcher.change_matches`, and for a retained ``event`` the
    matches of the matchers that do not read graphs (for those that do, what the event adds
    is what the change adds). ``context`` makes the event's match context."""
    found: list[ChangeMatch] = []
    others: list[Matcher] = []
    for matcher in matchers:
        if matcher.reads_graph:
            found += matcher.change_matches(change, view, watch=watch)
        else:
            others.append(matcher)
    found.sort(key=lambda c: c.subscription)
    notes = change_heads(found, event_id, limits)
    gained = [c.subscription for c in found if c.count]
    if event is not None and others:
        ctx = context(event)
        for matcher in others:
            for sub_id, head in verdict_heads(matcher.verdict_batch([ctx])[0], event_id, limits):
                notes.append((sub_id, head))
                gained.append(sub_id)
    return notes, gained


def apply_change(view: GraphView, change: GraphChange, expansion: Expansion | None) -> None:
    """Bring a replica to ``change.version`` (``expansion``: the ontology an ontology edit
    brought, taken with it)."""
    view.apply(change, expansion)
