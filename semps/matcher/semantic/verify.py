"""Phase 3, verification: join a surviving subscription's binding tables with consistent
variable bindings, apply its FILTERs and count its solutions (the seed's CounterSec).

A subscription's patterns are verified per connected component
(:class:`~semps.matcher.semantic.compiled.Component`): the solution count is the product of
the components' counts (with DISTINCT, of their distinct counts over their own projected
variables), so disconnected patterns never enumerate their cross product. Within a
component the join is a loop over an explicit stack (no recursion a subscription's pattern
count could deepen), and a last step that adds no constraint is counted by its row count
once the kept solutions are full.

**Work budget.** Each verification may visit at most ``budget`` rows
(:data:`DEFAULT_STEP_BUDGET`). When a component's join reaches it, the verification stops:
its verdict is *truncated* (``Verdict.truncated``; a match carries
``detail["truncated"] = True``) and its count is a lower bound, the solutions found so far;
a truncated verification that found no solution yet reports no match. Counts are Python
ints, exact whenever not truncated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice, product
from typing import cast

from semps._types import Term
from semps.matcher.semantic.codes import ALL, BY_O, BY_S
from semps.matcher.semantic.compiled import CompiledSubscription, Component
from semps.matcher.semantic.evaluate import Evaluator, OutOfBudget
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.values import Verdict

Rows = list[tuple[str, Term]]
Bindings = dict[str, Term]

#: Solutions carried by a match (the count is always exact unless truncated).
DEFAULT_SOLUTION_LIMIT = 100

#: Rows one verification may visit before it stops with a truncated count (about a
#: second of CPU at worst: 436k rows of a three-pattern join took 0.52 s on the 2-core
#: machine).
DEFAULT_STEP_BUDGET = 1_000_000


class _Found:
    """What one component's join found: its count, first rows and whether it stopped;
    :meth:`keep` takes each solution the join reaches."""

    __slots__ = ("count", "first_only", "limit", "rows", "seen", "truncated")

    def __init__(self, limit: int, distinct: bool, first_only: bool) -> None:
        self.count = 0
        self.rows: list[tuple[Term | None, ...]] = []
        self.truncated = False
        self.limit = limit
        self.seen: set[tuple[Term | None, ...]] | None = set() if distinct else None
        self.first_only = first_only

    def keep(self, solution: tuple[Term | None, ...]) -> bool:
        """Count a solution (unless DISTINCT has seen it) and keep it while fewer than
        ``limit`` are kept; True when the join may stop (``first_only``: ASK, or a
        DISTINCT component that projects nothing)."""
        seen = self.seen
        if seen is not None:
            if solution in seen:
                return False
            seen.add(solution)
        self.count += 1
        if len(self.rows) < self.limit:
            self.rows.append(solution)
        return self.first_only


def _step_rows(
    pairs: EventPairs, step: tuple[object, ...], b: Bindings
) -> Sequence[tuple[str, Term]]:
    prop, key, mode, s_var, o_var = step[0], step[1], step[2], step[3], step[4]
    if mode == ALL:
        return pairs.table(prop, key)  # type: ignore[arg-type]
    if mode == BY_S:
        return pairs.index(prop, key, 0).get(b[s_var], ())  # type: ignore[arg-type,index]
    if mode == BY_O:
        return pairs.index(prop, key, 1).get(b[o_var], ())  # type: ignore[arg-type,index]
    pair = (b[s_var], b[o_var])  # type: ignore[index]
    return (pair,) if pair in pairs.pair_set(prop, key) else ()  # type: ignore[arg-type]


def _join_one(comp: Component, pairs: EventPairs, found: _Found, budget: int) -> int:
    """:func:`_join` for a one-pattern component: one pass over its binding table."""
    prop, key, _, s_var, o_var, _ = comp.plan[0]
    table = pairs.table(prop, key)
    checks = comp.step_checks[0] + comp.late_checks
    projection = comp.projection
    loop = s_var is not None and s_var == o_var
    if not (checks or found.seen is not None or found.first_only or loop):
        budget -= 1
        for s, o in table[: found.limit]:
            full = {s_var: s, o_var: o}
            found.rows.append(tuple(full.get(v) for v in projection))
        found.count = len(table)
        return budget
    if budget < len(table):
        table = table[: max(0, budget)]
        found.truncated = True
    budget -= len(table)
    for s, o in table:
        if loop and s != o:
            continue
        b: dict[str | None, Term] = {s_var: s, o_var: o}
        if checks and not all(f(b) for f in checks):  # type: ignore[arg-type]
            continue
        if found.keep(tuple(b.get(v) for v in projection)):
            break
    return budget


def _join(comp: Component, pairs: EventPairs, found: _Found, budget: int) -> int:  # noqa: C901
    """One component's solutions into ``found``: a depth-first join over an explicit
    stack (the hot loop, kept in one frame on purpose); the budget left."""
    plan = comp.plan
    late = comp.late_checks
    checks = comp.step_checks
    projection = comp.projection
    last = len(plan) - 1
    b: Bindings = {}
    limit, distinct, first_only = found.limit, found.seen is not None, found.first_only
    # The last step may be counted by its row count when every row is a solution.
    p0, k0, mode0, s_last, o_last, f_last = plan[last]
    free_last = not (f_last or late or distinct or first_only) and mode0 != 3
    if free_last and s_last is not None and s_last == o_last:
        free_last = False
    iters: list[object] = [None] * len(plan)
    added: list[tuple[str, ...]] = [()] * len(plan)
    depth = 0
    iters[0] = iter(_step_rows(pairs, plan[0], b))
    while depth >= 0:
        for v in added[depth]:
            del b[v]
        added[depth] = ()
        row = next(iters[depth], None)  # type: ignore[call-overload]
        if row is None:
            depth -= 1
            continue
        budget -= 1
        if budget < 0:
            found.truncated = True
            return budget
        s, o = row
        s_var, o_var = plan[depth][3], plan[depth][4]
        new: tuple[str, ...] = ()
        if s_var is not None and s_var not in b:
            b[s_var] = s
            new = (s_var,)
        if o_var is not None:
            if o_var not in b:
                b[o_var] = o
                new = (*new, o_var)
            elif b[o_var] != o:
                for v in new:
                    del b[v]
                continue
        added[depth] = new
        filters = checks[depth]
        if filters and not all(f(b) for f in filters):
            continue
        if depth < last:
            if depth + 1 == last and free_last and len(found.rows) >= limit:
                found.count += len(_step_rows(pairs, plan[last], b))
                continue
            depth += 1
            iters[depth] = iter(_step_rows(pairs, plan[depth], b))
            continue
        if late and not all(f(b) for f in late):
            continue
        if found.keep(tuple(b.get(v) for v in projection)):
            break
    return budget


class EventBudget:
    """The rows the verifications of one event may still visit together: each may visit
    at most what is left (and its own step budget), and pays what it visited. Once it is
    spent, verifications stop at once, truncated (so, with no solution found, no match).
    Without it, an event could cost its step budget once per candidate: 2,000 candidates
    of one family, each with 216k solutions in a 3,660-triple event, kept a broker worker
    verifying for over ten minutes (the watchdog times each verification, and none
    overran)."""

    __slots__ = ("left",)

    def __init__(self, rows: int) -> None:
        self.left = rows

    @classmethod
    def of(cls, step_budget: int) -> EventBudget:
        """The default for verifications of ``step_budget`` rows each."""
        return cls(EVENT_BUDGETS * step_budget)


#: An event's verifications together visit at most this many times the step budget
#: (about 1-2.5 s of CPU at worst, within the broker's 2 s watchdog per verification).
EVENT_BUDGETS = 2


def verify(
    sub: CompiledSubscription,
    pairs: EventPairs,
    limit: int = DEFAULT_SOLUTION_LIMIT,
    budget: int = DEFAULT_STEP_BUDGET,
    event: EventBudget | None = None,
) -> Verdict | None:
    """The subscription's solutions over the event, or ``None`` when it has none (see the
    module docstring for the work ``budget``; ``event`` bounds it and is charged).

    The two commonest verifications are settled here in one step, charged one row: a
    single pattern without filter or DISTINCT (its binding table is its solutions), and a
    component whose plan's second step cannot join its first (no solution)."""
    if sub.algebra is None:
        patterns = sub.patterns
        if len(patterns) == 1 and not sub.filters and not sub.distinct:
            _charge_one(event, budget)
            p = patterns[0]
            rows = pairs.table(p.prop, p.key)
            return _single(sub, rows, limit) if rows else None
        for comp in sub.components:
            if comp.cut is not None and _cut_at_second_step(comp, pairs):
                _charge_one(event, budget)
                return None
    if event is None:
        return _verify(sub, pairs, limit, budget)[0]
    allowed = max(0, min(budget, event.left))
    verdict, left = _verify(sub, pairs, limit, allowed)
    event.left -= allowed - max(0, left)
    return verdict


