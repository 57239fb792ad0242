"""Phase 3, verification: join a surviving subscription's binding tables with consistent
variable bindings, apply its FILTERs and count its solutions (the seed's CounterSec)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from semps._types import Term
from semps.matcher.semantic.compiled import ALL, BY_O, BY_S, CompiledSubscription
from semps.matcher.semantic.index import EventPairs

Rows = list[tuple[str, Term]]
Bindings = dict[str, Term]

#: Solutions carried by a match (the count is always exact).
DEFAULT_SOLUTION_LIMIT = 100


@dataclass(frozen=True, slots=True)
class Verdict:
    """A verified match: the exact solution count and the first solutions."""

    count: int
    solutions: tuple[Mapping[str, Term], ...]


class _Run:
    """One verification: the plan, the event's tables, and what has been found.

    Each step's rows are looked up when the walk reaches it (most candidates fail at their
    first or second step, so later steps' tables are never touched)."""

    __slots__ = (
        "ask",
        "bindings",
        "count",
        "distinct",
        "found",
        "late",
        "limit",
        "n",
        "pairs",
        "plan",
        "projection",
        "seen",
    )

    def __init__(self, sub: CompiledSubscription, pairs: EventPairs, limit: int) -> None:
        self.projection = sub.projection
        self.distinct = sub.distinct
        self.ask = sub.ask
        self.limit = limit
        self.found: list[Mapping[str, Term]] = []
        self.seen: set[tuple[Term | None, ...]] = set()
        self.count = 0
        self.bindings: Bindings = {}
        self.plan = sub.plan
        self.n = len(sub.plan)
        self.pairs = pairs
        self.late = sub.late_filters

    def emit(self) -> bool:
        b = self.bindings
        for f in self.late:
            if not f.evaluate(b):
                return False
        row = None
        if self.distinct:
            row = tuple(b.get(v) for v in self.projection)
            if row in self.seen:
                return False
            self.seen.add(row)
        self.count += 1
        if len(self.found) < self.limit:
            if row is None:
                row = tuple(b.get(v) for v in self.projection)
            self.found.append(
                {v: t for v, t in zip(self.projection, row, strict=True) if t is not None}
            )
        return self.ask

    def walk(self, depth: int) -> bool:
        if depth == self.n:
            return self.emit()
        prop, key, mode, s_var, o_var, filters = self.plan[depth]
        b = self.bindings
        rows: Sequence[tuple[str, Term]]
        if mode == ALL:
            rows = self.pairs.table(prop, key)
        elif mode == BY_S:
            rows = self.pairs.index(prop, key, 0).get(b[s_var], ())  # type: ignore[index]
        elif mode == BY_O:
            rows = self.pairs.index(prop, key, 1).get(b[o_var], ())  # type: ignore[index]
        else:
            pair = (b[s_var], b[o_var])  # type: ignore[index]
            rows = (pair,) if pair in self.pairs.pair_set(prop, key) else ()
        for s, o in rows:
            added_s = s_var is not None and s_var not in b
            if added_s:
                b[s_var] = s  # type: ignore[index]
            added_o = False
            if o_var is not None:
                if o_var not in b:
                    b[o_var] = o
                    added_o = True
                elif b[o_var] != o:
                    if added_s:
                        del b[s_var]  # type: ignore[arg-type]
                    continue
            if filters and not all(f.evaluate(b) for f in filters):
                stop = False
            else:
                stop = self.walk(depth + 1)
            if added_s:
                del b[s_var]  # type: ignore[arg-type]
            if added_o:
                del b[o_var]  # type: ignore[arg-type]
            if stop:
                return True
        return False


def verify(
    sub: CompiledSubscription, pairs: EventPairs, limit: int = DEFAULT_SOLUTION_LIMIT
) -> Verdict | None:
    """The subscription's solutions over the event, or ``None`` when it has none."""
    patterns = sub.patterns
    if len(patterns) == 1 and not sub.filters and not sub.distinct:
        rows = pairs.table(patterns[0].prop, patterns[0].key)
        return _single(sub, rows, limit) if rows else None
    if _cut_at_second_step(sub, pairs):
        return None
    run = _Run(sub, pairs, limit)
    run.walk(0)
    return Verdict(run.count, tuple(run.found)) if run.count else None


def count_solutions(sub: CompiledSubscription, pairs: EventPairs) -> int:
    """The subscription's solution count over the event (0 for none), by :func:`verify`
    with no solutions kept: what bulk matching reports."""
    verdict = verify(sub, pairs, 0)
    return verdict.count if verdict is not None else 0


def _cut_at_second_step(sub: CompiledSubscription, pairs: EventPairs) -> bool:
    """True when the plan's second step cannot join its first: none of the values the first
    step binds to the shared variable is a key of the second step's rows (a semi-join
    check on two cached indexes; most candidates that fail, fail here)."""
    cut = sub.cut
    if cut is None:
        return False
    return pairs.index_at(cut[1]).keys().isdisjoint(pairs.index_at(cut[0]))


def _single(sub: CompiledSubscription, rows: Rows, limit: int) -> Verdict | None:
    """One pattern, no filter, no DISTINCT: every row of its binding table is a solution."""
    (p,) = sub.patterns
    if p.s_var is not None and p.s_var == p.o_var:
        rows = [r for r in rows if r[0] == r[1]]
        if not rows:
            return None
    if sub.ask:
        return Verdict(1, ({},))
    projection = sub.projection
    solutions = []
    for s, o in rows[:limit]:
        full = {p.s_var: s, p.o_var: o}
        solutions.append({v: full[v] for v in projection if v in full})
    return Verdict(len(rows), tuple(solutions))
