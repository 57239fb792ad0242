"""The SPARQL 1.1 algebra of a subscription wider than a basic graph pattern.

A group graph pattern with OPTIONAL, UNION, MINUS, BIND, VALUES, nested groups, property
paths, variable predicates or FILTER (NOT) EXISTS parses into a tree of these nodes (SPARQL
1.1 section 18.2), which :mod:`semps.ingest.sparql.evaluate` evaluates over one event or the graph:

- :class:`BGP`: triple patterns (any position a variable) and :class:`PathPattern`\\ s.
- :class:`Join`, :class:`LeftJoin` (OPTIONAL, with the FILTERs of its right group),
  :class:`Union`, :class:`Minus` (the operators of two patterns: :class:`Binary`'s
  ``left`` and ``right``), :class:`Filter` (FILTERs of a group, applied last),
  :class:`Extend` (BIND, ``SELECT (expr AS ?v)``), :class:`Values` (inline data).
- :class:`Exists`: ``EXISTS { ... }`` / ``NOT EXISTS { ... }`` as a FILTER.

Paths are nested tuples (data: two parses compare equal): ``("link", iri)``,
``("inv", path)``, ``("seq", (path, ...))``, ``("alt", (path, ...))``,
``("star", path)``, ``("plus", path)``, ``("opt", path)`` and
``("nps", forward_iris, inverse_iris)`` (a negated property set ``!(...)``).

Nodes are frozen dataclasses, so identical subscriptions share one shape (and one
verdict per event).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from semps._types import Term
from semps.ingest.sparql.patterns import PatternTerm, TriplePattern, Var

#: A property path (see the module docstring).
Path: TypeAlias = tuple[Any, ...]


class Expr(Protocol):
    """A compiled expression (:class:`~semps.ingest.sparql.filters.Expression`)."""

    ast: tuple[Any, ...]

    def variables(self) -> frozenset[str]:
        """Names of the variables the expression reads."""
        ...

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """The effective boolean value; errors are false."""
        ...


@dataclass(frozen=True, slots=True)
class PathPattern:
    """``subject path object``: a triple pattern whose predicate is a property path."""

    s: PatternTerm
    path: Path
    o: PatternTerm

    def variables(self) -> frozenset[str]:
        """Names of the variables at its ends."""
        return frozenset(t.name for t in (self.s, self.o) if type(t) is Var)


@dataclass(frozen=True, slots=True)
class BGP:
    """A basic graph pattern (the empty one has one solution binding nothing). Its hash is
    computed once: evaluation caches a pattern's solutions per event by the pattern."""

    triples: tuple[TriplePattern | PathPattern, ...] = ()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.triples))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class Binary:
    """An operator of two patterns (never a node itself: evaluation dispatches on the
    concrete type, and two operators of the same sides are not equal)."""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Join(Binary):
    """Both sides' compatible solutions merged."""


@dataclass(frozen=True, slots=True)
class LeftJoin(Binary):
    """OPTIONAL: each left solution extended by the compatible right ones that pass the
    filters, or kept alone when there are none."""

    filters: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Union(Binary):
    """The solutions of either side (a multiset union)."""


@dataclass(frozen=True, slots=True)
class Minus(Binary):
    """The left solutions with no compatible right solution sharing a variable."""


@dataclass(frozen=True, slots=True)
class Filter:
    """The inner solutions for which every filter is true."""

    inner: Node
    filters: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Extend:
    """BIND: each inner solution with ``var`` bound to the expression's value (left
    unbound when it is an error)."""

    inner: Node
    var: str
    expr: Any


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data: one solution per row (``None`` leaves the variable unbound)."""

    variables: tuple[str, ...]
    rows: tuple[tuple[Term | None, ...], ...]


@dataclass(frozen=True, slots=True)
class Exists:
    """``EXISTS { pattern }`` (``negated``: ``NOT EXISTS``) used as a FILTER: true when the
    pattern, with the solution's bindings substituted, has a solution."""

    pattern: Node
    negated: bool

    def variables(self) -> frozenset[str]:
        """The pattern's variables (what the filter may read of a solution)."""
        return in_scope(self.pattern)

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """Never called: the evaluator answers EXISTS with the event's graph at hand."""
        msg = "EXISTS is evaluated by semps.ingest.sparql.evaluate"
        raise NotImplementedError(msg)


@dataclass(frozen=True, slots=True)
class WithExists:
    """An expression with ``EXISTS { }`` / ``NOT EXISTS { }`` inside (``FILTER(?a = ?b ||
    NOT EXISTS { ... })``): each stands in ``expr`` as a variable no query can name, which
    the evaluator binds to the pattern's answer (xsd:boolean) before evaluating ``expr``."""

    expr: Any
    exists: tuple[tuple[str, Exists], ...]

    def variables(self) -> frozenset[str]:
        """What the expression and its patterns may read of a solution."""
        own: frozenset[str] = self.expr.variables() - {name for name, _ in self.exists}
        return own.union(*(e.variables() for _, e in self.exists))

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """Never called: the evaluator answers EXISTS with the event's graph at hand."""
        msg = "EXISTS is evaluated by semps.ingest.sparql.evaluate"
        raise NotImplementedError(msg)


Node: TypeAlias = BGP | Join | LeftJoin | Union | Minus | Filter | Extend | Values


def in_scope(node: Node) -> frozenset[str]:
    """The variables a pattern may bind (SPARQL 1.1 section 18.2.1), blank ones included."""
    if type(node) is BGP:
        return frozenset().union(*(t.variables() for t in node.triples))
    if type(node) is Values:
        return frozenset(node.variables)
    if type(node) is Extend:
        return in_scope(node.inner) | {node.var}
    if type(node) is Filter:
        return in_scope(node.inner)
    if type(node) is Minus:
        return in_scope(node.left)
    return in_scope(node.left) | in_scope(node.right)  # type: ignore[union-attr]


def path_iris(path: Path) -> frozenset[str]:
    """Every property IRI a path names."""
    kind = path[0]
    if kind == "link":
        return frozenset((path[1],))
    if kind == "nps":
        return frozenset(path[1]) | frozenset(path[2])
    if kind in ("seq", "alt"):
        return frozenset().union(*(path_iris(p) for p in path[1]))
    return path_iris(path[1])


__all__ = [
    "BGP",
    "Exists",
    "Extend",
    "Filter",
    "Join",
    "LeftJoin",
    "Minus",
    "Node",
    "Path",
    "PathPattern",
    "Union",
    "Values",
    "WithExists",
    "in_scope",
    "path_iris",
]
