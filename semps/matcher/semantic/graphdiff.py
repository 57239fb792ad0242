"""What a change of the graph does to a pattern's solutions, computed from the change.

The graph before (``old``: the closure of O+K) and after (``new``: of O+K+E for an event,
or of the edited graph) differ by a few triples: ``plus`` added, ``minus`` removed.
:meth:`Differ.diff` gives, for an algebra node, the solutions it gains and loses,
``new = old - lost + gained`` (multisets), without evaluating it over either graph in
full. It follows the algebra:

- **Basic graph patterns** (and joins): the delta rule. With the patterns in order,
  ``gained`` is, over every position ``k``, the prefix's old solutions joined with the rows
  pattern ``k`` gains, plus the prefix's gains joined with pattern ``k`` over the new graph
  (each new solution counted once, at the first pattern it uses a new triple for);
  ``lost`` likewise over the old graph. Joining "the prefix with a row" evaluates the
  prefix *seeded* with the row's bindings: lookups into the graph, never a scan.
- **UNION**, **FILTER** (without EXISTS), **BIND**: applied to each side's changes.
- **OPTIONAL**, **MINUS**, **FILTER (NOT) EXISTS**: a left solution that stays may still
  change its answer (an optional part found, a MINUS or an EXISTS now matched). Those are
  found from the right side's changes: the left solutions compatible with a changed right
  row (the left side evaluated seeded with that row's values for the variables both share
  and the left always binds), each then evaluated before and after, exactly.
- **Paths**: the pairs that change start from nodes that reach a changed edge of one of the
  path's properties; each such start is evaluated before and after (:mod:`.graphpaths`).

Seeding is used only where it is sound: a seed's variables must be bound in every solution
of the seeded node (:func:`certain`), or a solution leaving one unbound could pair with the
seed differently. Elsewhere the node is evaluated whole (the old graph's evaluations are
kept per graph version, so this is paid once per change of the graph, not per event).
Everything ticks the evaluators' work budget (:class:`~semps.ingest.sparql.evaluate.
OutOfBudget` past it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from semps._types import Term
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.evaluate import Evaluator, Pairs, compatible, term_value
from semps.ingest.sparql.model import TriplePattern, Var
from semps.matcher.semantic.graphpaths import path_diff
from semps.matcher.semantic.graphrows import NEW, OLD, Rows, Sol, certain
from semps.matcher.semantic.touchkeys import touched

__all__ = ["NEW", "OLD", "Atom", "ChangePairs", "Differ", "Rows", "Sol", "key_of", "subtract"]

Atom = TriplePattern | alg.PathPattern

#: Old-graph evaluations kept per graph version (rows in all, over every node).
CACHE_ROWS = 500_000


def key_of(row: Mapping[str, Term]) -> frozenset[tuple[str, Term]]:
    """A solution as a hashable value."""
    return frozenset(row.items())


def subtract(a: Rows, b: Rows) -> Rows:
    """The multiset difference ``a - b``."""
    if not b or not a:
        return a
    counts = Counter(key_of(r) for r in b)
    out = []
    for r in a:
        k = key_of(r)
        if counts.get(k, 0) > 0:
            counts[k] -= 1
        else:
            out.append(r)
    return out


@dataclass(frozen=True, slots=True)
class ChangePairs:
    """A change as a :class:`Differ` reads it.

    Attributes:
        old / new: the graph before and after (seeded lookups; whole scans only where a
            node must be evaluated whole).
        plus / minus: the triples added and removed, as pairs.
        keys: the change's touch keys (:func:`change_keys`).
    """

    old: Pairs
    new: Pairs
    plus: Pairs
    minus: Pairs
    keys: set[str | tuple[str, Term]]


class Differ:
    """The solutions a change gives and takes, node by node (see the module docstring).

    Args:
        change: the graph before and after, the change's triples and keys.
        budget: rows each side's evaluation may visit.
        cache: old-graph evaluations by node, kept for one graph version (shared by the
            events matched against it).
    """

    def __init__(
        self,
        change: ChangePairs,
        budget: int,
        cache: dict[Any, Any] | None = None,
        orders: dict[Any, Any] | None = None,
    ) -> None:
        self.ev = (Evaluator(change.old, budget), Evaluator(change.new, budget))
        #: The change's own triples: what it adds, what it removes.
        self.delta = (Evaluator(change.plus, budget), Evaluator(change.minus, budget))
        self.keys = change.keys
        #: Whether the change removes triples (an event's does not).
        self._minus = bool(change.minus.by_prop)
        self.cache = cache if cache is not None else {}
        #: Join orders by the patterns' identities and the bound variables (kept by a
        #: template's group across events: its patterns live as long as it).
        self._orders: dict[Any, Any] = orders if orders is not None else {}

    # -- evaluation with sound seeding -------------------------------------------------------

    def evaluate(self, node: alg.Node, seed: Sol, side: int, merge: bool = True) -> Rows:
        """The solutions of ``node`` on ``side`` compatible with ``seed`` (merged with it,
        or ``node``'s own bindings when not ``merge``)."""
        scope = alg.in_scope(node)
        own = {v: t for v, t in seed.items() if v in scope}
        if own.keys() <= certain(node):
            rows = self._eval(node, own, side)
        else:
            rows = [r for r in self._whole(node, side) if compatible(r, own)]
            if merge and own:
                rows = [{**r, **own} for r in rows]
        if merge and len(seed) > len(own):
            rows = [{**seed, **r} for r in rows]
        return rows

    def _whole(self, node: alg.Node, side: int) -> Rows:
        """``node``'s solutions unseeded (the old graph's kept per version)."""
        if side == NEW:
            return self._eval(node, {}, NEW)
        found = self.cache.get(node)
        if found is None:
            found = self._eval(node, {}, OLD)
            held = self.cache.get(_HELD, 0) + len(found)
            if held <= CACHE_ROWS:
                self.cache[node] = found
                self.cache[_HELD] = held
        return found

    def _eval(self, node: alg.Node, seed: Sol, side: int) -> Rows:  # noqa: C901
        ev = self.ev[side]
        kind = type(node)
        if kind is alg.BGP:
            return ev.bgp(self.ordered(node.triples, seed), seed)  # type: ignore[union-attr]
        if kind is alg.Join:
            out: Rows = []
            for left in self.evaluate(node.left, seed, side):  # type: ignore[union-attr]
                out.extend(self.evaluate(node.right, left, side))  # type: ignore[union-attr]
            ev.tick(len(out))
            return out
        if kind is alg.LeftJoin:
            return [
                row
                for left in self.evaluate(node.left, seed, side)  # type: ignore[union-attr]
                for row in self.extended(node, left, side)  # type: ignore[arg-type]
            ]
        if kind is alg.Union:
            either = self.evaluate(node.left, seed, side)  # type: ignore[union-attr]
            return either + self.evaluate(node.right, seed, side)  # type: ignore[union-attr]
        if kind is alg.Minus:
            return [
                left
                for left in self.evaluate(node.left, seed, side)  # type: ignore[union-attr]
                if self.survives(node, left, side)  # type: ignore[arg-type]
            ]
        if kind is alg.Filter:
            inner = self.evaluate(node.inner, seed, side)  # type: ignore[union-attr]
            return [r for r in inner if ev.passes(node.filters, r)]  # type: ignore[union-attr]
        if kind is alg.Extend:
            return self.extend(node, self.evaluate(node.inner, seed, side), side)  # type: ignore[arg-type,union-attr]
        return ev.values(node, seed)  # type: ignore[arg-type]

    def extended(self, node: alg.LeftJoin, left: Sol, side: int) -> Rows:
        """OPTIONAL: ``left`` extended by the compatible right solutions that pass the
        filters, or alone."""
        ev = self.ev[side]
        found = [r for r in self.evaluate(node.right, left, side) if ev.passes(node.filters, r)]
        return found or [left]

    def survives(self, node: alg.Minus, left: Sol, side: int) -> bool:
        """MINUS: no compatible right solution shares a variable with ``left``."""
        rows = self.evaluate(node.right, left, side, merge=False)
        self.ev[side].tick(len(rows))
        return not any(not left.keys().isdisjoint(r) for r in rows)

    def extend(self, node: alg.Extend, rows: Rows, side: int) -> Rows:
        """BIND over ``rows`` (an error leaves the variable unbound)."""
        ev, expr, out = self.ev[side], node.expr, []
        for s in rows:
            ev.tick()
            if type(expr) is alg.WithExists:
                value = term_value(expr.expr, ev.with_exists(expr, s))
            else:
                value = term_value(expr, s)
            out.append({**s, node.var: value} if value is not None else s)
        return out

    def ordered(self, atoms: tuple[Atom, ...], seed: Mapping[str, Term]) -> tuple[Atom, ...]:
        """The patterns in a join order from ``seed``: the most bound first, triples
        before paths (kept per pattern tuple and bound variables)."""
        bound = frozenset(seed)
        key = (tuple(map(id, atoms)), bound)
        found = self._orders.get(key)
        if found is None:  # (the patterns kept beside their order: their ids stay theirs)
            score = self.score
            remaining, names, order = list(atoms), set(bound), []
            while remaining:
                best = max(range(len(remaining)), key=lambda i: score(remaining[i], names, i))
                atom = remaining.pop(best)
                order.append(atom)
                names |= atom.variables()
            found = self._orders[key] = (atoms, tuple(order))
        return found[1]

    # -- differences --------------------------------------------------------------------------

    def diff(self, node: alg.Node) -> tuple[Rows, Rows]:
        """``(gained, lost)``: the solutions of ``node`` the change adds and removes."""
        if not touched(node, self.keys):
            return [], []
        kind = type(node)
        if kind is alg.BGP:
            return self.diff_bgp(node.triples)  # type: ignore[union-attr]
        if kind is alg.Join:
            return self.diff_join(node.left, node.right)  # type: ignore[union-attr]
        if kind is alg.Union:
            pl, ml = self.diff(node.left)  # type: ignore[union-attr]
            pr, mr = self.diff(node.right)  # type: ignore[union-attr]
            return pl + pr, ml + mr
        if kind is alg.Filter:
            return self.diff_filter(node)  # type: ignore[arg-type]
        if kind is alg.LeftJoin:
            return self.diff_optional(node)  # type: ignore[arg-type]
        if kind is alg.Minus:
            return self.diff_minus(node)  # type: ignore[arg-type]
        if kind is alg.Extend:
            if type(node.expr) is alg.WithExists:  # type: ignore[union-attr]
                return self.fallback(node)
            gained, lost = self.diff(node.inner)  # type: ignore[union-attr]
            return self.extend(node, gained, NEW), self.extend(node, lost, OLD)  # type: ignore[arg-type]
        return [], []

    def fallback(self, node: alg.Node) -> tuple[Rows, Rows]:
        """Both sides evaluated whole, and compared."""
        old, new = self._whole(node, OLD), self._whole(node, NEW)
        return subtract(new, old), subtract(old, new)

    def atom_touched(self, atom: Atom) -> bool:
        """Whether the change can change one pattern's rows."""
        return touched(alg.BGP((atom,)), self.keys)

    def atom_diff(self, atom: Atom) -> tuple[Rows, Rows]:
        """The rows one pattern gains and loses."""
        if type(atom) is alg.PathPattern:
            return path_diff(atom, self.ev, self.delta)
        plus, minus = self.delta  # (one pattern from no seed: its matches)
        return plus.match(atom, {}), minus.match(atom, {}) if self._minus else []

    def diff_bgp(self, atoms: tuple[Atom, ...]) -> tuple[Rows, Rows]:
        """The delta rule over the patterns in order (see the module docstring)."""
        diffs = [self.atom_diff(a) if self.atom_touched(a) else ([], []) for a in atoms]
        live = [bool(p or m) for p, m in diffs]
        if not any(live):
            return [], []
        if not any(m for _, m in diffs):
            return self.gains_only(atoms, diffs), []
        gained, lost = diffs[0]
        for k in range(1, len(atoms)):
            if not (gained or lost or any(live[k:])):
                return [], []
            prefix, atom = partial(self.seeded, atoms[:k]), partial(self.seeded, (atoms[k],))
            gained, lost = _expanded((gained, lost), diffs[k], prefix, atom)
        return gained, lost

    def gains_only(self, atoms: tuple[Atom, ...], diffs: list[tuple[Rows, Rows]]) -> Rows:
        """The delta rule when nothing is lost (an event): for each pattern ``k`` and each
        row it gains, the other patterns joined from the row, those before ``k`` over the
        old graph and those after it over the new one, in the order of what is bound (the
        row's nodes first: a reading's sensor, then its equipment, never every point of
        the graph)."""
        gained: Rows = []
        for k, (rows, _) in enumerate(diffs):
            if not rows:
                continue
            others = [(a, OLD) for a in atoms[:k]] + [(a, NEW) for a in atoms[k + 1 :]]
            ids = tuple((id(a), side) for a, side in others)
            for r in rows:
                gained.extend(self.mixed(others, r, ids))
        return gained

    def mixed(
        self, atoms: list[tuple[Atom, int]], seed: Sol, ids: tuple[Any, ...] | None = None
    ) -> Rows:
        """A basic graph pattern whose patterns each read their own side, from ``seed``,
        the most bound pattern next each time (``ids``: the patterns' ids and sides, when
        the caller has them)."""
        rows = [seed]
        for atom, side in self.mixed_order(atoms, seed, ids):
            rows = self.matches(atom, side, rows)
            if not rows:
                break
        return rows

    def mixed_order(
        self, atoms: list[tuple[Atom, int]], seed: Sol, ids: tuple[Any, ...] | None = None
    ) -> list[tuple[Atom, int]]:
        """:meth:`mixed`'s order: the most bound pattern next each time (kept as
        :meth:`ordered` keeps its orders)."""
        if ids is None:
            ids = tuple((id(a), side) for a, side in atoms)
        key = (ids, frozenset(seed))
        found = self._orders.get(key)
        if found is None:
            score, bound = self.score, set(seed)
            remaining, order = list(atoms), []
            while remaining:
                best = max(range(len(remaining)), key=lambda i: score(remaining[i][0], bound, i))
                atom, side = remaining.pop(best)
                order.append((atom, side))
                bound |= atom.variables()
            found = self._orders[key] = (list(atoms), order)
        return found[1]

    def matches(self, atom: Atom, side: int, rows: Rows) -> Rows:
        """``rows`` extended by the pattern's matches on ``side`` (:meth:`restrict` ed)."""
        match = self.ev[side].match
        return self.restrict(atom, [out for row in rows for out in match(atom, row)])

    def score(self, atom: Atom, bound: set[str] | frozenset[str], i: int) -> tuple[int, ...]:
        """A pattern's rank in a join order (the highest next)."""
        return _score(atom, bound, i)

    def restrict(self, atom: Atom, rows: Rows) -> Rows:
        """The rows a pattern's match gave that may matter (here: all of them; a template's
        differ drops those binding a parameter to a value no subscription has)."""
        return rows

    def seeded(self, atoms: tuple[Atom, ...], seed: Sol, side: int) -> Rows:
        """A basic graph pattern's solutions extending ``seed`` (every variable of a basic
        graph pattern is certain: seeding is always sound)."""
        return self.ev[side].bgp(self.ordered(atoms, seed), seed)

    def diff_join(self, a: alg.Node, b: alg.Node) -> tuple[Rows, Rows]:
        """``new = (A - mA + pA) join (B - mB + pB)``, expanded (:func:`_expanded`)."""
        evaluate = self.evaluate
        return _expanded(self.diff(a), self.diff(b), partial(evaluate, a), partial(evaluate, b))

    def affected(self, left: alg.Node, changed: Rows, shared: frozenset[str]) -> Rows:
        """The old solutions of ``left`` that ``changed`` right rows may affect: those
        compatible with a changed row on the ``shared`` variables (all of them, if a
        changed row leaves one unbound, or nothing is shared)."""
        keys: dict[frozenset[tuple[str, Term]], Sol] = {}
        for row in changed:
            if not shared or not shared <= row.keys():
                return self._whole(left, OLD)
            own = {v: row[v] for v in shared}
            keys.setdefault(key_of(own), own)
        return [r for seed in keys.values() for r in self.evaluate(left, seed, OLD)]

    def diff_filter(self, node: alg.Filter) -> tuple[Rows, Rows]:
        """FILTER: each side's changes filtered; with EXISTS, the unchanged solutions whose
        EXISTS answer the change flips."""
        inner_gained, inner_lost = self.diff(node.inner)
        new_ev, old_ev = self.ev[NEW], self.ev[OLD]
        gained = [r for r in inner_gained if new_ev.passes(node.filters, r)]
        lost = [r for r in inner_lost if old_ev.passes(node.filters, r)]
        patterns = _exists_patterns(node.filters)
        if not any(touched(x, self.keys) for x in patterns):
            return gained, lost
        stay = subtract(self._flippable(node.inner, patterns), inner_lost)
        for row in stay:
            before, after = old_ev.passes(node.filters, row), new_ev.passes(node.filters, row)
            if after and not before:
                gained.append(row)
            elif before and not after:
                lost.append(row)
        return gained, lost

    def _flippable(self, inner: alg.Node, patterns: Sequence[alg.Node]) -> Rows:
        """The old solutions of ``inner`` an EXISTS pattern's change may concern."""
        shared_sets = set()
        changed: Rows = []
        for x in patterns:
            if not _simple(x):
                return self._whole(inner, OLD)
            gx, lx = self.diff(x)
            changed += gx + lx
            shared_sets.add(certain(inner) & alg.in_scope(x))
        if len(shared_sets) != 1:
            return self._whole(inner, OLD)
        return self.affected(inner, changed, shared_sets.pop())

    def diff_optional(self, node: alg.LeftJoin) -> tuple[Rows, Rows]:
        """OPTIONAL: new left solutions extended over the new graph, lost ones over the old;
        staying left solutions with a changed compatible right row re-extended both ways."""
        if _exists_patterns(node.filters):
            return self.fallback(node)
        pl, ml = self.diff(node.left)
        pr, mr = self.diff(node.right)
        gained = [row for a in pl for row in self.extended(node, a, NEW)]
        lost = [row for a in ml for row in self.extended(node, a, OLD)]
        if pr or mr:
            shared = certain(node.left) & alg.in_scope(node.right)
            for u in subtract(self.affected(node.left, pr + mr, shared), ml):
                before, after = self.extended(node, u, OLD), self.extended(node, u, NEW)
                if Counter(map(key_of, before)) != Counter(map(key_of, after)):
                    gained += after
                    lost += before
        return gained, lost

    def diff_minus(self, node: alg.Minus) -> tuple[Rows, Rows]:
        """MINUS: new left solutions that survive the new right side, lost ones that
        survived the old; staying left solutions sharing a variable with a changed right
        row checked both ways."""
        pl, ml = self.diff(node.left)
        pr, mr = self.diff(node.right)
        gained = [a for a in pl if self.survives(node, a, NEW)]
        lost = [a for a in ml if self.survives(node, a, OLD)]
        left_scope = alg.in_scope(node.left)
        shared = certain(node.left) & alg.in_scope(node.right)
        changed = [r for r in pr + mr if not left_scope.isdisjoint(r)]  # (others remove none)
        if changed:
            for u in subtract(self.affected(node.left, changed, shared), ml):
                before, after = self.survives(node, u, OLD), self.survives(node, u, NEW)
                if after and not before:
                    gained.append(u)
                elif before and not after:
                    lost.append(u)
        return gained, lost


_HELD = ("rows held",)


def _expanded(
    a: tuple[Rows, Rows],
    b: tuple[Rows, Rows],
    a_from: Callable[[Sol, int], Rows],
    b_from: Callable[[Sol, int], Rows],
) -> tuple[Rows, Rows]:
    """``A join B``'s gains and losses from each side's, ``(pA, mA)`` and ``(pB, mB)``:
    ``(A - mA + pA) join (B - mB + pB)`` expanded, ``a_from(row, side)`` extending a row
    by A's solutions over that graph (``b_from`` by B's)."""
    (pa, ma), (pb, mb) = a, b
    gained = [row for r in pb for row in a_from(r, OLD)]
    if ma and pb:
        gained = subtract(gained, _joined(ma, pb))
    gained += [row for r in pa for row in b_from(r, NEW)]
    lost = [row for r in ma for row in b_from(r, OLD)]
    lost += [row for r in mb for row in a_from(r, OLD)]
    if ma and mb:
        lost = subtract(lost, _joined(ma, mb))
    return gained, lost


def _joined(a: Rows, b: Rows) -> Rows:
    """Every compatible pair of ``a`` and ``b`` rows, merged."""
    return [{**x, **y} for x in a for y in b if compatible(x, y)]


def _exists_patterns(filters: Iterable[Any]) -> list[alg.Node]:
    out: list[alg.Node] = []
    for f in filters:
        if type(f) is alg.Exists:
            out.append(f.pattern)
        elif type(f) is alg.WithExists:
            out.extend(e.pattern for _, e in f.exists)
    return out


def _simple(node: alg.Node) -> bool:
    """A pattern whose substitution by a solution equals joining with it: triples, paths
    and filters without EXISTS."""
    if type(node) is alg.BGP:
        return True
    if type(node) is alg.Filter:
        return not _exists_patterns(node.filters) and _simple(node.inner)
    return False


def _score(atom: Atom, bound: set[str] | frozenset[str], i: int) -> tuple[int, int, int, int]:
    """Join order: the patterns with a bound variable first (a node the solution already
    has: a lookup), then those with constants (a class: maybe every sensor), triples before
    paths."""
    ends: list[Any] = [atom.s, atom.o]
    if type(atom) is TriplePattern:
        ends.append(atom.p)
    tied = sum(type(t) is Var and t.name in bound for t in ends)
    known = sum(type(t) is not Var for t in ends)
    return (tied, known, type(atom) is TriplePattern, -i)
