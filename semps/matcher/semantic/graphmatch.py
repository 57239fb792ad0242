"""Matching with a knowledge graph: the solutions an event adds, and a graph change's
added and removed solutions, per subscription.

An event E notifies subscription Q with ``added(Q, E) = sols(Q, closure(O+K+E)) -
sols(Q, closure(O+K))`` (a multiset difference); a change of K notifies Q with the
solutions it adds and those it removes. Both come from the change's triples (an event's:
:func:`~semps.graph.delta.event_delta`), for the subscriptions the change can touch only
(:class:`~.graphgroups.GraphGroups`: by the properties and classes of their patterns, and
the patterns the graph cannot satisfy without the change). Subscriptions that differ only
in constants share a template (:mod:`.graphtemplate`), whose changed solutions are
computed once (:class:`~.templatediff.TemplateDiffer`) and dispatched to them by their
constants and post filters (:mod:`.graphgroups`, :mod:`.graphthresholds`); a template
whose evaluation passes the work budget has its subscriptions evaluated one by one, on
their own patterns, until the graph changes. Then, per subscription, the query form:

- SELECT: the gained and lost solutions projected; without DISTINCT, ``added = gained -
  lost`` as multisets (projection keeps multiplicities); with DISTINCT, a projected row is
  added when some gained solution gives it and no solution over the old graph did (checked
  by evaluating the query seeded with the row).
- ASK: its one empty solution is added when the answer goes from false to true (removed
  when true to false); the count of solutions over the graph is kept per graph version
  (computed once, then carried across changes by their gains and losses).
"""

from __future__ import annotations

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
from semps.matcher.semantic.graphdiff import ChangePairs, Differ
from semps.matcher.semantic.graphgroups import GraphGroups, Group, graph_has
from semps.matcher.semantic.graphrows import NEW, OLD, Rows, Sol, multiset_minus
from semps.matcher.semantic.graphtemplate import Template, instantiate
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.templatediff import TemplateDiffer
from semps.matcher.semantic.touchkeys import change_keys
from semps.matcher.values import Verdict

Row: TypeAlias = "tuple[Term | None, ...]"


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
    """What a verdict is settled on: a pattern evaluated seeded with ``seed`` (a template's
    parameters bound to a subscription's constants; empty for a subscription's own
    pattern) and then filtered by ``post``, and the query form."""

    where: Node
    projection: tuple[str, ...]
    distinct: bool
    ask: bool
    seed: Sol = field(default_factory=dict)
    post: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class ChangeVerdict:
    """What one graph change did to one subscription's answers: the solutions added and
    removed (either may be ``None``: nothing)."""

    added: Verdict | None
    removed: Verdict | None


