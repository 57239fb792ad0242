"""The change of a template's solutions (:mod:`.graphtemplate`), restricted to the
parameter values its subscriptions use.

A template's parameters are variables where its subscriptions have constants: evaluated
as they are, ``?s a ?class`` would give every class of a sensor, and ``?room brick:isPartOf
?floor`` every floor. :class:`TemplateDiffer` is a :class:`~.graphdiff.Differ` that drops a
solution as soon as one of its patterns binds a parameter to a value no subscription of
the template has (its *domain*), pattern by pattern as the join goes: a parameter with a
few values is bound to each before its pattern is looked up (``?p a ?class`` for the one
class the subscriptions name: a lookup by both ends, never the sensor's every class), and
a parameter counts as a constant in the join order. Dropping those is exact: they reach
no subscription. The unseeded evaluations the differ keeps per graph version are not
restricted, so they stay valid when subscriptions come and go.

A basic graph pattern with a property the graph has no triple of (and the change brings
none) has no solution: it is not evaluated (the old graph's readings, when readings come
only with events: the left side of "a zone above its setpoint" seeded with every reading).

What does not change from event to event (join orders, each pattern's parameters) is kept
in the template's :class:`TemplatePlan`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any

from semps._types import Term
from semps.graph.pairs import GraphPairs
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.evaluate import Evaluator, OutOfBudget, bind_link
from semps.ingest.sparql.model import TriplePattern, Var
from semps.matcher.semantic._graph_kernels import bgp_gains
from semps.matcher.semantic.graphdiff import Atom, ChangePairs, Differ
from semps.matcher.semantic.graphjoin import (
    EXPAND,
    EventIds,
    GainsPlan,
    Params,
    compile_gains,
    usable,
)
from semps.matcher.semantic.graphrows import NEW, OLD, Rows, Sol
from semps.matcher.semantic.touchkeys import ANY, touch_keys

__all__ = ["EXPAND", "TemplateDiffer", "TemplatePlan"]

#: Where a change's triples as ids are kept (in the new graph's pairs' cache: one event).
_EVENT_IDS = ("event ids",)


class TemplatePlan:
    """What a template's differ keeps across events: join orders, and each pattern's
    parameters with their domains (the domain objects are the group's, updated in place
    as subscriptions come and go)."""

    __slots__ = ("binds", "joins", "keys", "orders", "stamp")

    def __init__(self) -> None:
        self.orders: dict[Any, Any] = {}
        #: Compiled basic graph patterns (:mod:`.graphjoin`), for one graph version
        #: (``stamp``) and these domains (cleared when a subscription comes or goes).
        self.joins: dict[Any, Any] = {}
        self.stamp: tuple[int, int] | None = None
        #: id(pattern) -> (the pattern, its parameters and their domains).
        self.binds: dict[int, tuple[Atom, Params]] = {}
        #: id(pattern) -> (the pattern, its touch keys).
        self.keys: dict[int, tuple[Atom, frozenset[Any]]] = {}


class TemplateDiffer(Differ):
    """A :class:`~.graphdiff.Differ` whose patterns' rows keep only the parameter values
    of ``domains`` (parameter name -> the values its subscriptions use).

    Args:
        has: whether the old graph holds a triple of a property (``has(iri)``).
        plan: the template's plan (a fresh one when ``None``).
    """

    def __init__(
        self,
        change: ChangePairs,
        budget: int,
        cache: dict[object, object] | None,
        domains: Mapping[str, Collection[Term]],
        has: Callable[[Any], bool] | None = None,
        plan: TemplatePlan | None = None,
    ) -> None:
        plan = plan if plan is not None else TemplatePlan()
        super().__init__(change, budget, cache, plan.orders)
        self.domains = domains
        self.has = has
        self._binds = plan.binds
        self._keys = plan.keys
        #: Whether the differ is evaluating the old graph unseeded (kept per graph version
        #: for every template: then nothing is restricted).
        self._plain = False
        self._plain_orders: dict[Any, Any] = {}
        #: (id(pattern), side) -> the pattern and whether that side lacks its property.
        self._lacks: dict[tuple[int, int], tuple[Atom, bool]] = {}
        #: Whether basic graph patterns' gains are compiled (:mod:`.graphjoin`): both
        #: sides one view's closure, the change adding triples only (an event).
        self._fast = usable(self.ev)
        self._joins = plan.joins
        if self._fast:
            view = change.old.view  # type: ignore[attr-defined]
            stamp = (id(view), view.version)
            if plan.stamp != stamp:
                plan.joins.clear()
                plan.stamp = stamp

    def _params(self, atom: Atom) -> Params:
        found = self._binds.get(id(atom))
        if found is None or found[0] is not atom:
            domains = self.domains
            params = tuple((name, domains[name]) for name in atom.variables() if name in domains)
            found = self._binds[id(atom)] = (atom, params)
        return found[1]

    def atom_touched(self, atom: Atom) -> bool:
        found = self._keys.get(id(atom))
        if found is None or found[0] is not atom:
            found = self._keys[id(atom)] = (atom, touch_keys(alg.BGP((atom,))))
        keys = found[1]
        return bool(keys) and (ANY in keys or not keys.isdisjoint(self.keys))

    def restrict(self, atom: Atom, rows: Rows) -> Rows:
        if not rows:
            return rows
        for name, domain in self._params(atom):
            rows = [r for r in rows if r[name] in domain]
        return rows

    def atom_diff(self, atom: Atom) -> tuple[Rows, Rows]:
        gained, lost = super().atom_diff(atom)
        return self.restrict(atom, gained), self.restrict(atom, lost)

    def seeded(self, atoms: tuple[Atom, ...], seed: Sol, side: int) -> Rows:
        return self._bgp(atoms, seed, side)

    def diff_bgp(self, atoms: tuple[Atom, ...]) -> tuple[Rows, Rows]:
        if self._fast:
            found = self._gains(atoms)
            if found is not None:
                return found, []
        return super().diff_bgp(atoms)

    def _gains(self, atoms: tuple[Atom, ...]) -> Rows | None:
        """:meth:`diff_bgp`'s gains from the compiled plan (None: left to Python)."""
        found = self._joins.get(id(atoms))
        if found is None or found[0] is not atoms:
            view = self.ev[OLD].pairs.view  # type: ignore[attr-defined]
            plan = compile_gains(
                atoms, view, self._params, partial(self._order, atoms), self._touch, self.has
            )
            found = self._joins[id(atoms)] = (atoms, plan)
        plan = found[1]
        keys = self.keys
        if plan is None or (plan.path_props and not plan.path_props.isdisjoint(keys)):
            return None
        event = self._event_ids()
        if plan.foreign and not plan.foreign.isdisjoint(event.new_terms):
            return None
        return self._run_plan(plan, event)

    def _run_plan(self, plan: GainsPlan, event: EventIds) -> Rows:
        evs = self.ev
        touched, skip = plan.flags(event.keys)
        rows, tags, old_left, new_left = bgp_gains(
            plan.atoms, touched, skip, plan.k_lo, plan.k_hi, plan.steps, plan.doms,
            plan.restricts, plan.sdoms, plan.by_s, plan.by_o, plan.event_prop_ids(event),
            event.ov_p, event.ov_s, event.ov_o, len(plan.names), evs[OLD].budget,
            evs[NEW].budget,
        )  # fmt: skip
        evs[OLD].budget, evs[NEW].budget = int(old_left), int(new_left)
        if old_left < 0 or new_left < 0:
            raise OutOfBudget
        if not len(tags):
            return []
        view = evs[OLD].pairs.view  # type: ignore[attr-defined]
        names, orders, term = plan.names, plan.key_orders, event.term
        return [
            {names[s]: term(view, ids[s]) for s in orders[k]}
            for ids, k in zip(rows.tolist(), tags.tolist(), strict=True)
        ]

    def _order(self, atoms: tuple[Atom, ...], k: int) -> list[tuple[Atom, int]]:
        """The join order :meth:`gains_only` takes from pattern ``k``'s rows."""
        others = [(a, OLD) for a in atoms[:k]] + [(a, NEW) for a in atoms[k + 1 :]]
        ids = tuple((id(a), side) for a, side in others)
        return self.mixed_order(others, dict.fromkeys(atoms[k].variables()), ids)  # type: ignore[arg-type]

    def _touch(self, atom: Atom) -> frozenset[Any]:
        found = self._keys.get(id(atom))
        if found is None or found[0] is not atom:
            found = self._keys[id(atom)] = (atom, touch_keys(alg.BGP((atom,))))
        return found[1]

    def _event_ids(self) -> EventIds:
        cache = self.ev[NEW].pairs.path_cache
        found: EventIds | None = cache.get(_EVENT_IDS)
        if found is None:
            view = self.ev[OLD].pairs.view  # type: ignore[attr-defined]
            found = cache[_EVENT_IDS] = EventIds(view, self.delta[0].pairs.by_prop, self.keys)
        return found

    def gains_only(self, atoms: tuple[Atom, ...], diffs: list[tuple[Rows, Rows]]) -> Rows:
        """The delta rule's terms that can give a row: pattern ``k``'s gains joined with
        the patterns before it over the old graph and after it over the new one, none of
        them with a property that side has no triple of (a reading's value gained, its
        reading in the old graph: none)."""
        live = [
            d
            if d[0] and not self._empty(atoms[:k], OLD) and not self._empty(atoms[k + 1 :], NEW)
            else ([], [])
            for k, d in enumerate(diffs)
        ]
        return super().gains_only(atoms, live)

    def score(self, atom: Atom, bound: set[str] | frozenset[str], i: int) -> tuple[int, ...]:
        """The differ's rank, a parameter counted as a constant (its values are those of
        the domain: a lookup for each, never a scan)."""
        tied, known, triple, order = super().score(atom, bound, i)
        if self._plain:
            return tied, known, triple, order
        extra = sum(1 for name, _ in self._params(atom) if name not in bound)
        return tied, known + extra, triple, order

    def _whole(self, node: alg.Node, side: int) -> Rows:
        if side != OLD or self._plain:
            return super()._whole(node, side)
        self._plain, orders = True, self._orders
        self._orders = self._plain_orders
        try:
            return super()._whole(node, side)
        finally:
            self._plain, self._orders = False, orders

    def _eval(self, node: alg.Node, seed: Sol, side: int) -> Rows:
        if type(node) is not alg.BGP or self._plain:
            return super()._eval(node, seed, side)
        return self._bgp(node.triples, seed, side)

    def _bgp(self, atoms: tuple[Atom, ...], seed: Sol, side: int) -> Rows:
        """A basic graph pattern from ``seed``, each pattern's matches restricted to the
        domains as they come (a class no subscription names ends the row there)."""
        if self._empty(atoms, side):
            return []
        ev = self.ev[side]
        rows = [dict(seed)]
        for atom in self.ordered(atoms, seed):
            out: Rows = []
            for row in rows:
                out.extend(self._match(ev, atom, row))
            rows = out
            if not rows:
                break
        return rows

    def matches(self, atom: Atom, side: int, rows: Rows) -> Rows:
        ev, out = self.ev[side], []
        for row in rows:
            out.extend(self._match(ev, atom, row))
        return out

    def _empty(self, atoms: tuple[Atom, ...], side: int) -> bool:
        """Whether a pattern's property has no triple on ``side`` (then neither has the
        basic graph pattern a solution)."""
        if self.has is None:
            return False
        known, lacks = self._lacks, self._lacking
        for atom in atoms:
            found = known.get((id(atom), side))
            if found is None or found[0] is not atom:
                found = known[(id(atom), side)] = (atom, lacks(atom, side))
            if found[1]:
                return True
        return False

    def _lacking(self, atom: Atom, side: int) -> bool:
        """Whether ``side`` has no triple of the pattern's property (kept for the differ's
        change)."""
        has = self.has
        if has is None or type(atom) is not TriplePattern or type(atom.p) is not str:
            return False
        return not has(atom.p) and (side == OLD or atom.p not in self.keys)

    def _match(self, ev: Evaluator, atom: Atom, row: Sol) -> Rows:
        params = self._params(atom)
        if not params:
            return _link(ev, atom, row)
        open_ = [(n, d) for n, d in params if n not in row]
        if len(open_) == 1 and len(open_[0][1]) <= EXPAND:
            name, domain = open_[0]
            found = _expanded(ev, atom, row, name, domain)
            if found is not None:
                return found
            out: Rows = []
            for value in domain:
                out.extend(_link(ev, atom, {**row, name: value}))
            return out
        return self.restrict(atom, _link(ev, atom, row))


