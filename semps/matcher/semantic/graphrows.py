"""Solutions as the graph's differ (:mod:`.graphdiff`) handles them: rows (a variable's
name to its term), the variables every solution of an algebra node binds (where seeding a
node with a row is sound), and the multiset difference of two lists.

    >>> from semps.ingest.sparql.model import TriplePattern, Var
    >>> from semps.ingest.sparql import algebra as alg
    >>> sorted(certain(alg.BGP((TriplePattern(Var("s"), "http://x/p", Var("o")),))))
    ['o', 's']
    >>> multiset_minus(["a", "b", "a"], ["a"])
    ['b', 'a']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import Any, TypeVar

from semps._types import Term
from semps.ingest.sparql import algebra as alg

__all__ = ["NEW", "OLD", "Rows", "Sol", "certain", "multiset_minus"]

Sol = dict[str, Term]
Rows = list[Sol]
H = TypeVar("H", bound=Hashable)
#: The two sides of a change: the graph before it and after it.
OLD, NEW = 0, 1


def certain(node: alg.Node) -> frozenset[str]:
    """The variables every solution of ``node`` binds."""
    found = _CERTAIN.get(node)
    if found is None:
        found = _CERTAIN[node] = _certain(node)
    return found


_CERTAIN: dict[Any, frozenset[str]] = {}


def _certain(node: alg.Node) -> frozenset[str]:
    if len(_CERTAIN) > 100_000:
        _CERTAIN.clear()
    kind = type(node)
    if kind is alg.BGP:
        return alg.in_scope(node)
    if kind is alg.Join:
        return certain(node.left) | certain(node.right)  # type: ignore[union-attr]
    if kind in (alg.LeftJoin, alg.Minus):
        return certain(node.left)  # type: ignore[union-attr]
    if kind is alg.Union:
        return certain(node.left) & certain(node.right)  # type: ignore[union-attr]
    if kind in (alg.Filter, alg.Extend):
        return certain(node.inner)  # type: ignore[union-attr]
    values: alg.Values = node  # type: ignore[assignment]
    return frozenset(
        v for i, v in enumerate(values.variables) if all(row[i] is not None for row in values.rows)
    )


def multiset_minus(a: list[H], b: list[H]) -> list[H]:
    """The multiset difference ``a - b`` of two lists of hashable values (pairs, rows)."""
    if not b:
        return a
    counts = Counter(b)
    out = []
    for item in a:
        if counts.get(item, 0) > 0:
            counts[item] -= 1
        else:
            out.append(item)
    return out
