"""What an explanation says, step by step: each solution's triples by where they came from,
each inference's rule, premises and axioms; for a non-match, the step that dropped the
subscription and what the event held nearest to it. (That its verdict is the matcher's is
``test_explain_exact.py``.)"""

from __future__ import annotations

import pytest

from semps.errors import NotSupported, SubscriptionSyntaxError
from semps.event import Event
from semps.graph.graph import KnowledgeGraph
from semps.matcher.base import MatchContext
from semps.matcher.content import ContentMatcher
from semps.matcher.explanation import Reason, render_text, to_json
from semps.matcher.semantic.explain import NO_GRAPH, explain
from semps.matcher.values import Subscription
from semps.ontology.compile import (
    DOMAIN,
    EQ_CLASS,
    INVERSE,
    SUB_CLASS,
    SUB_PROPERTY,
    TRANSITIVE,
    compile_axioms,
)
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://ex/"
P = f"PREFIX : <{EX}> "
A, B, C = EX + "A", EX + "B", EX + "C"
ONE, FIVE = Literal("1", XSD + "integer"), Literal("5", XSD + "integer")


def why(text: str, triples: list, axioms: list = (), graph: list | None = None):  # type: ignore[no-untyped-def, assignment]
    rules = compile_axioms(axioms)
    view = None
    if graph is not None:
        kg = KnowledgeGraph(rules)
        kg.load(graph)
        view = kg.view
    sub = Subscription("s", "semantic", P + text)
    return explain(sub, Event("e", tuple(triples)), rules, graph=view, axioms=axioms)


def test_a_match_lists_its_triples_and_derives_each_inferred_one_down_to_the_event() -> None:
    axioms = [(A, SUB_CLASS, B), (B, EQ_CLASS, C), (EX + "p", DOMAIN, A)]
    found = why("SELECT ?x { ?x a :C }", [(EX + "a", EX + "p", ONE)], axioms)
    assert (found.matched, found.count) == (True, 1)
    (solution,) = found.solutions
    assert [(u.triple, u.source) for u in solution.triples] == [
        ((EX + "a", RDF_TYPE, C), "inferred")
    ]
    chain = [(d.triple[2], d.rule, d.premises, d.axioms) for d in found.derivations]
    assert chain == [
        (C, "cax-sco", ((EX + "a", RDF_TYPE, A),), ((A, SUB_CLASS, B), (B, EQ_CLASS, C))),
        (A, "prp-dom", ((EX + "a", EX + "p", ONE),), ((EX + "p", DOMAIN, A),)),
    ]


def test_property_inferences_name_the_sub_property_inverse_and_transitive_axioms() -> None:
    axioms = [
        (EX + "q", SUB_PROPERTY, EX + "p"),
        (EX + "r", INVERSE, EX + "q"),
        (EX + "p", RDF_TYPE, TRANSITIVE),
    ]
    event = [(EX + "b", EX + "r", EX + "a"), (EX + "b", EX + "p", EX + "c")]
    found = why("ASK { :a :p :c }", event, axioms)
    assert found.matched and found.notes == ("ASK: one solution, the first found shown",)
    rules = {d.triple: (d.rule, d.axioms) for d in found.derivations}
    assert rules[(EX + "a", EX + "p", EX + "c")] == (
        "prp-trp",
        ((EX + "p", RDF_TYPE, TRANSITIVE),),
    )
    assert rules[(EX + "a", EX + "p", EX + "b")] == (
        "prp-inv",
        ((EX + "r", INVERSE, EX + "q"), (EX + "q", SUB_PROPERTY, EX + "p")),
    )


