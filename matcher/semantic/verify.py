"""Phase 3, verification: join a surviving subscription's binding tables with consistent
variable bindings, apply its FILTERs and count its solutions (the seed's CounterSec)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from semps._types import Term
from semps.ingest.sparql.model import Filter
from semps.matcher.semantic.compiled import CompiledSubscription, Pattern
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


@dataclass(slots=True)
class _Step:
    pattern: Pattern
    rows: Rows
    lookup: Callable[[Bindings], Rows]
    filters: list[Filter]


def _index(rows: Rows, position: int) -> dict[Term, Rows]:
    out: defaultdict[Term, Rows] = defaultdict(list)
    for row in rows:
        out[row[position]].append(row)
    return out


def _lookup(pattern: Pattern, rows: Rows, bound: set[str]) -> Callable[[Bindings], Rows]:
    s_var, o_var = pattern.s_var, pattern.o_var
    s_bound = s_var is not None and s_var in bound
    o_bound = o_var is not None and o_var in bound
    if s_bound and o_bound:
        pairs = set(rows)
        return lambda b: [(b[s_var], b[o_var])] if (b[s_var], b[o_var]) in pairs else []  # type: ignore[index]
    if s_bound:
        by_s = _index(rows, 0)
        return lambda b: by_s.get(b[s_var], [])  # type: ignore[index]
    if o_bound:
        by_o = _index(rows, 1)
        return lambda b: by_o.get(b[o_var], [])  # type: ignore[index]
    return lambda b: rows


def _plan(sub: CompiledSubscription, tables: list[Rows]) -> tuple[list[_Step], list[Filter]]:
    """Order the patterns (smallest table first, then those sharing bound variables) and
    attach each filter to the first step that binds all its variables."""
    remaining = list(range(len(sub.patterns)))
    bound: set[str] = set()
    steps: list[_Step] = []
    pending = list(sub.filters)
    while remaining:

        def score(i: int) -> tuple[int, int]:
            p = sub.patterns[i]
            shared = (p.s_var in bound) + (p.o_var in bound)
            return (-shared, len(tables[i]))

        best = min(remaining, key=score)
        remaining.remove(best)
        pattern = sub.patterns[best]
        step = _Step(pattern, tables[best], _lookup(pattern, tables[best], bound), [])
        bound |= {v for v in (pattern.s_var, pattern.o_var) if v is not None}
        for f in list(pending):
            if f.variables() <= bound:
                step.filters.append(f)
                pending.remove(f)
        steps.append(step)
    return steps, pending


def verify(
    sub: CompiledSubscription, pairs: EventPairs, limit: int = DEFAULT_SOLUTION_LIMIT
) -> Verdict | None:
    """The subscription's solutions over the event, or ``None`` when it has none."""
    tables = [pairs.table(p.prop, p.key) for p in sub.patterns]
    if not all(tables):
        return None
    steps, late_filters = _plan(sub, tables)
    projection = sub.projection
    found: list[Mapping[str, Term]] = []
    distinct: set[tuple[Term | None, ...]] = set()
    count = 0
    bindings: Bindings = {}

    def emit() -> bool:
        nonlocal count
        if any(not f.evaluate(bindings) for f in late_filters):
            return False
        row = tuple(bindings.get(v) for v in projection)
        if sub.distinct:
            if row in distinct:
                return False
            distinct.add(row)
        count += 1
        if len(found) < limit:
            found.append({v: t for v, t in zip(projection, row, strict=True) if t is not None})
        return sub.ask

    def walk(depth: int) -> bool:
        if depth == len(steps):
            return emit()
        step = steps[depth]
        s_var, o_var = step.pattern.s_var, step.pattern.o_var
        for s, o in step.lookup(bindings):
            added = []
            if s_var is not None and s_var not in bindings:
                bindings[s_var] = s
                added.append(s_var)
            if o_var is not None and o_var not in bindings:
                if o_var == s_var and o != s:
                    _unbind(bindings, added)
                    continue
                bindings[o_var] = o
                added.append(o_var)
            elif o_var is not None and bindings[o_var] != o:
                _unbind(bindings, added)
                continue
            ok = all(f.evaluate(bindings) for f in step.filters)
            stop = ok and walk(depth + 1)
            _unbind(bindings, added)
            if stop:
                return True
        return False

    walk(0)
    return Verdict(count, tuple(found)) if count else None


def _unbind(bindings: Bindings, names: list[str]) -> None:
    for name in names:
        del bindings[name]