def _expanded(
    ev: Evaluator, atom: Atom, row: Sol, name: str, domain: Collection[Term]
) -> Rows | None:
    """A triple pattern with a bound subject and the parameter ``name`` as object, matched
    for each of the parameter's values with one lookup of the subject (a sensor's classes
    read once, not once per class the subscriptions name): the rows and ticks of matching
    it bound to each value in turn; ``None`` where that does not apply."""
    pairs = ev.pairs
    if type(atom) is not TriplePattern or type(pairs) is not GraphPairs:
        return None
    prop, s_t, o_t = atom.p, atom.s, atom.o
    if type(prop) is not str:
        return None
    if type(o_t) is not Var or o_t.name != name or (type(s_t) is Var and s_t.name == name):
        return None  # (a parameter subject: looked up by each value, its own few objects)
    bound: Term | None = row.get(s_t.name) if type(s_t) is Var else s_t  # type: ignore[assignment]
    if bound is None:
        return None
    counts = pairs.object_counts(prop, bound)
    out: Rows = []
    for value in domain:
        n = counts.get(value)
        if n:
            ev.tick(n)
            out.extend({**row, name: value} for _ in range(n))
    return out


def _link(ev: Evaluator, atom: Atom, row: Sol) -> Rows:
    """``ev.match(atom, row)``, for a triple pattern with a constant property and a bound
    end over a graph's pairs straight from their lookup (the same rows in the same order,
    the same work ticked, bound as :meth:`Evaluator.match_link` binds them: the
    evaluator's layers cost more than the lookup)."""
    pairs = ev.pairs
    if type(atom) is not TriplePattern or type(pairs) is not GraphPairs:
        return ev.match(atom, row)
    prop, s_t, o_t = atom.p, atom.s, atom.o
    if type(prop) is not str:
        return ev.match(atom, row)
    s: Term | None = row.get(s_t.name) if type(s_t) is Var else s_t  # type: ignore[assignment]
    o: Term | None = row.get(o_t.name) if type(o_t) is Var else o_t  # type: ignore[assignment]
    if s is not None:
        found = pairs.lookup(prop, s, 0)
        if o is not None:
            found = [r for r in found if r[1] == o]
    elif o is not None:
        found = pairs.lookup(prop, o, 1)
    else:
        return ev.match(atom, row)
    ev.tick(len(found))
    return bind_link(atom, row, s, o, found)