def test_a_missing_pattern_is_named_with_same_predicate_and_same_class_candidates() -> None:
    event = [
        (EX + "a", RDF_TYPE, A),
        (EX + "a", EX + "q", ONE),
        (EX + "b", RDF_TYPE, B),
        (EX + "b", EX + "p", ONE),
    ]
    found = why("SELECT * { ?x a :A ; :p 5 }", event)
    counter, pattern = found.reasons
    assert counter == Reason(
        "counter filter",
        "dropped by the counter filter: 1 of its 2 patterns find a node pair in the event "
        "(counter 1 < 2)",
        (("no node pair", f'?x <{EX}p> "5"^^<{XSD}integer>'),),
    )
    assert pattern == Reason(
        "pattern",
        f'pattern 2 `?x <{EX}p> "5"^^<{XSD}integer>`: no triple matches it',
        (
            ("same predicate, other class", f'<{EX}b> <{EX}p> "1"^^<{XSD}integer> ; a <{B}>'),
            ("same class, other property", f'<{EX}a> <{EX}q> "1"^^<{XSD}integer>'),
        ),
    )


def test_a_type_the_joined_node_lacks_is_an_unmet_type_constraint() -> None:
    event = [(EX + "a", EX + "p", EX + "b"), (EX + "b", RDF_TYPE, B), (EX + "c", RDF_TYPE, A)]
    found = why("SELECT * { ?x :p ?y . ?y a :A }", event)
    (reason,) = found.reasons
    assert reason.step == "type"
    assert "bind to ?y are not of class" in reason.message
    assert reason.nearest == (("same predicate, other class", f"<{EX}b> <{RDF_TYPE}> <{B}>"),)


def test_a_pattern_with_nothing_near_it_and_no_graph_read_says_a_graph_may_hold_it() -> None:
    """A reading of a point named by IRI, its class in a building model that was not read:
    the step alone ("no triple matches it") gave the user no hint where the facts went."""
    reading = [(EX + "t1", EX + "lastReading", ONE)]
    text = "SELECT ?t { ?t a :Sensor ; :lastReading ?v }"
    alone = why(text, reading)
    assert alone.reasons[-1].step == "type" and alone.reasons[-1].nearest == ()
    assert alone.notes == (NO_GRAPH,)
    assert render_text(alone).endswith(f"  note: {NO_GRAPH}")
    assert why(text, reading, graph=[(EX + "t1", RDF_TYPE, EX + "Sensor")]).matched
    near = why(text, [*reading, (EX + "t1", RDF_TYPE, EX + "Meter")])  # a class to name
    assert near.reasons[-1].nearest and near.notes == ()
    filtered = why("SELECT ?t { ?t :lastReading ?v FILTER(?v > 5) }", reading)
    assert filtered.reasons[-1].step == "filter" and filtered.notes == ()


def test_a_join_is_diagnosed_along_shared_variables_not_as_a_cross_product() -> None:
    """LUBM's query 2 and 9 write their type patterns first: joined as written, three
    classes of 150 nodes are 3.4M rows, cut short or past the budget, and the diagnosis
    blamed a pattern the rows it kept lacked (or said only "budget")."""
    types = [(f"{EX}{c}{i}", RDF_TYPE, EX + c) for c in "SFC" for i in range(150)]
    links = [
        (EX + "S149", EX + "advisor", EX + "F149"),
        (EX + "F149", EX + "teaches", EX + "C149"),
        (EX + "S149", EX + "takes", EX + "C148"),
    ]
    text = (
        "SELECT * { ?x a :S . ?y a :F . ?z a :C . ?x :advisor ?y . ?y :teaches ?z . ?x :takes ?z }"
    )
    (reason,) = why(text, types + links).reasons
    assert (reason.step, reason.message) == (
        "join",
        f"pattern 6 `?x <{EX}takes> ?z` has 1 match(es) on its own, none agreeing with "
        "patterns 1, 4, 2, 5, 3 on ?x, ?z",
    )
    assert reason.nearest[0] == ("this pattern alone", f"?x = <{EX}S149>, ?z = <{EX}C148>")


