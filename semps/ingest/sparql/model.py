"""The query model a subscription text parses into.

CONTRACT shared by the parser and the semantic matcher (extend, do not rename):

- :class:`Var` (with :class:`TriplePattern`, in :mod:`.patterns`): a variable (blank nodes
  in the query become variables whose name starts
  with ``"_"``, never projected).
- :class:`TriplePattern`: subject, predicate, object; each a :class:`Var`, an IRI ``str`` or
  a :class:`~semps.terms.Literal`. ``rdf:type`` patterns use the full IRI
  ``http://www.w3.org/1999/02/22-rdf-syntax-ns#type``.
- :class:`Query`: the form (``SELECT``/``ASK``), the projection (``None`` for ``*``),
  ``distinct``, the patterns and the FILTER expressions. Filters are objects with
  ``variables() -> frozenset[str]`` and ``evaluate(bindings) -> bool`` (SPARQL semantics:
  an evaluation error is false).
- ``Query.algebra``: ``None`` for a basic graph pattern with FILTERs (``patterns`` and
  ``filters`` say everything); otherwise the whole WHERE clause as a SPARQL algebra tree
  (:mod:`semps.ingest.sparql.algebra`), with ``patterns`` and ``filters`` empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal as TypingLiteral
from typing import Protocol

from semps._types import Term
from semps.ingest.sparql.algebra import Node, in_scope
from semps.ingest.sparql.patterns import PatternTerm, TriplePattern, Var

__all__ = ["Filter", "PatternTerm", "Query", "TriplePattern", "Var"]


class Filter(Protocol):
    """A FILTER expression."""

    def variables(self) -> frozenset[str]:
        """Names of the variables the expression reads."""
        ...

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """The expression's effective boolean value; errors (unbound, type) are false."""
        ...


@dataclass(frozen=True)
class Query:
    """A parsed subscription: a basic graph pattern with filters, or an algebra tree."""

    form: TypingLiteral["SELECT", "ASK"]
    projection: tuple[str, ...] | None
    distinct: bool
    patterns: tuple[TriplePattern, ...]
    filters: tuple[Filter, ...] = ()
    algebra: Node | None = None
    #: The non-BGP constructs the query uses, named (``"OPTIONAL"``, ``"property path"``).
    constructs: tuple[str, ...] = ()

    def variables(self) -> frozenset[str]:
        """Every variable named in the patterns (in scope of the algebra, if any)."""
        if self.algebra is not None:
            return in_scope(self.algebra)
        # one set for all (``frozenset |=`` copies: quadratic in the patterns)
        return frozenset([t.name for p in self.patterns for t in (p.s, p.p, p.o) if type(t) is Var])

    def projected(self) -> tuple[str, ...]:
        """The projected variable names (``*`` means every non-blank variable, sorted)."""
        if self.projection is not None:
            return self.projection
        return tuple(sorted(v for v in self.variables() if not v.startswith("_")))
