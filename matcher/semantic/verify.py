"""Phase 3, verification: join a surviving subscription's binding tables with consistent
variable bindings, apply its FILTERs and count its solutions (the seed's CounterSec)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from semps._types import Term
from semps.ingest.sparql.model import Filter
from semps.matcher.semantic.compiled import ALL, BOTH, BY_O, BY_S, CompiledSubscription, Pattern
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
    """One verification: the ordered steps, their lookups, and what has been found."""

    __slots__ = (
        "ask",
        "bindings",
        "count",
        "distinct",
        "found",
        "late",
        "limit",
        "projection",
        "seen",
        "steps",
    )

    def __init__(self, sub: CompiledSubscription, limit: int) -> None:
        self.projection = sub.projection
        self.distinct = sub.distinct
        self.ask = sub.ask
        self.limit = limit
        self.found: list[Mapping[str, Term]] = []
        self.seen: set[tuple[Term | None, ...]] = set()
        self.count = 0
        self.bindings: Bindings = {}
        self.steps: list[tuple[Pattern, int, object, list[Filter]]] = []
        self.late: list[Filter] = []

    def emit(self) -> bool:
        b = self.bindings
        for f in self.late:
            if not f.evaluate(b):
                return False
        row = tuple(b.get(v) for v in self.projection)
        if self.distinct:
            if row in self.seen:
                return False
            self.seen.add(row)
        self.count += 1
        if len(self.found) < self.limit:
            self.found.append(
                {v: t for v, t in zip(self.projection, row, strict=True) if t is not None}
            )
        return self.ask

    def walk(self, depth: int) -> bool:
        if depth == len(self.steps):
            return self.emit()
        pattern, mode, source, filters = self.steps[depth]
        b = self.bindings
        s_var, o_var = pattern.s_var, pattern.o_var
        if mode == ALL:
            rows = source
        elif mode == BY_S:
            rows = source.get(b[s_var], ())  # type: ignore[attr-defined,index]
        elif mode == BY_O:
            rows = source.get(b[o_var], ())  # type: ignore[attr-defined,index]
        else:
            pair = (b[s_var], b[o_var])  # type: ignore[index]
            rows = (pair,) if pair in source else ()  # type: ignore[operator]
        for s, o in rows:  # type: ignore[attr-defined]
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
            stop = all(f.evaluate(b) for f in filters) and self.walk(depth + 1)
            if added_s:
                del b[s_var]  # type: ignore[arg-type]
            if added_o:
                del b[o_var]  # type: ignore[arg-type]
            if stop:
                return True
        return False


def _bind_sources(run: _Run, sub: CompiledSubscription, pairs: EventPairs) -> None:
    """Attach this event's binding tables (or their shared indexes) to the static plan."""
    for step in sub.steps:
        p, mode = step.pattern, step.mode
        if mode == BOTH:
            source: object = pairs.pair_set(p.prop, p.key)
        elif mode == BY_S:
            source = pairs.index(p.prop, p.key, 0)
        elif mode == BY_O:
            source = pairs.index(p.prop, p.key, 1)
        else:
            source = pairs.table(p.prop, p.key)
        run.steps.append((p, mode, source, list(step.filters)))
    run.late = list(sub.late_filters)


def verify(
    sub: CompiledSubscription, pairs: EventPairs, limit: int = DEFAULT_SOLUTION_LIMIT
) -> Verdict | None:
    """The subscription's solutions over the event, or ``None`` when it has none."""
    patterns = sub.patterns
    if len(patterns) == 1 and not sub.filters and not sub.distinct:
        rows = pairs.table(patterns[0].prop, patterns[0].key)
        return _single(sub, rows, limit) if rows else None
    run = _Run(sub, limit)
    _bind_sources(run, sub, pairs)
    run.walk(0)
    return Verdict(run.count, tuple(run.found)) if run.count else None


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
