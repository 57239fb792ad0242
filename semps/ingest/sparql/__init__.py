"""The subscription language: SPARQL 1.1 SELECT and ASK queries over one default graph
(basic graph patterns with FILTERs on a fast path; OPTIONAL, UNION, MINUS, EXISTS, BIND,
VALUES, property paths and the rest as an algebra tree, :mod:`.algebra`).

- :func:`parse_query`: text -> :class:`Query` (raises SubscriptionSyntaxError with
  line/column, or UnsupportedQueryError naming the construct); :func:`parse_memo`: a block
  in which each text is parsed once (or read from parses saved before: a snapshot's).
- :class:`Query`, :class:`TriplePattern`, :class:`Var`: the query model.
- :func:`typed`: a literal's typed value (the matchers' compiled FILTERs share it).
- :func:`compile_regex`: a ``REGEX`` pattern and flags as the RE2 program FILTERs run.
"""

from semps.ingest.sparql._regex import compile_regex
from semps.ingest.sparql._values import typed
from semps.ingest.sparql.model import Query, TriplePattern, Var
from semps.ingest.sparql.parser import open_memo, parse_memo, parse_query

__all__ = [
    "Query",
    "TriplePattern",
    "Var",
    "compile_regex",
    "open_memo",
    "parse_memo",
    "parse_query",
    "typed",
]
