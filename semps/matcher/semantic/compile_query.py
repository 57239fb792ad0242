"""Subscription compilation: a parsed query turned into what the index holds (its patterns
as node-pair keys, its filters, its components' join plans, or its algebra's evaluation
plan and required alternatives).

Example:
    >>> from semps.ingest.sparql import parse_query
    >>> c = compile_query("s1", parse_query("SELECT ?x { ?x <http://p> <http://o> }"))
    >>> c.patterns[0]
    Pattern(prop='http://p', key=('*', 'http://o'), s_var='x', o_var=None)
"""

from __future__ import annotations

from semps.ingest.sparql.model import Query, Var
from semps.matcher.semantic.codes import STAR
from semps.matcher.semantic.compiled import (
    ANY_KEY,
    CompiledSubscription,
    Pattern,
    plan_components,
)
from semps.matcher.semantic.evaluate import plan
from semps.matcher.semantic.required import alternatives

__all__ = ["compile_query"]


def compile_query(subscription_id: str, query: Query) -> CompiledSubscription:
    """Turn a parsed query into index patterns (constants stay, variables become ``*``)."""
    if query.algebra is not None:
        return _compile_algebra(subscription_id, query)
    patterns = []
    for tp in query.patterns:
        s, p, o = tp.s, tp.p, tp.o
        assert type(p) is not Var, "variable predicates come as an algebra"
        s_var = s.name if type(s) is Var else None
        o_var = o.name if type(o) is Var else None
        key = ANY_KEY if s_var and o_var else (STAR if s_var else s, STAR if o_var else o)
        prop = p if type(p) is str else str(p)
        patterns.append(Pattern(prop, key, s_var, o_var))  # type: ignore[arg-type]
    projection = query.projected() if query.form == "SELECT" else ()
    filters = tuple(query.filters)
    return CompiledSubscription(
        id=subscription_id,
        patterns=tuple(patterns),
        filters=filters,
        projection=projection,
        distinct=query.distinct,
        ask=query.form == "ASK",
        components=plan_components(tuple(patterns), filters, projection),
    )


def _compile_algebra(subscription_id: str, query: Query) -> CompiledSubscription:
    found = alternatives(query.algebra)  # type: ignore[arg-type]
    return CompiledSubscription(
        id=subscription_id,
        patterns=tuple(dict.fromkeys(p for alt in found for p in alt)),
        filters=(),
        projection=query.projected() if query.form == "SELECT" else (),
        distinct=query.distinct,
        ask=query.form == "ASK",
        algebra=plan(query.algebra),  # type: ignore[arg-type]
        alternatives=found,
    )
