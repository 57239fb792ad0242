"""owl:sameAs triples an event carries are closed as owlrl closes them (eq-sym, eq-trans,
eq-rep-s/p/o), together with the ontology's other rules."""

from __future__ import annotations

import owlrl
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import EventLimitExceeded
from semps.limits import Limits
from semps.ontology import compile_axioms
from semps.ontology.closure import close
from semps.terms import OWL, RDFS

EX = "http://example.org/"
SAME_AS = OWL + "sameAs"
NODES = [EX + f"n{i}" for i in range(5)]
PROPS = [EX + f"p{i}" for i in range(3)]
AXIOMS = [(PROPS[0], RDFS + "subPropertyOf", PROPS[1]), (PROPS[2], OWL + "inverseOf", PROPS[1])]


def _owlrl(axioms: list, event: list) -> set:
    graph = rdflib.Graph()
    for s, p, o in [*axioms, *event]:
        graph.add((rdflib.URIRef(s), rdflib.URIRef(p), rdflib.URIRef(o)))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    return {(str(s), str(p), str(o)) for s, p, o in graph if str(s) in NODES}


def _without_reflexive_same_as(triples: set) -> set:
    """owlrl makes every node sameAs itself (eq-ref); semps only the nodes of a sameAs."""
    return {t for t in triples if not (t[1] == SAME_AS and t[0] == t[2])}


events = st.lists(
    st.tuples(st.sampled_from(NODES), st.sampled_from([*PROPS, SAME_AS]), st.sampled_from(NODES)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events)
def test_same_as_closes_like_owlrl(event: list) -> None:
    ours = {t for t in close(compile_axioms(AXIOMS), event) if t[0] in NODES}
    assert _without_reflexive_same_as(ours) == _without_reflexive_same_as(_owlrl(AXIOMS, event))


def test_a_node_the_same_as_another_has_its_triples() -> None:
    """What W3C entailment test sparqldl-13 asks."""
    a, b, x = NODES[:3]
    p, q = PROPS[:2]
    event = [(a, p, b), (x, q, x), (b, SAME_AS, x)]
    closed = set(close(compile_axioms(AXIOMS), event))
    assert {(a, p, x), (b, q, b), (b, q, x), (x, SAME_AS, b), (b, SAME_AS, b)} <= closed


def test_a_large_class_of_equal_nodes_stops_at_the_closure_limit() -> None:
    chain = [(EX + f"m{i}", SAME_AS, EX + f"m{i + 1}") for i in range(300)]
    limits = Limits(max_closure_triples=10_000, max_closure_ratio=1)
    with pytest.raises(EventLimitExceeded):
        close(compile_axioms(AXIOMS), chain, limits=limits)