def _charge_one(event: EventBudget | None, budget: int) -> None:
    """Charge a one-step verification's row to ``event`` (when the verification may visit
    one: as the general case charges what it visited)."""
    if event is not None and budget > 0 and event.left > 0:
        event.left -= 1


def _verify(
    sub: CompiledSubscription, pairs: EventPairs, limit: int, budget: int
) -> tuple[Verdict | None, int]:
    """:func:`verify` past its one-step cases, and the budget left."""
    if sub.algebra is not None:
        return _verify_algebra(sub, pairs, limit, budget)
    components = sub.components
    found = []
    truncated = False
    for comp in components:
        first_only = sub.ask or (sub.distinct and not comp.projection)
        join = _join_one if len(comp.plan) == 1 else _join
        got = _Found(limit, sub.distinct, first_only)
        budget = join(comp, pairs, got, budget)
        if not got.count:
            return None, budget
        truncated = truncated or got.truncated
        found.append(got)
    if sub.ask:
        return Verdict(1, ({},), truncated), budget
    count = 1
    for got in found:
        count *= got.count
    return Verdict(count, _solutions(sub, found, limit), truncated), budget


def _solutions(
    sub: CompiledSubscription, found: list[_Found], limit: int
) -> tuple[Mapping[str, Term], ...]:
    """The first ``limit`` solutions of the cross product of the components' rows."""
    if not limit:
        return ()
    if len(found) == 1:
        names = sub.components[0].projection
        if names == sub.projection:  # the usual case: the rows are the solutions, in order
            solutions: list[Mapping[str, Term]] = []
            for row in found[0].rows[:limit]:
                if None in row:  # (a component binds every variable it projects, but still)
                    solutions.append(
                        {v: t for v, t in zip(names, row, strict=True) if t is not None}
                    )
                else:
                    solutions.append(dict(zip(names, cast(tuple[Term, ...], row), strict=True)))
            return tuple(solutions)
        combos: object = ((r,) for r in found[0].rows[:limit])
    else:
        names = tuple(v for c in sub.components for v in c.projection)
        combos = islice(product(*(f.rows for f in found)), limit)
    out = []
    for combo in combos:  # type: ignore[attr-defined]
        full = {
            v: t for v, t in zip(names, (t for r in combo for t in r), strict=True) if t is not None
        }
        out.append({v: full[v] for v in sub.projection if v in full})
    return tuple(out)