def test_a_filter_false_on_every_row_is_named_with_the_values_it_saw() -> None:
    event = [(EX + "a", EX + "v", ONE), (EX + "b", EX + "v", FIVE)]
    found = why("SELECT * { ?x :v ?v FILTER(?v > 10 && ?x != :c) }", event)
    (reason,) = found.reasons
    assert reason.step == "filter"
    assert reason.message.startswith(f'FILTER (?v > "10"^^<{XSD}integer> && ?x != <{EX}c>) is')
    assert [text for _, text in reason.nearest] == [
        f'?v = "1"^^<{XSD}integer>, ?x = <{EX}a>',
        f'?v = "5"^^<{XSD}integer>, ?x = <{EX}b>',
    ]


def test_a_minus_that_removes_every_solution_is_named() -> None:
    event = [(EX + "a", RDF_TYPE, A), (EX + "a", EX + "p", ONE)]
    found = why("SELECT * { ?x a :A MINUS { ?x :p ?y } }", event)
    assert found.reasons == (Reason("minus", "MINUS removed every one of its 1 solution(s)"),)


def test_against_a_graph_an_event_adding_no_solution_is_said_to_add_none() -> None:
    graph = [(EX + "a", RDF_TYPE, A)]
    found = why("SELECT ?x { ?x a :A }", [(EX + "a", RDF_TYPE, A)], graph=graph)
    assert found.reasons == (Reason("graph", "the event adds nothing to the graph's closure"),)
    found = why("SELECT ?x { ?x a :A }", [(EX + "b", EX + "p", ONE)], graph=graph)
    assert found.reasons[0].step == "graph"
    assert found.reasons[0].message == (
        "the graph alone already gives these 1 solution(s); the event adds none (an event "
        "notifies the solutions it adds)"
    )


def test_against_a_graph_the_solution_marks_graph_and_event_triples() -> None:
    graph = [(EX + "ahu", EX + "feeds", EX + "zone")]
    event = [(EX + "t", EX + "pointOf", EX + "ahu")]
    found = why("SELECT * { ?t :pointOf ?e . ?e :feeds ?z }", event, graph=graph)
    assert [(u.source, u.triple) for u in found.solutions[0].triples] == [
        ("event", event[0]),
        ("graph", graph[0]),
    ]


def test_the_json_and_text_forms_say_the_same() -> None:
    found = why("SELECT ?x { ?x a :B }", [(EX + "a", RDF_TYPE, A)], [(A, SUB_CLASS, B)])
    doc = to_json(found)
    assert doc["derivations"] == [
        {
            "triple": f"<{EX}a> <{RDF_TYPE}> <{B}> .",
            "rule": "cax-sco",
            "premises": [f"<{EX}a> <{RDF_TYPE}> <{A}> ."],
            "axioms": [f"<{A}> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{B}> ."],
        }
    ]
    assert render_text(found, {"": EX}).splitlines()[1:3] == [
        "  solution 1: ?x = :a",
        "    [inferred] :a rdf:type :B .",
    ]


def test_a_bad_subscription_raises_its_syntax_error_and_other_matchers_do_not_explain() -> None:
    with pytest.raises(SubscriptionSyntaxError):
        why("SELECT ?x { ?x }", [])
    content = ContentMatcher()
    context = MatchContext(Event("e", ()))
    with pytest.raises(NotSupported, match="the content matcher does not explain its matches"):
        content.explain(Subscription("c", "content", "price < 3"), context)


def test_an_explanation_past_its_budget_says_so_instead_of_running_on() -> None:
    event = [(EX + f"n{i}", EX + "p", Literal(str(i), XSD + "integer")) for i in range(300)]
    # (even in join order: the first two patterns share nothing, 90,000 rows)
    sub = Subscription("s", "semantic", P + "SELECT * { ?x :p ?a . ?y :p ?b . ?z :r ?c }")
    found = explain(sub, Event("e", tuple(event)), budget=10_000)
    budget, counter, pattern = found.reasons
    assert budget == Reason(
        "budget", "evaluating the subscription took more than its budget of 10000 rows"
    )
    assert (counter.step, pattern.step) == ("counter filter", "pattern")
    assert pattern.message == f"pattern 3 `?z <{EX}r> ?c`: no triple matches it"
