"""Randomised oracle: semps' answers equal rdflib SPARQL over the owlrl OWL 2 RL closure
of ontology + event, for random ontologies, events and subscriptions."""

from __future__ import annotations

import owlrl
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from semps_test_support import events_over

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.terms import OWL, RDF_TYPE, RDFS, XSD, Literal

EX = "http://example.org/"
CLASSES = [EX + f"C{i}" for i in range(4)]
PROPS = [EX + f"p{i}" for i in range(4)]
NODES = [EX + f"n{i}" for i in range(4)]
NUMBERS = [Literal(str(i), XSD + "integer") for i in range(3)]


@st.composite
def ontologies(draw: st.DrawFn) -> list:
    c, p = st.sampled_from(CLASSES), st.sampled_from(PROPS)
    axioms = [(draw(c), RDFS + "subClassOf", draw(c)) for _ in range(draw(st.integers(0, 3)))]
    axioms += [(draw(p), RDFS + "subPropertyOf", draw(p)) for _ in range(draw(st.integers(0, 3)))]
    for pred, pool in (("equivalentClass", c), ("equivalentProperty", p), ("inverseOf", p)):
        if draw(st.booleans()):
            axioms.append((draw(pool), OWL + pred, draw(pool)))
    for char in ("SymmetricProperty", "TransitiveProperty"):
        if draw(st.booleans()):
            axioms.append((draw(p), RDF_TYPE, OWL + char))
    if draw(st.booleans()):
        axioms.append((draw(p), RDFS + draw(st.sampled_from(["domain", "range"])), draw(c)))
    return axioms


events = events_over(NODES, CLASSES, PROPS, EX + "d", NUMBERS)


def _term(draw: st.DrawFn, pool: list, var_names: str = "xyz") -> str:
    if draw(st.integers(0, 3)) == 0:
        return f"<{draw(st.sampled_from(pool))}>"
    return "?" + draw(st.sampled_from(var_names))


@st.composite
def subscriptions(draw: st.DrawFn) -> str:
    patterns = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["prop", "prop", "type", "data"]))
        s = _term(draw, NODES)
        if kind == "type":
            patterns.append(f"{s} a <{draw(st.sampled_from(CLASSES))}>")
        elif kind == "data":
            patterns.append(f"{s} <{EX}d> ?v")
        else:
            patterns.append(f"{s} <{draw(st.sampled_from(PROPS))}> {_term(draw, NODES)}")
    body = " . ".join(patterns)
    if "?v" in body and draw(st.booleans()):
        body += f" FILTER(?v {draw(st.sampled_from(['<', '>=', '=']))} 1)"
    if not any(f"?{v}" in body for v in "xyzv"):
        return f"ASK {{ {body} }}"
    distinct = draw(st.sampled_from(["", "DISTINCT "]))
    return f"SELECT {distinct}* WHERE {{ {body} }}"


def _node(t: object) -> rdflib.term.Node:
    if isinstance(t, Literal):
        return rdflib.Literal(t.lexical, datatype=rdflib.URIRef(t.datatype))
    return rdflib.URIRef(str(t))


def oracle(axioms: list, event: list, queries: list[str]) -> dict[str, int]:
    graph = rdflib.Graph()
    for t in [*axioms, *event]:
        graph.add(tuple(_node(x) for x in t))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    counts = {}
    for i, text in enumerate(queries):
        result = graph.query(text)
        n = (1 if result.askAnswer else 0) if result.type == "ASK" else len(list(result))
        if n:
            counts[f"s{i}"] = n
    return counts


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ontologies(), events, st.lists(subscriptions(), min_size=1, max_size=6))
def test_matches_equal_sparql_over_the_owl_rl_closure(axioms, event, queries) -> None:
    matcher = SemanticMatcher()
    for i, text in enumerate(queries):
        matcher.add(Subscription(f"s{i}", "semantic", text))
    e = Event("e", tuple(dict.fromkeys(event)))
    context = MatchContext(e, compile_axioms(axioms))
    ours = {m.subscription: m.count for m in matcher.match(context)}
    expected = oracle(axioms, event, queries)
    assert ours == expected
    # Bulk jobs' counts-only path answers the same, without building solutions.
    assert matcher.count_batch([context]) == [expected]
