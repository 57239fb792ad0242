"""The SPARQL-like subscription language (a basic-graph-pattern fragment of SPARQL 1.1)."""

from semps.ingest.sparql.model import Query, TriplePattern, Var

__all__ = ["Query", "TriplePattern", "Var"]
