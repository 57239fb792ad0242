"""Matching with a knowledge graph: the solutions an event adds, and a graph change's
added and removed solutions, per subscription.

An event E notifies subscription Q with ``added(Q, E) = sols(Q, closure(O+K+E)) -
sols(Q, closure(O+K))`` (a multiset difference); a change of K notifies Q with the
solutions it adds and those it removes. Both come from :class:`~.graphdiff.Differ` over the
change's triples (an event's: :func:`~semps.graph.delta.event_delta`), for the
subscriptions the change can touch only (:class:`GraphShapes`: by the properties and
classes of their patterns), each shape (identical queries) once. Then the query form:

- SELECT: the gained and lost solutions projected; without DISTINCT, ``added = gained -
  lost`` as multisets (projection keeps multiplicities); with DISTINCT, a projected row is
  added when some gained solution gives it and no solution over the old graph did (checked
  by evaluating the query seeded with the row).
- ASK: its one empty solution is added when the answer goes from false to true (removed
  when true to false); the count of solutions over the graph is kept per graph version
  (computed once, then carried across changes by their gains and losses).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from semps._types import Term, Triple
from semps.event import Event
from semps.graph.change import GraphChange, term_triples
from semps.graph.delta import event_delta
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView
from semps.ingest.sparql.algebra import BGP, Filter, Node
from semps.ingest.sparql.evaluate import OutOfBudget
from semps.ingest.sparql.model import TriplePattern, Var
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.partab import EventParts
from semps.matcher.semantic.compiled import CompiledSubscription
from semps.matcher.semantic.graphdiff import (
    ANY,
    NEW,
    OLD,
    Differ,
    Rows,
    change_keys,
    touch_keys,
)
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.values import Verdict

Row: TypeAlias = "tuple[Term | None, ...]"
TouchKey: TypeAlias = "str | tuple[str, Term]"


def where_of(sub: CompiledSubscription) -> Node:
    """A compiled subscription's WHERE clause as algebra (a basic graph pattern's patterns
    and FILTERs rebuilt from the compiled form)."""
    if sub.algebra is not None:
        return sub.algebra  # type: ignore[no-any-return]
    patterns = tuple(
        TriplePattern(
            Var(p.s_var) if p.s_var is not None else p.key[0],
            p.prop,
            Var(p.o_var) if p.o_var is not None else p.key[1],
        )
        for p in sub.patterns
    )
    node: Node = BGP(patterns)
    return Filter(node, sub.filters) if sub.filters else node


@dataclass(slots=True, eq=False)
class Shape:
    """Subscriptions with one query (up to their ids): verified once per change."""

    where: Node
    projection: tuple[str, ...]
    distinct: bool
    ask: bool
    ids: list[str] = field(default_factory=list)


class GraphShapes:
    """The subscriptions by shape, indexed by what a change must carry to touch them."""

    def __init__(self) -> None:
        self.shapes: dict[tuple[Any, ...], Shape] = {}
        self.shape_of: dict[str, tuple[Any, ...]] = {}
        self.by_key: dict[TouchKey, dict[tuple[Any, ...], None]] = {}

    def add(self, sub: CompiledSubscription) -> None:
        """Index a subscription (replacing one with its id)."""
        if sub.id in self.shape_of:
            self.remove(sub.id)
        where = where_of(sub)
        key = (where, sub.projection, sub.distinct, sub.ask)
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = Shape(where, sub.projection, sub.distinct, sub.ask)
            for k in touch_keys(where):
                self.by_key.setdefault(k, {})[key] = None
        shape.ids.append(sub.id)
        self.shape_of[sub.id] = key

    def remove(self, sub_id: str) -> None:
        """Drop a subscription (no error when it is not there)."""
        key = self.shape_of.pop(sub_id, None)
        if key is None:
            return
        shape = self.shapes[key]
        shape.ids.remove(sub_id)
        if not shape.ids:
            del self.shapes[key]
            for k in touch_keys(shape.where):
                found = self.by_key.get(k)
                if found is not None:
                    found.pop(key, None)
                    if not found:
                        del self.by_key[k]

    def candidates(self, keys: set[TouchKey]) -> list[tuple[tuple[Any, ...], Shape]]:
        """The shapes a change carrying ``keys`` may touch."""
        found: dict[tuple[Any, ...], None] = dict(self.by_key.get(ANY, {}))
        for k in keys:
            hit = self.by_key.get(k)
            if hit:
                found.update(hit)
        return [(key, self.shapes[key]) for key in found]


@dataclass(frozen=True, slots=True)
class ChangeVerdict:
    """What one graph change did to one subscription's answers: the solutions added and
    removed (either may be ``None``: nothing)."""

    added: Verdict | None
    removed: Verdict | None


class GraphMatching:
    """The matcher's state for matching against graphs: the shapes, and what it keeps per
    graph version (the old graph's pairs and evaluations, ASK counts)."""

    def __init__(self, solution_limit: int, budget: int) -> None:
        self.shapes = GraphShapes()
        self.solution_limit = solution_limit
        self.budget = budget
        self._view: tuple[int, int] | None = None
        self._old: GraphPairs | None = None
        self._cache: dict[Any, Any] = {}
        #: ASK shapes' solution counts over the graph, by shape key: (version, count).
        self._asks: dict[tuple[Any, ...], tuple[int, int]] = {}

    def _old_pairs(self, view: GraphView) -> GraphPairs:
        stamp = (id(view), view.version)
        if self._view != stamp or self._old is None:
            self._view, self._old, self._cache = stamp, GraphPairs(view), {}
        return self._old

    # -- events -------------------------------------------------------------------------------

    def verdicts(
        self,
        event: Event,
        view: GraphView,
        limits: Limits = DEFAULT_LIMITS,
        watch: Callable[[str], None] | None = None,
    ) -> list[tuple[str, Verdict]]:
        """The subscriptions ``event`` adds solutions to, with them, sorted by id.

        Raises:
            EventLimitExceeded: the event's closure against the graph passes the limit.
        """
        delta = event_delta(view, event.triples, limits=limits)
        plus = delta.term_triples()
        found = self._run(view, plus, [], event.id, watch, is_change=False)
        return [(sub_id, v.added) for sub_id, v in found if v.added is not None]

    def counts(
        self, event: Event, view: GraphView, limits: Limits = DEFAULT_LIMITS
    ) -> dict[str, int]:
        """``{subscription id: added solutions}`` of the subscriptions the event matches."""
        return {i: v.count for i, v in self.verdicts(event, view, limits)}

    # -- graph changes ------------------------------------------------------------------------

    def change_verdicts(
        self, change: GraphChange, view: GraphView, watch: Callable[[str], None] | None = None
    ) -> list[tuple[str, ChangeVerdict]]:
        """The subscriptions whose answers ``change`` changes (``view``: the graph before
        it), with the solutions added and removed, sorted by id."""
        terms = [*view.terms.by_id, *change.new_terms]
        plus = term_triples(change.added, terms)
        minus = term_triples(change.removed, terms)
        found = self._run(view, plus, minus, f"change {change.version}", watch, is_change=True)
        return [(i, v) for i, v in found if v.added is not None or v.removed is not None]

    # -- both ---------------------------------------------------------------------------------

    def _run(
        self,
        view: GraphView,
        plus: list[Triple],
        minus: list[Triple],
        name: str,
        watch: Callable[[str], None] | None,
        *,
        is_change: bool,
    ) -> list[tuple[str, ChangeVerdict]]:
        if not plus and not minus:
            return []
        keys = change_keys([*plus, *minus])
        candidates = self.shapes.candidates(keys)
        if not candidates:
            return []
        old = self._old_pairs(view)
        new = GraphPairs(view, plus=plus, minus=minus, base=old)
        gains, losses = _pairs(name, plus), _pairs(name, minus)
        out: list[tuple[str, ChangeVerdict]] = []
        for key, shape in candidates:
            if watch is not None:
                watch(shape.ids[0])
            differ = Differ(old, new, gains, losses, keys, self.budget, self._cache)
            try:
                gained, lost = differ.diff(shape.where)
                if not gained and not lost:
                    continue
                verdict = self._settle(key, shape, differ, gained, lost, view, is_change)
            except OutOfBudget:
                continue
            if verdict.added is not None or verdict.removed is not None:
                out.extend((sub_id, verdict) for sub_id in shape.ids)
        out.sort(key=lambda item: item[0])
        return out

    def _settle(
        self,
        key: tuple[Any, ...],
        shape: Shape,
        differ: Differ,
        gained: Rows,
        lost: Rows,
        view: GraphView,
        is_change: bool,
    ) -> ChangeVerdict:
        limit = self.solution_limit
        if shape.ask:
            return self._ask(key, shape, differ, gained, lost, view, is_change)
        projection = shape.projection
        g = [tuple(r.get(v) for v in projection) for r in gained]
        lo = [tuple(r.get(v) for v in projection) for r in lost]
        if shape.distinct:
            added = [y for y in dict.fromkeys(g) if not _holds(differ, shape, y, OLD)]
            removed = [y for y in dict.fromkeys(lo) if not _holds(differ, shape, y, NEW)]
        else:
            added, removed = _minus(g, lo), _minus(lo, g)
        return ChangeVerdict(
            _verdict(projection, added, limit), _verdict(projection, removed, limit)
        )

    def _ask(
        self,
        key: tuple[Any, ...],
        shape: Shape,
        differ: Differ,
        gained: Rows,
        lost: Rows,
        view: GraphView,
        is_change: bool,
    ) -> ChangeVerdict:
        known = self._asks.get(key)
        if known is not None and known[0] == view.version:
            before = known[1]
        else:
            before = len(differ.evaluate(shape.where, {}, OLD))
            self._asks[key] = (view.version, before)
        after = before - len(lost) + len(gained)
        if is_change:  # the graph moves on: its count is known for the next version
            self._asks[key] = (view.version + 1, after)
        one = Verdict(1, ({},))
        return ChangeVerdict(
            one if before == 0 and after > 0 else None, one if before > 0 and after == 0 else None
        )


def _holds(differ: Differ, shape: Shape, row: Row, side: int) -> bool:
    """Whether the query has a solution projecting to ``row`` on ``side``."""
    seed = {v: t for v, t in zip(shape.projection, row, strict=True) if t is not None}
    projection = shape.projection
    for found in differ.evaluate(shape.where, seed, side, merge=False):
        if tuple(found.get(v) for v in projection) == row:
            return True
    return False


def _minus(a: list[Row], b: list[Row]) -> list[Row]:
    if not b:
        return a
    counts = Counter(b)
    out = []
    for row in a:
        if counts.get(row, 0) > 0:
            counts[row] -= 1
        else:
            out.append(row)
    return out


def _verdict(projection: tuple[str, ...], rows: Sequence[Row], limit: int) -> Verdict | None:
    if not rows:
        return None
    solutions = tuple(
        {v: t for v, t in zip(projection, row, strict=True) if t is not None}
        for row in rows[:limit]
    )
    return Verdict(len(rows), solutions)


def _pairs(name: str, triples: list[Triple]) -> EventPairs:
    by_prop: dict[str, list[tuple[str, Term]]] = {}
    for s, p, o in dict.fromkeys(triples):
        by_prop.setdefault(p, []).append((s, o))
    return EventPairs(EventParts(name, by_prop))
