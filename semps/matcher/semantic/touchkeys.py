"""Touch keys: what a change of the graph must carry for a pattern's solutions to change.

A pattern's keys are the properties of its triple and path patterns (anywhere in it:
OPTIONAL, MINUS, EXISTS, paths), ``("type", C)`` for a type pattern with a constant class,
and :data:`ANY` where any triple may matter. A change's keys are its triples' properties
and each added or removed type's class; :func:`touched` says whether they meet. The
graph's differ (:mod:`~semps.matcher.semantic.graphdiff`) skips every node a change does
not touch.

    >>> from semps.ingest.sparql.model import TriplePattern, Var
    >>> from semps.ingest.sparql import algebra as alg
    >>> bgp = alg.BGP((TriplePattern(Var("s"), "http://x/p", Var("o")),))
    >>> sorted(touch_keys(bgp))
    ['http://x/p']
    >>> touched(bgp, change_keys([("http://x/a", "http://x/q", "http://x/b")]))
    False
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from semps._types import Term
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.model import TriplePattern, Var
from semps.terms import RDF_TYPE

__all__ = ["ANY", "change_keys", "touch_keys", "touched", "zero_length"]

Atom = TriplePattern | alg.PathPattern

#: The touch key of patterns any change may affect (a variable predicate, a negated
#: property set, a zero-length path between two variables).
ANY = "\x00any"


def touch_keys(node: alg.Node) -> frozenset[str | tuple[str, Term]]:
    """What a change must hold for ``node``'s solutions to change: the properties of its
    patterns (anywhere: OPTIONAL, MINUS, EXISTS, paths), ``("type", class)`` for a type
    pattern with a constant class, :data:`ANY` when any triple may matter."""
    found = _TOUCH.get(node)
    if found is None:
        if len(_TOUCH) > 100_000:
            _TOUCH.clear()
        keys: set[str | tuple[str, Term]] = set()
        _collect(node, keys)
        found = _TOUCH[node] = frozenset(keys)
    return found


_TOUCH: dict[Any, frozenset[str | tuple[str, Term]]] = {}


def _collect(node: Any, keys: set[str | tuple[str, Term]]) -> None:
    kind = type(node)
    if kind is alg.BGP:
        for t in node.triples:
            _collect_atom(t, keys)
    elif kind in (alg.Join, alg.Union, alg.Minus):
        _collect(node.left, keys)
        _collect(node.right, keys)
    elif kind is alg.LeftJoin:
        _collect(node.left, keys)
        _collect(node.right, keys)
        _collect_filters(node.filters, keys)
    elif kind is alg.Filter:
        _collect(node.inner, keys)
        _collect_filters(node.filters, keys)
    elif kind is alg.Extend:
        _collect(node.inner, keys)
        _collect_filters((node.expr,), keys)


def _collect_filters(filters: Iterable[Any], keys: set[str | tuple[str, Term]]) -> None:
    for f in filters:
        if type(f) is alg.Exists:
            _collect(f.pattern, keys)
        elif type(f) is alg.WithExists:
            for _, exists in f.exists:
                _collect(exists.pattern, keys)


def _collect_atom(t: Atom, keys: set[str | tuple[str, Term]]) -> None:
    if type(t) is alg.PathPattern:
        path = t.path
        if _has_nps(path) or (zero_length(path) and type(t.s) is Var and type(t.o) is Var):
            keys.add(ANY)
        keys.update(alg.path_iris(path))
        return
    p = t.p  # type: ignore[union-attr]
    if type(p) is Var:
        keys.add(ANY)
    elif p == RDF_TYPE and type(t.o) is not Var:
        keys.add(("type", t.o))  # type: ignore[arg-type]
    else:
        keys.add(p)  # type: ignore[arg-type]


def _has_nps(path: Any) -> bool:
    kind = path[0]
    if kind == "nps":
        return True
    if kind == "link":
        return False
    if kind in ("seq", "alt"):
        return any(_has_nps(p) for p in path[1])
    return _has_nps(path[1])


def zero_length(path: Any) -> bool:
    """Whether the path may be of length zero (``p*``, ``p?``, ...)."""
    kind = path[0]
    if kind in ("star", "opt"):
        return True
    if kind == "seq":
        return all(zero_length(p) for p in path[1])
    if kind == "alt":
        return any(zero_length(p) for p in path[1])
    if kind == "inv":
        return zero_length(path[1])
    return False


def change_keys(triples: Iterable[tuple[str, str, Term]]) -> set[str | tuple[str, Term]]:
    """The touch keys a change's triples carry (their properties, and each type's class)."""
    keys: set[str | tuple[str, Term]] = set()
    for _, p, o in triples:
        keys.add(p)
        if p == RDF_TYPE:
            keys.add(("type", o))
    return keys


def touched(node: Any, keys: set[str | tuple[str, Term]]) -> bool:
    """Whether a change carrying ``keys`` can change ``node``'s solutions."""
    own = touch_keys(node)
    return bool(own) and (ANY in own or not own.isdisjoint(keys))
