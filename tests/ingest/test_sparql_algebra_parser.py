"""The group graph pattern grammar: what parses into the SPARQL algebra, what stays a basic
graph pattern, and what is refused (with the construct named, or where)."""

from __future__ import annotations

import pytest
from semps_test_support import raised

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError, UnsupportedQueryError
from semps.ingest.sparql import TriplePattern, Var, parse_query
from semps.ingest.sparql.algebra import (
    BGP,
    Exists,
    Extend,
    Filter,
    LeftJoin,
    Minus,
    PathPattern,
    Union,
    Values,
    WithExists,
)
from semps.limits import Limits
from semps.terms import XSD, Literal

P = "PREFIX : <http://e/> "
E = "http://e/"


def test_a_basic_graph_pattern_keeps_the_fast_path_even_with_a_dot_after_filter() -> None:
    q = parse_query(P + "SELECT ?x { ?x :p ?y . FILTER(?y > 1) . ?y :q ?z . }")
    assert q.algebra is None
    assert [t.p for t in q.patterns] == [E + "p", E + "q"]
    assert len(q.filters) == 1


def test_optional_carries_the_filters_of_its_group() -> None:
    q = parse_query(P + "SELECT * { ?x :p ?y OPTIONAL { ?y :l ?l FILTER(?l != 1) } }")
    assert isinstance(q.algebra, LeftJoin)
    assert q.algebra.left == BGP((TriplePattern(Var("x"), E + "p", Var("y")),))
    assert q.algebra.right == BGP((TriplePattern(Var("y"), E + "l", Var("l")),))
    assert len(q.algebra.filters) == 1
    assert q.projected() == ("l", "x", "y")


def test_union_minus_and_group_filters_nest_as_the_specification_translates_them() -> None:
    q = parse_query(P + "SELECT ?x { { ?x :p 1 } UNION { ?x :q 2 } MINUS { ?x :r 3 } FILTER(1) }")
    assert isinstance(q.algebra, Filter)
    assert isinstance(q.algebra.inner, Minus)
    assert isinstance(q.algebra.inner.left, Union)
    assert q.constructs == ("UNION", "MINUS")


def test_paths_parse_into_path_trees() -> None:
    q = parse_query(P + "SELECT * { ?a :f+/(:h|^:i)* ?b . ?b !(:x|^:y) ?c . ?c :p? ?d }")
    assert isinstance(q.algebra, BGP)
    first, second, third = q.algebra.triples
    assert first == PathPattern(
        Var("a"),
        (
            "seq",
            (
                ("plus", ("link", E + "f")),
                ("star", ("alt", (("link", E + "h"), ("inv", ("link", E + "i"))))),
            ),
        ),
        Var("b"),
    )
    assert second.path == ("nps", (E + "x",), (E + "y",))  # type: ignore[union-attr]
    assert third.path == ("opt", ("link", E + "p"))  # type: ignore[union-attr]


def test_sequences_of_links_become_triple_patterns_through_hidden_variables() -> None:
    q = parse_query(P + "SELECT * { ?a :p/^:q ?b }")
    assert q.algebra is None  # still a basic graph pattern
    (one, two) = q.patterns
    assert (one.s, one.p, two.p, two.s) == (Var("a"), E + "p", E + "q", Var("b"))
    assert one.o == two.o and isinstance(one.o, Var) and one.o.name.startswith("_")
    assert q.projected() == ("a", "b")


def test_bind_values_exists_and_select_expressions() -> None:
    q = parse_query(
        P + "SELECT ?x (STR(?x) AS ?s) { ?x :p ?y BIND(?y AS ?z) FILTER NOT EXISTS { ?x :q ?z } "
        "VALUES ?y { 1 UNDEF } }"
    )
    extend = q.algebra
    assert isinstance(extend, Extend) and extend.var == "s"
    assert isinstance(extend.inner, Filter)
    (exists,) = extend.inner.filters
    assert isinstance(exists, Exists) and exists.negated
    one = Literal("1", XSD + "integer")
    assert extend.inner.inner.right == Values(("y",), ((one,), (None,)))  # type: ignore[union-attr]
    assert q.projected() == ("x", "s")


def test_exists_inside_an_expression_stands_as_a_variable_of_its_own() -> None:
    q = parse_query(P + "SELECT * { ?x :p ?y FILTER(?y = 1 || NOT EXISTS { ?x :q ?y }) }")
    (f,) = q.algebra.filters  # type: ignore[union-attr]
    assert isinstance(f, WithExists)
    ((name, exists),) = f.exists
    assert exists.negated
    assert exists.pattern == BGP((TriplePattern(Var("x"), E + "q", Var("y")),))
    assert f.expr.ast[1][1] == ("var", name) and not name.isidentifier()
    assert f.variables() == {"x", "y"}


