"""What a change of the graph does to a property path pattern's rows, for the graph's
differ (:mod:`.graphdiff`): the pairs that change start from nodes that reach a changed
edge of one of the path's properties (in either direction, over the graph before and
after); each such start is evaluated before and after, and the pairs compared as
multisets.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from semps._types import Term
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.evaluate import Evaluator
from semps.ingest.sparql.model import Var
from semps.matcher.semantic.graphrows import NEW, OLD, Rows, Sol, multiset_minus
from semps.matcher.semantic.touchkeys import ANY, touch_keys

__all__ = ["path_diff"]

#: Evaluators by side (:data:`~.graphrows.OLD`, :data:`~.graphrows.NEW`), or the change's
#: added and removed triples.
Sides = tuple[Evaluator, Evaluator]


def path_diff(atom: alg.PathPattern, ev: Sides, delta: Sides) -> tuple[Rows, Rows]:
    """A path pattern's changed rows: from each start node that may reach a changed
    edge (or a bound end), the pairs before and after (``ev``: the evaluators of the
    graph before and after the change; ``delta``: of its added and removed triples)."""
    old_ev, new_ev = ev[OLD], ev[NEW]
    s = cast(Term, atom.s) if type(atom.s) is not Var else None
    o = cast(Term, atom.o) if type(atom.o) is not Var else None
    if s is None and o is not None:  # from the bound end, backwards
        inverse = alg.PathPattern(atom.o, ("inv", atom.path), atom.s)
        gained, lost = path_diff(inverse, ev, delta)
        return gained, lost
    starts: Iterable[Term] = (s,) if s is not None else _starts(atom, ev, delta)
    gained, lost = [], []
    for start in starts:
        before = old_ev.path(atom.path, start, o)
        after = new_ev.path(atom.path, start, o)
        gained += _path_rows(atom, multiset_minus(after, before))
        lost += _path_rows(atom, multiset_minus(before, after))
    return gained, lost


def _starts(atom: alg.PathPattern, evs: Sides, delta: Sides) -> list[Term]:
    """Nodes from which the path's pairs may have changed: every node of either graph
    linked, by the path's properties in either direction, to a changed triple's end
    (all nodes for a negated property set or a zero-length path)."""
    if ANY in touch_keys(alg.BGP((atom,))):
        nodes = dict.fromkeys(evs[OLD].nodes())
        nodes.update(dict.fromkeys(evs[NEW].nodes()))
        return list(nodes)
    props = alg.path_iris(atom.path)
    todo: list[Term] = []
    for ev in delta:
        for prop in props:
            for a, b in ev.by_prop.get(prop, ()):
                todo += (a, b)
    seen = dict.fromkeys(todo)
    while todo:
        node = todo.pop()
        for side in (OLD, NEW):
            ev = evs[side]
            for prop in props:
                for _, b in ev.link(prop, node, None):
                    ev.tick()
                    if b not in seen:
                        seen[b] = None
                        todo.append(b)
                for a, _ in ev.link(prop, None, node):
                    ev.tick()
                    if a not in seen:
                        seen[a] = None
                        todo.append(a)
    return list(seen)


def _path_rows(atom: alg.PathPattern, pairs: list[tuple[Term, Term]]) -> Rows:
    out: Rows = []
    for a, b in pairs:
        row: Sol = {}
        if _bind(row, atom.s, a) and _bind(row, atom.o, b):
            out.append(row)
    return out


def _bind(row: Sol, term: Any, value: Term) -> bool:
    if type(term) is not Var:
        return bool(term == value)
    return row.setdefault(term.name, value) == value
