"""A subscription compiled for the index: its patterns as node-pair keys, and its filters."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from semps._types import Term
from semps.ingest.sparql.model import Filter
from semps.matcher.semantic.codes import ALL, BOTH, BY_O, BY_S, STAR
from semps.matcher.semantic.fastfilter import Check, check_of

#: A node-pair key (the seed's NPN): subject constant or STAR, object constant or STAR.
NPNKey = tuple[Term, Term]
ANY_KEY: NPNKey = (STAR, STAR)  # one object for the commonest key


@dataclass(frozen=True, slots=True)
class Pattern:
    """One triple pattern: its property, node-pair key and variable names (or None)."""

    prop: str
    key: NPNKey
    s_var: str | None
    o_var: str | None


#: One step of the join: a pattern's property, key and variables, how it finds its rows
#: (ALL, BY_S, BY_O, BOTH) and the filters it completes.
PlanStep = tuple[str, NPNKey, int, str | None, str | None, tuple[Filter, ...]]


#: An event binding table indexed by one end: (property, node-pair key, 0 subject / 1 object).
IndexKey = tuple[str, NPNKey, int]


def semi_join(plan: tuple[PlanStep, ...]) -> tuple[IndexKey, IndexKey] | None:
    """The two indexes whose keys must overlap for the plan's second step to join its first
    (the first step's rows by the shared variable, the second's by the same), when the
    second step looks its rows up by one bound end; ``None`` otherwise."""
    if len(plan) < 2:
        return None
    first, second = plan[0], plan[1]
    mode = second[2]
    if first[2] != ALL or mode not in (BY_S, BY_O):
        return None
    shared = second[3] if mode == BY_S else second[4]
    position = 0 if first[3] == shared else 1
    return (first[0], first[1], position), (second[0], second[1], 0 if mode == BY_S else 1)


@dataclass(frozen=True, slots=True)
class Component:
    """A connected component of a subscription's patterns (patterns linked by shared
    variables, or by a FILTER reading variables of both): its join plan, the filters that
    run after its last step, the projected variables it binds, and its semi-join cut.

    The solutions of a basic graph pattern are the cross product of its components'
    solutions (every FILTER reads one component only), so counts multiply; with DISTINCT,
    the distinct projected rows are the cross product of each component's distinct rows
    over its own projected variables, so distinct counts multiply too."""

    plan: tuple[PlanStep, ...]
    late_filters: tuple[Filter, ...]
    projection: tuple[str, ...]
    #: The indexes the semi-join check between the plan's first two steps reads, or None.
    cut: tuple[IndexKey, IndexKey] | None = None
    #: Per step, the checks of its filters (:mod:`.fastfilter`); then the late filters'.
    step_checks: tuple[tuple[Check, ...], ...] = field(default=(), compare=False)
    late_checks: tuple[Check, ...] = field(default=(), compare=False)
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Hashed once: every registration looks its shape up by its components.
        key = (self.plan, self.late_filters, self.projection, self.cut)
        object.__setattr__(self, "_hash", hash(key))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class CompiledSubscription:
    """What the index and the verifier need of a subscription."""

    id: str
    patterns: tuple[Pattern, ...]
    filters: tuple[Filter, ...]
    projection: tuple[str, ...]
    distinct: bool
    ask: bool
    components: tuple[Component, ...] = ()
    #: The SPARQL algebra (:mod:`semps.ingest.sparql.algebra`) of a subscription beyond a
    #: basic graph pattern, evaluated by :mod:`.evaluate`; ``None`` for a BGP with FILTERs.
    algebra: Any = None
    #: With an algebra: the alternatives of its required patterns (:mod:`.required`),
    #: what the counter filter indexes; ``patterns`` then lists them all, once.
    alternatives: tuple[tuple[Pattern, ...], ...] = ()


def _rank(p: Pattern, i: int, shared: int) -> tuple[int, int, int]:
    constants = (p.key[0] != STAR) + (p.key[1] != STAR)
    return (-shared, -constants, i)


def join_order(
    patterns: tuple[Pattern, ...], filters: tuple[Filter, ...]
) -> tuple[tuple[PlanStep, ...], tuple[Filter, ...]]:
    """A static join plan: the most constrained pattern first (most constants), then always
    a pattern sharing the most already-bound variables (the first on a tie); each filter
    runs at the first step that binds all its variables (the rest, e.g. ``bound()`` of a
    missing variable, last).

    O((patterns + filters) log patterns): a heap of ranks, updated only for the patterns
    and filters a newly bound variable touches (a long query registers in linear time);
    a short one (:data:`SHORT`) is planned by scanning, the same plan at a third of the
    cost."""
    if len(patterns) <= SHORT:
        return _short_order(patterns, filters)
    users: dict[str, list[int]] = {}
    for i, p in enumerate(patterns):
        for v in dict.fromkeys((p.s_var, p.o_var)):
            if v is not None:
                users.setdefault(v, []).append(i)
    missing = [len(f.variables()) for f in filters]
    waiting: dict[str, list[int]] = {}
    for k, f in enumerate(filters):
        for v in f.variables():
            waiting.setdefault(v, []).append(k)
    ready_now = [k for k, n in enumerate(missing) if n == 0]
    shared = [0] * len(patterns)
    heap = [_rank(p, i, 0) for i, p in enumerate(patterns)]
    heapq.heapify(heap)
    used = [False] * len(patterns)
    bound: set[str] = set()
    steps = []
    while heap:
        rank = heapq.heappop(heap)
        best = rank[2]
        if used[best] or -rank[0] != shared[best]:
            continue  # a stale rank: the pattern was ranked again since
        used[best] = True
        p = patterns[best]
        s_bound, o_bound = p.s_var in bound, p.o_var in bound
        mode = BOTH if s_bound and o_bound else BY_S if s_bound else BY_O if o_bound else ALL
        for v in dict.fromkeys((p.s_var, p.o_var)):
            if v is None or v in bound:
                continue
            bound.add(v)
            for j in users[v]:
                if not used[j]:
                    q = patterns[j]
                    shared[j] += (q.s_var == v) + (q.o_var == v)
                    heapq.heappush(heap, _rank(q, j, shared[j]))
            for k in waiting.get(v, ()):
                missing[k] -= 1
                if not missing[k]:
                    ready_now.append(k)
        ready = tuple(filters[k] for k in sorted(ready_now))
        ready_now = []
        steps.append((p.prop, p.key, mode, p.s_var, p.o_var, ready))
    late = tuple(f for k, f in enumerate(filters) if missing[k])
    return tuple(steps), late


#: Patterns up to which :func:`join_order` scans for the next step rather than keep a heap.
SHORT = 12


def _short_order(
    patterns: tuple[Pattern, ...], filters: tuple[Filter, ...]
) -> tuple[tuple[PlanStep, ...], tuple[Filter, ...]]:
    """:func:`join_order` by scanning the patterns left at each step (quadratic)."""
    constants = [(p.key[0] != STAR) + (p.key[1] != STAR) for p in patterns]
    shared = [0] * len(patterns)
    left = list(range(len(patterns)))
    reads = [f.variables() for f in filters]
    missing = [len(names) for names in reads]
    ready_now = [k for k, n in enumerate(missing) if n == 0]
    bound: set[str] = set()
    steps = []
    while left:
        best = left[0]
        best_shared, best_constants = shared[best], constants[best]
        for j in left:
            if shared[j] > best_shared or (
                shared[j] == best_shared and constants[j] > best_constants
            ):
                best, best_shared, best_constants = j, shared[j], constants[j]
        left.remove(best)
        p = patterns[best]
        s_var, o_var = p.s_var, p.o_var
        s_bound, o_bound = s_var in bound, o_var in bound
        mode = BOTH if s_bound and o_bound else BY_S if s_bound else BY_O if o_bound else ALL
        for v in (s_var, o_var) if s_var != o_var else (s_var,):
            if v is None or v in bound:
                continue
            bound.add(v)
            for j in left:
                q = patterns[j]
                shared[j] += (q.s_var == v) + (q.o_var == v)
            for k, names in enumerate(reads):
                if v in names:
                    missing[k] -= 1
                    if not missing[k]:
                        ready_now.append(k)
        ready = tuple([filters[k] for k in sorted(ready_now)])
        ready_now = []
        steps.append((p.prop, p.key, mode, s_var, o_var, ready))
    late = tuple([f for k, f in enumerate(filters) if missing[k]])
    return tuple(steps), late


def split_components(
    patterns: tuple[Pattern, ...], filters: tuple[Filter, ...]
) -> list[tuple[tuple[Pattern, ...], tuple[Filter, ...]]]:
    """The patterns grouped into connected components over shared variables, a FILTER
    that reads variables of several components merging them; each filter goes with the
    component whose variables it reads (one that reads none, with the first). Components
    keep the order of their first pattern.

    Example:
        >>> a, b = Pattern("p", ("*", "*"), "x", "y"), Pattern("q", ("*", "*"), "z", None)
        >>> [len(ps) for ps, _ in split_components((a, b), ())]
        [1, 1]
    """
    parent = list(range(len(patterns)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    binder: dict[str, int] = {}
    for i, p in enumerate(patterns):
        for v in (p.s_var, p.o_var):
            if v is not None:
                parent[root(i)] = root(binder.setdefault(v, i))
    for f in filters:
        touched = [binder[v] for v in f.variables() if v in binder]
        for i in touched[1:]:
            parent[root(i)] = root(touched[0])
    groups: dict[int, list[int]] = {}
    for i in range(len(patterns)):
        groups.setdefault(root(i), []).append(i)
    roots = list(groups)
    out_filters: dict[int, list[Filter]] = {r: [] for r in roots}
    for f in filters:
        touched = [binder[v] for v in f.variables() if v in binder]
        out_filters[root(touched[0]) if touched else roots[0]].append(f)
    return [(tuple(patterns[i] for i in groups[r]), tuple(out_filters[r])) for r in roots]


def plan_components(
    patterns: tuple[Pattern, ...], filters: tuple[Filter, ...], projection: tuple[str, ...]
) -> tuple[Component, ...]:
    """Each connected component with its join plan (:func:`join_order`).

    The plans depend only on the query's structure (which pattern and filter reads which
    variable, which ends are constants, the projection), not on the variables' names, so
    they are kept by structure with the variables numbered (:func:`_layout`) and only the
    constants, filters and names are filled in again."""
    number: dict[str, int] = {}
    shape = []
    for p in patterns:
        s, o = p.s_var, p.o_var
        shape.append(
            (
                None if s is None else number.setdefault(s, len(number)),
                None if o is None else number.setdefault(o, len(number)),
                p.key[0] != STAR,
                p.key[1] != STAR,
            )
        )
    key = (
        tuple(shape),
        tuple(
            [frozenset([number.setdefault(v, len(number)) for v in f.variables()]) for f in filters]
        ),
        tuple([number.setdefault(v, len(number)) for v in projection]),
    )
    names = tuple(number)
    layout = _LAYOUTS.get(key, _UNSEEN)
    if layout is _UNSEEN:  # seen once: planned, and laid out if it comes again
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = _ONCE
        return _plan_components(patterns, filters, projection)
    if layout is _ONCE:
        layout = _LAYOUTS[key] = _layout(patterns, filters, projection, number)
    if layout is None:  # a structure the layout cannot express: plan it every time
        return _plan_components(patterns, filters, projection)
    return _fill(layout, patterns, filters, names)


def _plan_components(
    patterns: tuple[Pattern, ...], filters: tuple[Filter, ...], projection: tuple[str, ...]
) -> tuple[Component, ...]:
    out = []
    for group, group_filters in split_components(patterns, filters):
        steps, late = join_order(group, group_filters)
        bound = {v for p in group for v in (p.s_var, p.o_var) if v is not None}
        own = tuple(v for v in projection if v in bound)
        checks = tuple(tuple(check_of(f) for f in step[5]) for step in steps)
        late_checks = tuple(check_of(f) for f in late)
        out.append(Component(steps, late, own, semi_join(steps), checks, late_checks))
    return tuple(out)


def _fill(
    layout: Layout,
    patterns: tuple[Pattern, ...],
    filters: tuple[Filter, ...],
    names: tuple[str, ...],
) -> tuple[Component, ...]:
    out = []
    for step_layout, late_at, own_at in layout:
        steps: list[PlanStep] = []
        checks = []
        for i, mode, ready in step_layout:
            p = patterns[i]
            ready_filters = tuple([filters[k] for k in ready])
            steps.append((p.prop, p.key, mode, p.s_var, p.o_var, ready_filters))
            checks.append(tuple([check_of(f) for f in ready_filters]))
        plan = tuple(steps)
        late = tuple([filters[k] for k in late_at])
        late_checks = tuple([check_of(f) for f in late])
        own = tuple([names[k] for k in own_at])
        out.append(Component(plan, late, own, semi_join(plan), tuple(checks), late_checks))
    return tuple(out)


#: Per component: its steps as (pattern position, mode, positions of the filters the step
#: completes), the positions of its late filters, its projected variables (by number).
Layout = tuple[
    tuple[tuple[tuple[int, int, tuple[int, ...]], ...], tuple[int, ...], tuple[int, ...]], ...
]

#: Plans by query structure, the variables numbered (:func:`plan_components`), ``None``
#: for a structure planned every time, :data:`_ONCE` for one seen once (most structures
#: never come again: laying one out costs a second plan); bounded: cleared when full.
_LAYOUTS: dict[tuple[object, ...], Layout | None] = {}
_UNSEEN: Any = object()
_ONCE: Any = object()


def _layout(
    patterns: tuple[Pattern, ...],
    filters: tuple[Filter, ...],
    projection: tuple[str, ...],
    number: dict[str, int],
) -> Layout | None:
    """:func:`plan_components`'s plans by position (which pattern each step reads, how,
    and which filters it completes; the projected variables by ``number``), or ``None``
    when filling them in again would not give the plans back exactly (patterns or filters
    repeated as one object)."""
    pattern_at = {id(p): i for i, p in enumerate(patterns)}
    filter_at = {id(f): k for k, f in enumerate(filters)}
    if len(pattern_at) < len(patterns) or len(filter_at) < len(filters):
        return None
    planned = _plan_components(patterns, filters, projection)
    used: set[int] = set()
    layout = tuple(
        (
            tuple(
                (_position(patterns, step, used), step[2], tuple(filter_at[id(f)] for f in step[5]))
                for step in component.plan
            ),
            tuple(filter_at[id(f)] for f in component.late_filters),
            tuple(number[v] for v in component.projection),
        )
        for component in planned
    )
    return layout if _fill(layout, patterns, filters, tuple(number)) == planned else None


def _position(patterns: tuple[Pattern, ...], step: PlanStep, used: set[int]) -> int:
    """The position of the first pattern not in ``used`` that a plan step reads (added
    to ``used``: a pattern written twice is read by two steps)."""
    prop, key, _, s_var, o_var, _ = step
    found = next(
        i
        for i, p in enumerate(patterns)
        if i not in used and (p.prop, p.key, p.s_var, p.o_var) == (prop, key, s_var, o_var)
    )
    used.add(found)
    return found
