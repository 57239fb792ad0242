"""Subscriptions up to their constants: the *template* a subscription shares with every
query that differs from it only in constants, for matching with a knowledge graph.

A facilities application registers one query many times over: "a reading of *this* point
above *this* value", "a zone temperature downstream of *this* AHU". Matching each against
the graph one by one costs one evaluation per subscription and event. Their template is
the query with those constants replaced by *parameters*, variables no query can name
(``?s a brick:VAV ; brick:hasLocation ?room . ?room brick:isPartOf <floor>`` becomes ``...
brick:isPartOf ?⟨g1⟩``, the class a parameter too); evaluated once per event, its
solutions go to the subscriptions whose constants equal the parameters' values
(:mod:`.graphgroups`).

A constant written twice is one parameter (``<vav> brick:hasPoint ?s , ?p`` joins its two
patterns on it, as the query does): evaluated as two, the template would pair every
equipment's points with the event's.

That is exact where a constant stands in the query's *spine*: a triple pattern (or a
path that cannot be of length zero) reached from the root through joins, the left sides
of OPTIONAL and MINUS, FILTER and BIND. There a solution of the query is a solution of the
template whose parameter is bound to the constant, and the other way round, with the same
multiplicity: a parameter is bound in every solution of the template (:func:`~.graphrows.
certain`), read by no filter, expression or other pattern, so selecting on its value
commutes with the joins, OPTIONAL, MINUS, FILTER, BIND and with the change rule
(``new = old - lost + gained`` holds for each selection). Constants elsewhere (inside
OPTIONAL, MINUS, UNION, EXISTS, a zero-length path, a predicate, the ends of a pattern
whose predicate is a variable) stay in the template:
subscriptions differing there have different templates.

The FILTERs of the query's outermost group that hold a constant are taken out of the
template and kept per subscription (its *post filters*): a FILTER there is a test of each
solution, so filtering the template's changed solutions per subscription gives each its
own changes (:mod:`.graphthresholds` sorts comparisons with a constant). FILTERs without
constants, and those with EXISTS, stay in the template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from semps._types import Term
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql.model import TriplePattern, Var
from semps.matcher.semantic.touchkeys import zero_length
from semps.terms import RDF_TYPE

__all__ = ["Template", "instantiate", "param_name", "template_of"]

#: A class constant of a type pattern, as the template's touch keys see it (the class is
#: a parameter: each subscription's class is a key of its own, :mod:`.graphgroups`).
TYPE_PARAM = "\x00type parameter"


def param_name(n: int) -> str:
    """The name of parameter ``n`` (a space: no query can spell it)."""
    return _NAMES[n] if n < len(_NAMES) else f" g{n}"


_NAMES = tuple(f" g{n}" for n in range(64))


@dataclass(frozen=True, slots=True)
class Template:
    """A query up to its spine's constants and its outer FILTERs with constants.

    Attributes:
        where: the pattern, parameters in the constants' places.
        projection / distinct / ask: the query form, as the subscription's.
        params: the parameters' names, in order.
        type_params: the positions in ``params`` of classes of type patterns.
        keyed: ``where`` with those classes as :data:`TYPE_PARAM` (its touch keys are the
            template's, but for each subscription's classes).
    """

    where: alg.Node
    projection: tuple[str, ...]
    distinct: bool
    ask: bool
    params: tuple[str, ...]
    type_params: tuple[int, ...]
    keyed: alg.Node


def template_of(
    where: alg.Node, projection: tuple[str, ...], distinct: bool, ask: bool
) -> tuple[Template, tuple[Term, ...], tuple[Any, ...]]:
    """The query's template, its constants (the parameters' values) and its post filters.

    Example:
        >>> from semps.ingest.sparql.algebra import BGP
        >>> from semps.ingest.sparql.model import TriplePattern, Var
        >>> where = BGP((TriplePattern(Var("s"), "http://ex/p", "http://ex/o"),))
        >>> t, constants, post = template_of(where, ("s",), False, False)
        >>> t.where.triples[0].o, constants, post
        (Var(name=' g0'), ('http://ex/o',), ())
    """
    filters: list[Any] = []
    core = where
    while type(core) is alg.Filter:
        filters[:0] = core.filters
        core = core.inner
    post = tuple(f for f in filters if _pulled(f))
    kept = tuple(f for f in filters if not _pulled(f))
    constants: list[Term] = []
    types: list[int] = []
    core, keyed = _spine(core, constants, types)
    if kept:
        core, keyed = alg.Filter(core, kept), alg.Filter(keyed, kept)
    params = tuple(param_name(i) for i in range(len(constants)))
    template = Template(core, projection, distinct, ask, params, tuple(types), keyed)
    return template, tuple(constants), post


def instantiate(template: Template, constants: tuple[Term, ...], post: tuple[Any, ...]) -> alg.Node:
    """The query pattern of one subscription: the template's parameters replaced by
    ``constants`` and the ``post`` filters put back (what :func:`template_of` took
    apart)."""
    values = dict(zip(template.params, constants, strict=True))
    where = _put(template.where, values)
    return alg.Filter(where, post) if post else where


def _pulled(f: Any) -> bool:
    """Whether an outer FILTER leaves the template: it holds a constant, no EXISTS."""
    if type(f) is alg.Exists or type(f) is alg.WithExists:
        return False
    ast = getattr(f, "ast", None)
    return type(ast) is tuple and _has_constant(ast)


def _has_constant(ast: Any) -> bool:
    stack: list[Any] = [ast]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            if node and node[0] == "term":
                return True
            stack.extend(node[1:])
        elif type(node) is list:
            stack.extend(node)
    return False


def _spine(node: alg.Node, constants: list[Term], types: list[int]) -> tuple[alg.Node, alg.Node]:
    """``node`` with its spine's constants as parameters (appended to ``constants``), and
    the same with type parameters as :data:`TYPE_PARAM`."""
    kind = type(node)
    if kind is alg.BGP:
        return _bgp(node, constants, types)  # type: ignore[arg-type]
    if kind is alg.Join:
        left, left_k = _spine(node.left, constants, types)  # type: ignore[union-attr]
        right, right_k = _spine(node.right, constants, types)  # type: ignore[union-attr]
        return alg.Join(left, right), alg.Join(left_k, right_k)
    if kind is alg.LeftJoin:
        left, left_k = _spine(node.left, constants, types)  # type: ignore[union-attr]
        right, filters = node.right, node.filters  # type: ignore[union-attr]
        return alg.LeftJoin(left, right, filters), alg.LeftJoin(left_k, right, filters)
    if kind is alg.Minus:
        left, left_k = _spine(node.left, constants, types)  # type: ignore[union-attr]
        return alg.Minus(left, node.right), alg.Minus(left_k, node.right)  # type: ignore[union-attr]
    if kind is alg.Filter:
        inner, inner_k = _spine(node.inner, constants, types)  # type: ignore[union-attr]
        return alg.Filter(inner, node.filters), alg.Filter(inner_k, node.filters)  # type: ignore[union-attr]
    if kind is alg.Extend:
        inner, inner_k = _spine(node.inner, constants, types)  # type: ignore[union-attr]
        var, expr = node.var, node.expr  # type: ignore[union-attr]
        return alg.Extend(inner, var, expr), alg.Extend(inner_k, var, expr)
    return node, node  # UNION, VALUES: their constants stay


def _bgp(node: alg.BGP, constants: list[Term], types: list[int]) -> tuple[alg.Node, alg.Node]:
    out: list[TriplePattern | alg.PathPattern] = []
    keyed: list[TriplePattern | alg.PathPattern] = []
    for t in node.triples:
        if type(t) is alg.PathPattern:
            if zero_length(t.path):  # a constant end is its own zero-length path
                out.append(t)
                keyed.append(t)
                continue
            path = alg.PathPattern(_param(t.s, constants), t.path, _param(t.o, constants))
            out.append(path)
            keyed.append(path)
            continue
        assert type(t) is TriplePattern
        if type(t.p) is Var:  # a variable predicate scans every triple: keep its ends
            out.append(t)
            keyed.append(t)
            continue
        s = _param(t.s, constants)
        if t.p == RDF_TYPE and type(t.o) is not Var:
            o = _param(t.o, constants)
            types.append(int(o.name[2:]))
            out.append(TriplePattern(s, t.p, o))
            keyed.append(TriplePattern(s, t.p, TYPE_PARAM))
            continue
        found = TriplePattern(s, t.p, _param(t.o, constants))
        out.append(found)
        keyed.append(found)
    return alg.BGP(tuple(out)), alg.BGP(tuple(keyed))


def _param(term: Any, constants: list[Term]) -> Any:
    """The parameter of a constant: one per distinct constant (``<vav> brick:hasPoint ?s ,
    ?p`` keeps its two patterns joined on the one parameter)."""
    if type(term) is Var:
        return term
    for i, known in enumerate(constants):
        if known == term and type(known) is type(term):
            return Var(param_name(i))
    constants.append(term)
    return Var(param_name(len(constants) - 1))


def _put(node: alg.Node, values: dict[str, Term]) -> alg.Node:
    kind = type(node)
    if kind is alg.BGP:
        return alg.BGP(tuple(_put_atom(t, values) for t in node.triples))  # type: ignore[union-attr]
    if kind is alg.Join:
        return alg.Join(_put(node.left, values), _put(node.right, values))  # type: ignore[union-attr]
    if kind is alg.LeftJoin:
        return alg.LeftJoin(_put(node.left, values), node.right, node.filters)  # type: ignore[union-attr]
    if kind is alg.Minus:
        return alg.Minus(_put(node.left, values), node.right)  # type: ignore[union-attr]
    if kind is alg.Filter:
        return alg.Filter(_put(node.inner, values), node.filters)  # type: ignore[union-attr]
    if kind is alg.Extend:
        return alg.Extend(_put(node.inner, values), node.var, node.expr)  # type: ignore[union-attr]
    return node


def _put_atom(t: Any, values: dict[str, Term]) -> Any:
    s = values.get(t.s.name, t.s) if type(t.s) is Var else t.s
    o = values.get(t.o.name, t.o) if type(t.o) is Var else t.o
    if type(t) is alg.PathPattern:
        return alg.PathPattern(s, t.path, o)
    return TriplePattern(s, t.p, o)
