"""The terms of a query's triple patterns: a :class:`Var`, an IRI ``str`` or a
:class:`~semps.terms.Literal` (:data:`PatternTerm`), three to a :class:`TriplePattern`
(the query model, :mod:`semps.ingest.sparql.model`, and its algebra,
:mod:`semps.ingest.sparql.algebra`, are built of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from semps.terms import Literal

__all__ = ["PatternTerm", "TriplePattern", "Var"]


@dataclass(frozen=True, slots=True)
class Var:
    """A query variable, named without its ``?``/``$``."""

    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


PatternTerm: TypeAlias = Var | str | Literal


@dataclass(frozen=True, slots=True)
class TriplePattern:
    """One triple pattern of a basic graph pattern."""

    s: PatternTerm
    p: PatternTerm
    o: PatternTerm

    def variables(self) -> frozenset[str]:
        """Names of the variables in this pattern."""
        return frozenset(t.name for t in (self.s, self.p, self.o) if type(t) is Var)
