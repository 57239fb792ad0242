"""The semantic matcher's built index saved whole, so that a starting worker reads it in
one pass instead of compiling and indexing every subscription again.

What is saved is the :class:`~.index.SubscriptionIndex` (its merged subscription graph,
its shapes, families and arrays, the compiled subscriptions) and the subscriptions' texts
by id, in a matcher state file (:mod:`semps.matcher.state_file`: a header, the pickled
state, an HMAC tag under the caller's key). The header carries the limits that parsing
reads (:func:`~semps.limits.parse_limits`): an index built under others is stale.

What pickles as it is built, pickles as it is (the index's arrays, dictionaries, lists).
What does not is rebuilt on reading from what it was built from, as registration builds
it: FILTER expressions (compiled closures) from their syntax trees, a component's checks
from its filters, every cached hash in a fresh process (string hashes are per process).
The frozen classes of the compiled form are rebuilt by their constructors; caches of
events seen are left behind (a container's rows, a family table's, the terms' facts).
Reading resolves only the classes and functions listed here (:data:`ALLOWED`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from semps.errors import MatcherError
from semps.ingest.sparql import algebra, patterns
from semps.ingest.sparql.filters import Expression
from semps.limits import Limits, parse_limits
from semps.matcher.semantic.compiled import CompiledSubscription, Component, Pattern
from semps.matcher.semantic.containers import HMNPN, SC, SlotList
from semps.matcher.semantic.family import Family, Members, Needles, ParamTable
from semps.matcher.semantic.familytables import TermFacts
from semps.matcher.semantic.fastfilter import check_of
from semps.matcher.semantic.index import SubscriptionIndex
from semps.matcher.semantic.shapefamilies import ShapeFamilies
from semps.matcher.semantic.shapeslots import ShapeSlots
from semps.matcher.state_file import NoState, Reducers, read_state, write_state
from semps.terms import Literal

__all__ = ["ALLOWED", "KIND", "IndexState", "NoState", "read_index", "save_index"]

#: The matcher kind the header names.
KIND = "semantic"

#: What is saved: the index, and the subscriptions' texts by id.
IndexState = tuple[SubscriptionIndex, dict[str, str]]


def _component(
    plan: tuple[Any, ...], late: tuple[Any, ...], projection: tuple[str, ...], cut: Any
) -> Component:
    """A component rebuilt with its checks (:func:`~.compiled._plan_components`'s)."""
    checks = tuple(tuple([check_of(f) for f in step[5]]) for step in plan)
    return Component(plan, late, projection, cut, checks, tuple([check_of(f) for f in late]))


def _container(cid: int, slots: SlotList, anchored: SlotList) -> SC:
    return SC(cid, slots, anchored)


def _slot_list(items: list[int]) -> SlotList:
    found = SlotList()
    found.items = items
    return found


def _family(
    bare: Component,
    columns: tuple[str, ...],
    templates: tuple[Any, ...],
    projected: tuple[int, ...],
    distinct: bool,
    ask: bool,
    rows: list[list[int]] | None,
    inputs: tuple[tuple[str, str], ...],
    strings: tuple[Any, ...],
) -> Family:
    """A family, its program given as rows (a small array unpickled would keep the
    buffer it was read into, and three objects more)."""
    program = None if rows is None else np.array(rows, dtype=np.int64).reshape(-1, 3)
    return Family(bare, columns, templates, projected, distinct, ask, program, inputs, strings)


def _families(state: dict[str, Any]) -> ShapeFamilies:
    """The families without what is kept by object identity (no longer valid) and
    without the caches of events seen."""
    families = ShapeFamilies.__new__(ShapeFamilies)
    families.__dict__.update(state)
    families._by_object = {}
    families._tables = None
    families.term_facts = TermFacts()
    return families


def _by_fields(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A frozen dataclass pickled as its constructor's arguments (its ``__post_init__``
    hashes again in the reading process; the generic slots state is read by a Python
    function per object, three times slower)."""
    names = tuple(f.name for f in dataclasses.fields(cls) if f.init)
    return lambda obj: (cls, tuple([getattr(obj, name) for name in names]))


def _frozen_classes() -> tuple[type, ...]:
    """The frozen dataclasses an index holds: its compiled form's, and the parsed query's
    in subscriptions with an algebra."""
    found = [Pattern, CompiledSubscription, patterns.Var, patterns.TriplePattern]
    found += [
        cls
        for cls in vars(algebra).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == algebra.__name__
    ]
    return tuple(found)


def _reducers() -> Reducers:
    table: dict[type, Callable[[Any], tuple[Any, ...]]] = {
        cls: _by_fields(cls) for cls in _frozen_classes()
    }
    family = _by_fields(Family)
    table[Family] = lambda f: (_family, _program_as_rows(family(f)[1]))
    table[Component] = _reduce_component
    table[Expression] = lambda e: (Expression, (e.ast,))
    table[SC] = lambda c: (_container, (c.cid, c.slots, c.anchored))
    table[SlotList] = lambda s: (_slot_list, (s.items,))
    table[ShapeFamilies] = lambda f: (_families, (_families_state(f),))
    return table


def _reduce_component(c: Component) -> tuple[Any, ...]:
    """A component without filters as its constructor's arguments (its checks are empty
    tuples); one with filters rebuilt with its checks (closures do not pickle)."""
    if not c.late_filters and not any(step[5] for step in c.plan):
        return (Component, (c.plan, c.late_filters, c.projection, c.cut, c.step_checks, ()))
    return (_component, (c.plan, c.late_filters, c.projection, c.cut))


def _program_as_rows(args: tuple[Any, ...]) -> tuple[Any, ...]:
    program = args[6]
    return (*args[:6], None if program is None else program.tolist(), *args[7:])


def _families_state(families: ShapeFamilies) -> dict[str, Any]:
    skip = {"_by_object", "_tables", "term_facts"}
    return {k: v for k, v in families.__dict__.items() if k not in skip}


_OWN: tuple[Any, ...] = (_component, _container, _slot_list, _family, _families)
_NUMPY = {
    (module, name)
    for core in ("numpy._core", "numpy.core")
    for module, name in ((f"{core}.numeric", "_frombuffer"), (f"{core}.multiarray", "_reconstruct"))
} | {("numpy", "ndarray"), ("numpy", "dtype")}
#: The globals a saved index may name: the classes it holds, the functions above that
#: rebuild the rest, and NumPy's array constructors.
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {(x.__module__, x.__qualname__) for x in _OWN}
    | {(c.__module__, c.__qualname__) for c in _frozen_classes()}
    | {
        (c.__module__, c.__qualname__)
        for c in (
            Component,
            Family,
            SubscriptionIndex,
            HMNPN,
            ShapeSlots,
            Members,
            ParamTable,
            Needles,
            Expression,
            Literal,
        )
    }
    | _NUMPY
)


def _allowed(module: str, name: str) -> bool:
    return (module, name) in ALLOWED


def save_index(
    path: Path,
    state: IndexState,
    key: bytes,
    limits: Limits,
    keep_going: Callable[[], bool] = lambda: True,
) -> None:
    """Write the index and its texts to ``path`` (:func:`~semps.matcher.state_file.write_state`),
    built under ``limits``.

    Raises:
        OSError: the file could not be written.
    """
    write_state(path, KIND, state, key, parse_limits(limits), _reducers(), keep_going)


def read_index(path: Path, key: bytes, limits: Limits) -> IndexState:
    """The index and its texts saved at ``path`` under ``key`` by this code, built under
    parse limits equal to ``limits``'.

    Raises:
        NoState: there is no file.
        MatcherError: the file is damaged, altered, foreign or stale.
    """
    state = read_state(path, KIND, key, parse_limits(limits), _allowed)
    if not (
        type(state) is tuple
        and len(state) == 2
        and type(state[0]) is SubscriptionIndex
        and type(state[1]) is dict
    ):
        msg = f"{path}: not a usable matcher state: it does not hold a semantic index"
        raise MatcherError(msg)
    return state[0], state[1]
