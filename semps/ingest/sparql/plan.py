"""The join order of a SPARQL algebra tree, before :mod:`semps.ingest.sparql.evaluate`
runs it: each basic graph pattern's patterns ordered so the most bound come first
(constants, or variables earlier patterns bind), triples before paths, inside EXISTS too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.model import TriplePattern, Var

__all__ = ["plan"]


def plan(node: alg.Node) -> alg.Node:
    """The tree with each basic graph pattern's patterns in join order: the most bound
    (constants, or variables earlier patterns bind) first, triples before paths."""
    kind = type(node)
    if kind is alg.BGP:
        remaining = list(node.triples)  # type: ignore[union-attr]
        bound: set[str] = set()
        ordered = []
        while remaining:
            best = max(range(len(remaining)), key=lambda i: _score(remaining[i], bound, i))
            pattern = remaining.pop(best)
            ordered.append(pattern)
            bound |= pattern.variables()
            if type(pattern) is TriplePattern and type(pattern.p) is Var:
                bound.add(pattern.p.name)
        return alg.BGP(tuple(ordered))
    if kind in (alg.Join, alg.Union, alg.Minus):
        return kind(plan(node.left), plan(node.right))  # type: ignore[union-attr]
    if kind is alg.LeftJoin:
        return alg.LeftJoin(plan(node.left), plan(node.right), _plan_filters(node.filters))  # type: ignore[union-attr]
    if kind is alg.Filter:
        return alg.Filter(plan(node.inner), _plan_filters(node.filters))  # type: ignore[union-attr]
    if kind is alg.Extend:
        return alg.Extend(plan(node.inner), node.var, _plan_filter(node.expr))  # type: ignore[union-attr]
    return node


def _plan_filters(filters: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_plan_filter(f) for f in filters)


def _plan_filter(f: Any) -> Any:
    if type(f) is alg.Exists:
        return alg.Exists(plan(f.pattern), f.negated)
    if type(f) is alg.WithExists:
        return alg.WithExists(f.expr, tuple((n, _plan_filter(e)) for n, e in f.exists))
    return f


def _score(
    pattern: TriplePattern | alg.PathPattern, bound: Iterable[str], i: int
) -> tuple[int, int, int]:
    """Patterns with more bound or constant ends first, triples before paths."""
    ends = [pattern.s, pattern.o]
    if type(pattern) is TriplePattern:
        ends.append(pattern.p)
    known = sum(type(t) is not Var or t.name in bound for t in ends)
    return (known, type(pattern) is TriplePattern, -i)
