"""A subscription compiled for the index: its patterns as node-pair keys, and its filters."""

from __future__ import annotations

from dataclasses import dataclass

from semps._types import Term
from semps.ingest.sparql.model import Filter, Query, Var

#: The node-pair-name wildcard: a variable matches any node (the seed's ``*``).
STAR = "*"

#: A node-pair key (the seed's NPN): subject constant or STAR, object constant or STAR.
NPNKey = tuple[Term, Term]


@dataclass(frozen=True, slots=True)
class Pattern:
    """One triple pattern: its property, node-pair key and variable names (or None)."""

    prop: str
    key: NPNKey
    s_var: str | None
    o_var: str | None


@dataclass(frozen=True, slots=True)
class CompiledSubscription:
    """What the index and the verifier need of a subscription."""

    id: str
    patterns: tuple[Pattern, ...]
    filters: tuple[Filter, ...]
    projection: tuple[str, ...]
    distinct: bool
    ask: bool


def compile_query(subscription_id: str, query: Query) -> CompiledSubscription:
    """Turn a parsed query into index patterns (constants stay, variables become ``*``).

    Example:
        >>> from semps.ingest.sparql import parse_query
        >>> c = compile_query("s1", parse_query("SELECT ?x { ?x <http://p> <http://o> }"))
        >>> c.patterns[0]
        Pattern(prop='http://p', key=('*', 'http://o'), s_var='x', o_var=None)
    """
    patterns = []
    for tp in query.patterns:
        assert not isinstance(tp.p, Var), "the parser refuses variable predicates"
        s_var = tp.s.name if isinstance(tp.s, Var) else None
        o_var = tp.o.name if isinstance(tp.o, Var) else None
        key = (STAR if s_var else tp.s, STAR if o_var else tp.o)
        patterns.append(Pattern(str(tp.p), key, s_var, o_var))  # type: ignore[arg-type]
    return CompiledSubscription(
        id=subscription_id,
        patterns=tuple(patterns),
        filters=tuple(query.filters),
        projection=query.projected() if query.form == "SELECT" else (),
        distinct=query.distinct,
        ask=query.form == "ASK",
    )