def test_a_group_of_only_filters_is_a_query() -> None:
    q = parse_query("ASK { FILTER(2 IN (1, 2)) }")
    assert q.algebra == Filter(BGP(), q.algebra.filters)  # type: ignore[union-attr]


def test_variable_predicates_are_patterns() -> None:
    q = parse_query(P + "SELECT ?p { :a ?p ?o }")
    assert q.algebra == BGP((TriplePattern(E + "a", Var("p"), Var("o")),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SELECT * { ?x :p ?y BIND(1 AS ?y) }",
            "1:42: BIND assigns ?y, already in scope in the group",
        ),
        ("SELECT (1 AS ?x) { ?x :p ?y }", "1:22: SELECT (... AS ?x): ?x is already in scope"),
        ("SELECT * { VALUES (?x ?y) { (1) } }", "1:50: a VALUES row has 1 values for 2 variables"),
        ("SELECT * { ?x :p/ ?y }", "1:40: expected a property path but found '?y'"),
    ],
)
def test_misuses_are_syntax_errors_that_say_where(text: str, message: str) -> None:
    assert str(raised(SubscriptionSyntaxError, parse_query, P + text)) == message


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        (
            "SELECT * { ?x :p ?y } ORDER BY (EXISTS { ?x :q 1 })",
            "EXISTS outside FILTER, BIND and SELECT",
        ),
        ("SELECT * FROM <http://g/> { ?x :p ?y }", "FROM"),
    ],
)
def test_constructs_still_outside_the_language_are_named(text: str, construct: str) -> None:
    """Besides those of the basic fragment (GRAPH, SERVICE, sub-queries, LIMIT, aggregates:
    tests/ingest/test_sparql_parser.py)."""
    assert raised(UnsupportedQueryError, parse_query, P + text).construct == construct


def test_patterns_in_nested_groups_count_against_max_patterns() -> None:
    text = P + "SELECT * { ?a :p ?b OPTIONAL { ?b :p ?c { ?c :p ?d } UNION { ?c :q ?d } } }"
    assert parse_query(text, limits=Limits(max_patterns=4)).algebra is not None
    with pytest.raises(SubscriptionLimitExceeded, match="max_patterns"):
        parse_query(text, limits=Limits(max_patterns=3))


def test_nested_groups_count_against_max_query_depth() -> None:
    text = P + "SELECT * { " + "{ " * 20 + "?x :p ?y" + " }" * 20 + " }"
    assert len(parse_query(text, limits=Limits(max_query_depth=20)).patterns) == 1
    with pytest.raises(SubscriptionLimitExceeded, match="max_query_depth"):
        parse_query(text, limits=Limits(max_query_depth=19))


def test_ten_thousand_nested_groups_are_refused_not_a_recursion_error() -> None:
    text = "SELECT * " + "{ " * 10_000 + "?x <http://p> ?y" + " }" * 10_000
    with pytest.raises(SubscriptionLimitExceeded, match="max_query_depth|group elements"):
        parse_query(text)


@pytest.mark.parametrize(
    "element",
    ["OPTIONAL { }", "MINUS { }", "{ } UNION", "BIND(1 AS ?b{i})", "VALUES ?v{i} { }", "{ }"],
)
def test_group_elements_count_against_max_patterns_so_the_tree_stays_shallow(
    element: str,
) -> None:
    """Empty groups cost no triple pattern, yet each deepens the algebra: thousands in 64 KiB
    would recurse past Python's stack when evaluated."""
    body = " ".join(element.replace("{i}", str(i)) for i in range(4_000))[:60_000]
    body = body.removesuffix(" UNION") if body.endswith("UNION") else body
    with pytest.raises(SubscriptionLimitExceeded, match="group elements"):
        parse_query(f"SELECT * {{ ?x <http://p> ?y {body} }}")
    fine = " ".join(element.replace("{i}", str(i)) for i in range(64))
    fine = fine.removesuffix(" UNION") if fine.endswith("UNION") else fine
    parse_query(f"SELECT * {{ ?x <http://p> ?y {fine} }}")


def test_select_expressions_count_as_group_elements() -> None:
    columns = " ".join(f"(1 AS ?c{i})" for i in range(65))
    with pytest.raises(SubscriptionLimitExceeded, match="group elements"):
        parse_query(f"SELECT {columns} {{ ?x <http://p> ?y }}")