def count_solutions(
    sub: CompiledSubscription,
    pairs: EventPairs,
    budget: int = DEFAULT_STEP_BUDGET,
    event: EventBudget | None = None,
) -> int:
    """The subscription's solution count over the event (0 for none), by :func:`verify`
    with no solutions kept: what bulk matching reports (a lower bound if truncated). The
    commonest case, verify's first (one pattern, distinct ends, no filter or DISTINCT), is
    its binding table's length, with no verdict made."""
    patterns = sub.patterns
    if len(patterns) == 1 and not (sub.filters or sub.distinct) and sub.algebra is None:
        p = patterns[0]
        if p.s_var is None or p.s_var != p.o_var:
            _charge_one(event, budget)
            rows = len(pairs.table(p.prop, p.key))
            return min(rows, 1) if sub.ask else rows
    verdict = verify(sub, pairs, 0, budget, event)
    return verdict.count if verdict is not None else 0


def _cut_at_second_step(comp: Component, pairs: EventPairs) -> bool:
    """True when the plan's second step cannot join its first: none of the values the first
    step binds to the shared variable is a key of the second step's rows (a semi-join
    check on two cached indexes; most candidates that fail, fail here). The component
    has a ``cut``."""
    cut = comp.cut
    assert cut is not None
    indexes = pairs._indexes  # the cached indexes, read directly: this runs per candidate
    second = indexes.get(cut[1])
    if second is None:
        second = pairs.index_at(cut[1])
    first = indexes.get(cut[0])
    if first is None:
        first = pairs.index_at(cut[0])
    return second.keys().isdisjoint(first)


def _single(sub: CompiledSubscription, rows: Rows, limit: int) -> Verdict | None:
    """One pattern, no filter, no DISTINCT: every row of its binding table is a solution."""
    (p,) = sub.patterns
    s_var, o_var = p.s_var, p.o_var
    if s_var is not None and s_var == o_var:
        rows = [r for r in rows if r[0] == r[1]]
        if not rows:
            return None
    if sub.ask:
        return Verdict(1, ({},))
    projection = sub.projection
    solutions: list[Mapping[str, Term]]
    # The usual forms, without a dictionary per row to project (a projected name is a str).
    if projection == (s_var,):
        solutions = [{projection[0]: s} for s, _ in rows[:limit]]
    elif projection == (o_var,):
        solutions = [{projection[0]: o} for _, o in rows[:limit]]
    elif projection == (s_var, o_var):
        first, second = projection
        solutions = [{first: s, second: o} for s, o in rows[:limit]]
    else:
        solutions = []
        for s, o in rows[:limit]:
            full = {s_var: s, o_var: o}
            solutions.append({v: full[v] for v in projection if v in full})
    return Verdict(len(rows), tuple(solutions))


def _verify_algebra(
    sub: CompiledSubscription, pairs: EventPairs, limit: int, budget: int
) -> tuple[Verdict | None, int]:
    """A subscription beyond basic graph patterns, by :mod:`.evaluate`: its solutions
    projected (unbound variables left out), DISTINCT applied; no match when the budget
    runs out before the evaluation ends (the evaluation is breadth first: it holds no
    solution of the whole pattern before then)."""
    evaluator = Evaluator(pairs, budget)
    try:
        found = evaluator.solutions(sub.algebra, {})
    except OutOfBudget:
        return None, -1
    if not found:
        return None, evaluator.budget
    if sub.ask:
        return Verdict(1, ({},)), evaluator.budget
    projection = sub.projection
    rows = [tuple(s.get(v) for v in projection) for s in found]
    if sub.distinct:
        rows = list(dict.fromkeys(rows))
    solutions = tuple(
        {v: t for v, t in zip(projection, row, strict=True) if t is not None}
        for row in rows[:limit]
    )
    return Verdict(len(rows), solutions), evaluator.budget
