"""A template's basic graph patterns matched against an event in compiled code over
interned ids.

The template differ (:mod:`.templatediff`) finds what a basic graph pattern gains from
an event by the delta rule: each pattern's rows from the event's triples, each extended
by the other patterns (those before it over the old graph, after it over the new one,
the most bound next), a parameter kept to its domain or bound to each of its few values.
Done in Python, each pattern of each row costs dictionaries, lists and lookups. A
:class:`GainsPlan` holds the same work as tables of ids (the patterns, each pattern's join
order and the way each step matches, the domains), and one call of
:func:`~._graph_kernels.bgp_gains` per pattern and event does all of it over the graph's
sorted id arrays and the event's triples, in the same order with the same answers; the
gained rows' ids are turned back into terms.

It takes triple patterns with a constant property and ``p+`` paths over one property,
matched from a bound end. The rest stays with the differ's Python: other paths, a
pattern that scans, a path the event adds edges to, a property of more than
:data:`MERGE_FOR_PLAN` triples whose segment holds the graph's unmerged edits (a smaller
one is merged into a copy for the plan), a change that removes triples, and an event
that brings a term a domain or a constant names which the graph does not have (its id
would be the event's).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from numba.typed import List as TypedList

from semps._types import Term
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.evaluate import Evaluator
from semps.ingest.sparql.model import TriplePattern, Var
from semps.matcher.semantic import _graph_kernels as gk
from semps.matcher.semantic.touchkeys import ANY

__all__ = ["EXPAND", "EventIds", "GainsPlan", "Params", "compile_gains", "usable"]

#: A parameter with at most this many values is bound to each before its pattern is
#: matched (a lookup by both ends) rather than read from the pattern's matches.
EXPAND = 8

Params = tuple[tuple[str, Collection[Term]], ...]
IntArray = npt.NDArray[np.int64]
_EMPTY = np.zeros(0, dtype=np.int64)


#: A property's triples with unmerged edits are merged into a copy for a plan (once a graph
#: version, as plans are) up to this many; a larger segment is left to Python's lookups. A
#: graph that a service merges and edits keeps its small properties' edits unmerged
#: (``brick:value``'s 27 triples after `bench/kg_service.py`'s loads): without the copy
#: every pattern of such a property went to Python.
MERGE_FOR_PLAN = 1 << 16


def usable(evs: tuple[Evaluator, Evaluator]) -> bool:
    """Whether both sides read one view's closure, the new one with added triples only
    (an event)."""
    old, new = evs[0].pairs, evs[1].pairs
    if type(old) is not GraphPairs or type(new) is not GraphPairs or old.view is not new.view:
        return False
    if old.asserted_only or new.asserted_only:
        return False
    return not old.overlay.minus and not new.overlay.minus and not old.overlay.by_p


class EventIds:
    """An event's triples as ids: the graph's, or numbers from ``len(terms)`` on for the
    terms it brings."""

    __slots__ = ("base", "keys", "new_terms", "other_ids", "ov_o", "ov_p", "ov_s")

    def __init__(
        self,
        view: GraphView,
        by_prop: Mapping[str, list[tuple[str, Term]]],
        keys: Collection[Any],
    ) -> None:
        ids = view.terms.ids
        #: The change's touch keys.
        self.keys = frozenset(keys)
        self.base = len(view.terms)
        self.new_terms: list[Term] = []
        #: The ids of the terms the graph does not have.
        self.other_ids: dict[Term, int] = {}
        own = self.other_ids

        def id_of(term: Term) -> int:
            found = ids.get(term)
            if found is None:
                found = own.get(term)
                if found is None:
                    found = own[term] = self.base + len(self.new_terms)
                    self.new_terms.append(term)
            return found

        flat = [(id_of(p), id_of(s), id_of(o)) for p, pairs in by_prop.items() for s, o in pairs]
        table = np.array(flat, dtype=np.int64).reshape(-1, 3)
        self.ov_p, self.ov_s, self.ov_o = (np.ascontiguousarray(table[:, i]) for i in range(3))

    def term(self, view: GraphView, i: int) -> Term:
        """The term of an id."""
        return view.terms.by_id[i] if i < self.base else self.new_terms[i - self.base]


class GainsPlan:
    """One basic graph pattern of a template, compiled for :func:`~._graph_kernels.
    bgp_gains` (for one graph version and the template's domains)."""

    __slots__ = (
        "atoms",
        "by_o",
        "by_s",
        "doms",
        "foreign",
        "k_hi",
        "k_lo",
        "key_orders",
        "lacks",
        "names",
        "_flags",
        "path_props",
        "prop_ids",
        "prop_others",
        "restricts",
        "sdoms",
        "steps",
        "touch",
    )

    def __init__(self) -> None:
        self.names: list[str] = []
        #: Per pattern ``k``, the slots of a gained row in the order the differ binds them.
        self.key_orders: list[list[int]] = []
        #: Per pattern, its touch keys (:func:`~.touchkeys.touch_keys`).
        self.touch: list[frozenset[Any]] = []
        #: Patterns whose property the graph has no triple of: (index, property).
        self.lacks: list[tuple[int, str]] = []
        #: Properties of the paths (an event with edges of one: left to Python).
        self.path_props: set[str] = set()
        #: Constants and domain values the graph does not have.
        self.foreign: set[Term] = set()
        self.atoms = self.steps = self.restricts = np.zeros((0, 0), dtype=np.int64)
        self.doms = self.sdoms = self.k_lo = self.k_hi = _EMPTY
        self._flags: dict[frozenset[Any], tuple[Any, Any]] = {}
        self.by_s: Any = None
        self.by_o: Any = None
        #: Per property of the plan, its id in the graph (-1: none), and the properties
        #: the graph does not have (an event's id for them, if it brings them).
        self.prop_ids = _EMPTY
        self.prop_others: list[tuple[int, str]] = []

    def event_prop_ids(self, event: EventIds) -> IntArray:
        """:attr:`prop_ids` with the event's ids of the properties the graph lacks."""
        if not self.prop_others:
            return self.prop_ids
        out = self.prop_ids.copy()
        for i, iri in self.prop_others:
            out[i] = event.other_ids.get(iri, -1)
        return out

    def flags(self, keys: frozenset[Any]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """For a change carrying ``keys``: per pattern, whether the change touches it, and
        whether a pattern before it has no triple in the old graph or one after it none in
        the new one (its gains then join to nothing); kept per ``keys`` (events of one
        kind carry the same)."""
        found = self._flags.get(keys)
        if found is None:
            if len(self._flags) > 256:
                self._flags.clear()
            touched = [bool(t) and (ANY in t or not t.isdisjoint(keys)) for t in self.touch]
            old = [False] * len(self.touch)
            new = [False] * len(self.touch)
            for i, prop in self.lacks:
                old[i], new[i] = True, prop not in keys
            skip = [any(old[:k]) or any(new[k + 1 :]) for k in range(len(old))]
            found = self._flags[keys] = (
                np.array(touched, dtype=np.bool_),
                np.array(skip, dtype=np.bool_),
            )
        return found


class _Builder:
    """The tables of one :class:`GainsPlan` being compiled."""

    def __init__(self, view: GraphView, params: Callable[[Any], Params]) -> None:
        self.view = view
        self.params = params
        self.plan = GainsPlan()
        self.slots: dict[str, int] = {}
        self.doms: list[int] = []
        self.restricts: list[tuple[int, int, int]] = []
        self.sdoms: list[int] = []
        self.props: list[tuple[IntArray, IntArray]] = []
        self.prop_at: dict[str, int] = {}
        self.prop_ids: list[int] = []

    def slot(self, name: str) -> int:
        found = self.slots.get(name)
        if found is None:
            found = self.slots[name] = len(self.slots)
            self.plan.names.append(name)
        return found

    def const(self, term: Any) -> int:
        found = self.view.terms.ids.get(term)
        if found is None:
            self.plan.foreign.add(term)
            return -1
        return found

    def ids(self, domain: Collection[Term]) -> list[int]:
        out = []
        for value in domain:
            found = self.view.terms.ids.get(value)
            if found is None:
                self.plan.foreign.add(value)
            else:
                out.append(found)
        return out

    def prop(self, iri: str) -> int | None:
        """The property's index in the plan's arrays (None: its segment holds unmerged
        edits and more than :data:`MERGE_FOR_PLAN` triples, left to Python's lookups,
        which merge them in; a smaller one is merged into a copy for the plan)."""
        found = self.prop_at.get(iri)
        if found is not None:
            return found
        pid = self.view.terms.ids.get(iri)
        seg = self.view.triples.segments.get(pid) if pid is not None else None
        if seg is not None and (seg.plus_s or seg.minus):
            if seg.size > MERGE_FOR_PLAN:
                return None
            so, _, os = seg.merged()
            arrays = (so, os)
        else:
            arrays = (seg.so, seg.os) if seg is not None and seg.size else (_EMPTY, _EMPTY)
        found = self.prop_at[iri] = len(self.props)
        self.props.append(arrays)
        self.prop_ids.append(-1 if pid is None else pid)
        if pid is None:
            self.plan.prop_others.append((found, iri))
        return found

    def restrict(self, params: Params) -> tuple[int, int]:
        lo = len(self.restricts)
        for name, domain in params:
            values = sorted(set(self.ids(domain)))
            at = len(self.sdoms)
            self.restricts.append((self.slot(name), at, at + len(values)))
            self.sdoms.extend(values)
        return lo, len(self.restricts)

    def atom(self, atom: Any) -> list[int] | None:
        """A pattern's row (None: the kernel cannot take it)."""
        if type(atom) is TriplePattern and type(atom.p) is str:
            kind, iri = gk.TRIPLE, atom.p
        elif type(atom) is alg.PathPattern and _plus_link(atom.path):
            kind, iri = gk.PLUS, atom.path[1][1]
            self.plan.path_props.add(iri)
        else:
            return None
        prop = self.prop(iri)
        if prop is None:
            return None
        row = [kind, prop, 0, 0, 0, 0, 0, 0]
        for val, var, term in ((gk.S_VAL, gk.S_VAR, atom.s), (gk.O_VAL, gk.O_VAR, atom.o)):
            if type(term) is Var:
                row[val], row[var] = self.slot(term.name), 1
            else:
                row[val] = self.const(term)
        row[gk.AR_LO], row[gk.AR_HI] = self.restrict(self.params(atom))
        return row

    def step(self, index: int, atom: Any, side: int, bound: set[str], keys: list[int]) -> bool:
        """One join step, as the differ's ``_match`` takes it (False: it would scan)."""
        params = self.params(atom)
        row = [gk.LINK, side, index, -1, 0, 0, 0, 0]
        open_ = [(n, d) for n, d in params if n not in bound]
        s_t, o_t = atom.s, atom.o
        if len(open_) == 1 and len(open_[0][1]) <= EXPAND:
            name, domain = open_[0]
            values = self.ids(domain)
            row[gk.DOM_LO], row[gk.DOM_HI] = len(self.doms), len(self.doms) + len(values)
            self.doms.extend(values)
            row[gk.PARAM] = self.slot(name)
            keys.append(row[gk.PARAM])
            s_var = s_t.name if type(s_t) is Var else None
            if (
                type(atom) is TriplePattern
                and type(o_t) is Var
                and o_t.name == name
                and s_var != name
                and (s_var is None or s_var in bound)
            ):
                row[gk.MODE] = gk.EXPAND_OBJECT
                bound.add(name)
                self.steps.append(row)
                return True
            row[gk.MODE] = gk.EXPAND_LINK
            bound.add(name)
        elif params:
            row[gk.MODE] = gk.RESTRICT
            row[gk.R_LO], row[gk.R_HI] = self.restrict(params)
        ends = [t for t in (s_t, o_t) if type(t) is Var and t.name not in bound]
        if len(ends) == 2:
            return False
        for t in ends:
            if self.slots[t.name] not in keys:
                keys.append(self.slots[t.name])
        bound.update(t.name for t in ends)
        self.steps.append(row)
        return True

    steps: list[list[int]]


def _plus_link(path: Any) -> bool:
    return (
        type(path) is tuple
        and len(path) == 2
        and path[0] == "plus"
        and type(path[1]) is tuple
        and path[1][0] == "link"
        and type(path[1][1]) is str
    )


def compile_gains(
    atoms: Sequence[Any],
    view: GraphView,
    params: Callable[[Any], Params],
    order: Callable[[int], Sequence[tuple[Any, int]]],
    touch: Callable[[Any], frozenset[Any]],
    has: Callable[[Any], bool] | None,
) -> GainsPlan | None:
    """``atoms`` compiled (None: one of them, or a join step, is not for the kernel):
    ``params`` a pattern's parameters, ``order(k)`` the join order of the others from
    pattern ``k``'s rows, ``touch`` a pattern's touch keys, ``has`` whether the graph
    holds a triple of a property."""
    b = _Builder(view, params)
    b.steps = []
    plan = b.plan
    rows = [b.atom(a) for a in atoms]
    if any(r is None for r in rows):
        return None
    index = {id(a): i for i, a in enumerate(atoms)}
    lo, hi = [], []
    for k, atom in enumerate(atoms):
        bound = set(atom.variables())
        keys = [b.slots[t.name] for t in (atom.s, atom.o) if type(t) is Var]
        keys = list(dict.fromkeys(keys))
        lo.append(len(b.steps))
        for other, side in order(k):
            if not b.step(index[id(other)], other, side, bound, keys):
                return None
        hi.append(len(b.steps))
        plan.key_orders.append(keys)
    for i, atom in enumerate(atoms):
        plan.touch.append(touch(atom))
        if has is not None and type(atom) is TriplePattern and type(atom.p) is str:
            if not has(atom.p):
                plan.lacks.append((i, atom.p))
    plan.atoms = np.array(rows, dtype=np.int64).reshape(-1, gk.ATOM_WIDTH)
    plan.steps = np.array(b.steps, dtype=np.int64).reshape(-1, gk.STEP_WIDTH)
    plan.k_lo, plan.k_hi = np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
    plan.doms = np.array(b.doms, dtype=np.int64)
    plan.restricts = np.array(b.restricts, dtype=np.int64).reshape(-1, 3)
    plan.sdoms = np.array(b.sdoms, dtype=np.int64)
    plan.prop_ids = np.array(b.prop_ids, dtype=np.int64)
    plan.by_s = TypedList([s for s, _ in b.props])
    plan.by_o = TypedList([o for _, o in b.props])
    return plan