class GraphMatching:
    """The matcher's state for matching against graphs: the subscriptions by template, and
    what it keeps per graph version (the old graph's pairs and evaluations, ASK counts)."""

    def __init__(self, solution_limit: int, budget: int) -> None:
        self.groups = GraphGroups()
        self.solution_limit = solution_limit
        self.budget = budget
        self._view: tuple[int, int] | None = None
        self._old: GraphPairs | None = None
        self._cache: dict[Any, Any] = {}
        self._has: dict[Any, bool] = {}
        #: Per template, the touch keys of its required patterns the graph has nothing for.
        self._absent: dict[Template, tuple[frozenset[Any], ...]] = {}
        #: Templates whose evaluation ran out of budget at this version: their
        #: subscriptions are matched one by one until the graph changes.
        self._slow: set[Template] = set()
        #: ASK subscriptions' solution counts over the graph: (version, count).
        self._asks: dict[Any, tuple[int, int]] = {}

    def add(self, sub: CompiledSubscription) -> None:
        """Index a subscription (replacing one with its id)."""
        self.groups.add(sub, where_of(sub))

    def remove(self, sub_id: str) -> None:
        """Drop a subscription (no error when it is not there)."""
        found = self.groups.member_of.get(sub_id)
        self.groups.remove(sub_id)
        if found is not None:
            self._asks.pop(found, None)

    def _old_pairs(self, view: GraphView) -> GraphPairs:
        stamp = (id(view), view.version)
        if self._view != stamp or self._old is None:
            self._view, self._old, self._cache = stamp, GraphPairs(view), {}
            self._has, self._slow, self._absent = {}, set(), {}
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
        groups = self.groups.candidates(keys)
        if not groups:
            return []
        old = self._old_pairs(view)
        has = self._graph_has(view)
        groups = [g for g in groups if self._possible(g, keys, has)]
        if not groups:
            return []
        new = GraphPairs(view, plus=plus, minus=minus, base=old)
        change = ChangePairs(old, new, _pairs(name, plus), _pairs(name, minus), keys)
        run = _Run(change, view, is_change, has)
        out: list[tuple[str, ChangeVerdict]] = []
        for group in groups:
            if watch is not None:
                watch(next(iter(group.members())).ids[0])
            if group.template in self._slow:
                out.extend(self._one_by_one(group, run, watch))
                continue
            try:
                out.extend(self._group(group, run))
            except OutOfBudget:
                self._slow.add(group.template)
                out.extend(self._one_by_one(group, run, watch))
        out.sort(key=lambda item: item[0])
        return out

    def _possible(self, group: Group, keys: set[Any], has: Callable[[Any], bool]) -> bool:
        """:meth:`Group.possible`, the graph's side kept per graph version."""
        absent = self._absent.get(group.template)
        if absent is None:
            absent = self._absent[group.template] = group.absent(has)
        return all(not k.isdisjoint(keys) for k in absent)

    def _graph_has(self, view: GraphView) -> Callable[[Any], bool]:
        has, known = graph_has(view), self._has

        def cached(key: Any) -> bool:
            found = known.get(key)
            if found is None:
                found = known[key] = has(key)
            return found

        return cached

    def _group(self, group: Group, run: _Run) -> list[tuple[str, ChangeVerdict]]:
        """A template evaluated once, its changed solutions dispatched to its subscriptions
        (raises OutOfBudget: then one by one)."""
        t = group.template
        differ = TemplateDiffer(
            run.change, self.budget, self._cache, group.domains, run.has, group.plan
        )
        gained, lost = differ.diff(t.where)
        if not gained and not lost:
            return []
        out: list[tuple[str, ChangeVerdict]] = []
        for member, g, lo in group.dispatch(gained, lost):
            seed = dict(zip(t.params, member.constants, strict=True))
            shape = Shape(t.where, t.projection, t.distinct, t.ask, seed, member.post)
            key = (t, member.constants, member.post)
            verdict = self._settle(key, shape, differ, g, lo, run)
            if verdict.added is not None or verdict.removed is not None:
                out.extend((sub_id, verdict) for sub_id in member.ids)
        return out

    def _one_by_one(
        self, group: Group, run: _Run, watch: Callable[[str], None] | None
    ) -> list[tuple[str, ChangeVerdict]]:
        """Each subscription of a template on its own pattern (a template past the budget:
        its subscriptions' own constants may bound what the template's did not)."""
        t = group.template
        out: list[tuple[str, ChangeVerdict]] = []
        for member in list(group.members()):
            if watch is not None:
                watch(member.ids[0])
            where = instantiate(t, member.constants, member.post)
            shape = Shape(where, t.projection, t.distinct, t.ask)
            differ = Differ(run.change, self.budget, self._cache)
            try:
                gained, lost = differ.diff(where)
                if not gained and not lost:
                    continue
                key = (t, member.constants, member.post)
                verdict = self._settle(key, shape, differ, gained, lost, run)
            except OutOfBudget:
                continue
            if verdict.added is not None or verdict.removed is not None:
                out.extend((sub_id, verdict) for sub_id in member.ids)
        return out

    def _settle(
        self,
        key: Any,
        shape: Shape,
        differ: Differ,
        gained: Rows,
        lost: Rows,
        run: _Run,
    ) -> ChangeVerdict:
        limit = self.solution_limit
        if shape.ask:
            return self._ask(key, shape, differ, len(gained) - len(lost), run)
        projection = shape.projection
        g = [tuple(r.get(v) for v in projection) for r in gained]
        lo = [tuple(r.get(v) for v in projection) for r in lost]
        if shape.distinct:
            added = [y for y in dict.fromkeys(g) if not _holds(differ, shape, y, OLD)]
            removed = [y for y in dict.fromkeys(lo) if not _holds(differ, shape, y, NEW)]
        else:
            added, removed = multiset_minus(g, lo), multiset_minus(lo, g)
        return ChangeVerdict(
            _verdict(projection, added, limit), _verdict(projection, removed, limit)
        )

    def _ask(self, key: Any, shape: Shape, differ: Differ, gain: int, run: _Run) -> ChangeVerdict:
        """An ASK's verdict: its solutions' count before the change (kept per graph
        version) and after it (``gain`` more)."""
        view = run.view
        known = self._asks.get(key)
        if known is not None and known[0] == view.version:
            before = known[1]
        else:
            before = len(_solutions(differ, shape, shape.seed, OLD))
            self._asks[key] = (view.version, before)
        after = before + gain
        if run.is_change:  # the graph moves on: its count is known for the next version
            self._asks[key] = (view.version + 1, after)
        one = Verdict(1, ({},))
        return ChangeVerdict(
            one if before == 0 and after > 0 else None, one if before > 0 and after == 0 else None
        )


@dataclass(frozen=True, slots=True)
class _Run:
    """One change being matched: the graph before and after, its triples, its keys."""

    change: ChangePairs
    view: GraphView
    is_change: bool
    #: Whether the old graph holds a triple a touch key names (cached per version).
    has: Callable[[Any], bool]


def _solutions(differ: Differ, shape: Shape, seed: Sol, side: int) -> Rows:
    """The shape's solutions on ``side`` compatible with ``seed`` (its own bindings), its
    post filters applied."""
    rows = differ.evaluate(shape.where, seed, side, merge=False)
    if shape.post:
        ev = differ.ev[side]
        rows = [r for r in rows if ev.passes(shape.post, r)]
    return rows


def _holds(differ: Differ, shape: Shape, row: Row, side: int) -> bool:
    """Whether the query has a solution projecting to ``row`` on ``side``."""
    projection = shape.projection
    seed = {v: t for v, t in zip(projection, row, strict=True) if t is not None}
    seed.update(shape.seed)
    for found in _solutions(differ, shape, seed, side):
        if tuple(found.get(v) for v in projection) == row:
            return True
    return False


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
