"""An explanation never disagrees with the matcher: on random ontologies, events and
subscriptions (basic graph patterns with FILTERs; OPTIONAL, UNION, MINUS, EXISTS, BIND,
VALUES, paths; with and without a knowledge graph), ``explain`` says "matches" exactly when
:meth:`SemanticMatcher.match` matches, with the same solution count. Every inferred triple
a solution shows has a derivation whose premises the closure holds, and every triple a
solution shows is in the closure (the matcher's, :func:`semps.ontology.closure.close`)."""

from __future__ import annotations

import kg_strategies
from graph_support import facts, graph_context
from hypothesis import given
from hypothesis import strategies as st
from test_algebra_oracle import events as algebra_events
from test_algebra_oracle import ontologies as algebra_ontologies
from test_algebra_oracle import queries
from test_graph_matching import SETTINGS, event_cases
from test_semantic_oracle import events as bgp_events
from test_semantic_oracle import ontologies as bgp_ontologies
from test_semantic_oracle import subscriptions as bgp_subscriptions

from semps.event import Event
from semps.graph.graph import KnowledgeGraph
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.ontology.closure import close
from semps.terms import RDF_TYPE


def agree(subs: list[tuple[str, str]], context: MatchContext, axioms: list) -> None:
    matcher = SemanticMatcher()
    for sub_id, text in subs:
        matcher.add(Subscription(sub_id, "semantic", text))
    counts = {m.subscription: m.count for m in matcher.match(context)}
    if context.graph is None:
        closure = set(close(context.expansion, context.event.triples))
    else:
        closure = set(context.graph.term_triples()) | set(context.event.triples)
    for sub_id, text in subs:
        x = matcher.explain(Subscription(sub_id, "semantic", text), context, axioms)
        assert (x.matched, x.count) == (sub_id in counts, counts.get(sub_id, 0)), text
        assert x.matched or x.reasons, text
        shown = {u.triple for s in x.solutions for u in s.triples}
        derived = {d.triple: d for d in x.derivations}
        for s in x.solutions:
            for u in s.triples:
                if u.source == "inferred":
                    assert u.triple in derived, (text, u.triple)
        for d in x.derivations:
            assert d.rule != "not reconstructed", (text, d)
        if context.graph is None:
            assert shown <= closure
            for d in x.derivations:
                assert set(d.premises) <= closure, (text, d)


def test_explain_joins_in_the_matchers_order_not_the_written_one() -> None:
    """LUBM's query 9 shape: three type patterns first, then the links between them. Joined
    as written they are a cross product (150^3 rows, past the step budget) and explain said
    "does not match" where the matcher found the solution."""
    ex = "http://ex/"
    types = [(f"{ex}{c}{i}", RDF_TYPE, ex + c) for c in "SFC" for i in range(150)]
    links = [(ex + "S0", ex + "advisor", ex + "F0"), (ex + "F0", ex + "teaches", ex + "C0")]
    links.append((ex + "S0", ex + "takes", ex + "C0"))
    text = (
        f"PREFIX : <{ex}> SELECT * {{ ?x a :S . ?y a :F . ?z a :C . "
        "?x :advisor ?y . ?y :teaches ?z . ?x :takes ?z }"
    )
    context = MatchContext(Event("e", tuple(types + links)), compile_axioms([]))
    agree([("q9", text)], context, [])


@SETTINGS
@given(bgp_ontologies(), bgp_events, st.lists(bgp_subscriptions(), min_size=1, max_size=6))
def test_explain_agrees_with_match_on_basic_graph_patterns(axioms, event, texts) -> None:
    context = MatchContext(Event("e", tuple(event)), compile_axioms(axioms))
    agree([(f"s{i}", t) for i, t in enumerate(texts)], context, axioms)


@SETTINGS
@given(algebra_ontologies(), algebra_events, st.lists(queries(), min_size=1, max_size=4))
def test_explain_agrees_with_match_beyond_basic_graph_patterns(axioms, event, drawn) -> None:
    context = MatchContext(Event("e", tuple(event)), compile_axioms(axioms))
    agree([(f"q{i}", text) for i, (text, _) in enumerate(drawn)], context, axioms)


@SETTINGS
@given(*event_cases(facts))
def test_explain_agrees_with_match_against_a_knowledge_graph(axioms, graph, event, subs) -> None:
    agree(subs, graph_context(axioms, graph, event), axioms)


@SETTINGS
@given(kg_strategies.event_cases())
def test_explain_agrees_with_match_on_the_knowledge_graph_oracle_s_cases(case) -> None:
    """Richer ontologies (restrictions, intersections, unions, symmetric and transitive
    properties) and subscriptions (paths, EXISTS, DISTINCT projections), each event against
    the graph and alone."""
    expansion = compile_axioms(case.ontology)
    kg = KnowledgeGraph(expansion)
    kg.load(case.graph)
    subs = [(sub_id, q.text) for sub_id, q in case.queries.items()]
    for i, triples in enumerate(case.events):
        event = Event(f"e{i}", tuple(dict.fromkeys(triples)))
        agree(subs, MatchContext(event, expansion, graph=kg.view), list(case.ontology))
        agree(subs, MatchContext(event, expansion), list(case.ontology))
