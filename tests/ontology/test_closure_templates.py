"""Events whose triples each close on their own (hierarchies, inverses, symmetric
properties, domains, ranges, hasValue classes) are closed from per-predicate templates; the
result is still OWL 2 RL's closure (oracle: owlrl), the limit still holds, and one triple
that needs the rest of the event (sameAs, a transitive property, a restriction) closes the
whole event the long way."""

from __future__ import annotations

import pytest
from graph_support import owlrl_about
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import EventLimitExceeded
from semps.limits import Limits
from semps.ontology import compile_axioms
from semps.ontology.closure import close
from semps.terms import OWL, RDF_TYPE, RDFS, Literal

EX = "http://example.org/"
CLASSES = [EX + f"C{i}" for i in range(6)]
PROPS = [EX + f"p{i}" for i in range(5)]
#: Literal-valued properties, apart: owlrl reads a literal's inverse as a triple about the
#: literal (generalised RDF) and infers from it what the closure, like SPARQL, does not.
DATA = [EX + f"d{i}" for i in range(3)]
NODES = [EX + f"n{i}" for i in range(4)] + ["_:b0"]


def owlrl_closure(axioms: list, event: list) -> set:
    """owlrl's closure, restricted to statements about the event's nodes (as subjects)."""
    return owlrl_about(axioms, event, _nodes(event))


def _nodes(event: list) -> set:
    return {s for s, _, _ in event} | {o for _, p, o in event if p != RDF_TYPE}


def ours(axioms: list, event: list) -> set:
    nodes = _nodes(event)
    closed = close(compile_axioms(axioms), event)
    return {
        t
        for t in closed
        if t[0] in nodes and t[1] != OWL + "sameAs" and not (_blank(t[2]) and t[2] not in nodes)
    }


def _blank(term: object) -> bool:
    return isinstance(term, str) and term.startswith("_:")


@st.composite
def local_ontologies(draw: st.DrawFn) -> list:
    """Only axioms whose rules look at one triple at a time."""
    axioms: list = [(c, RDF_TYPE, OWL + "Class") for c in CLASSES]
    axioms += [(p, RDF_TYPE, OWL + "ObjectProperty") for p in PROPS]
    pick_c, pick_p = st.sampled_from(CLASSES), st.sampled_from(PROPS)
    for _ in range(draw(st.integers(0, 6))):
        axioms.append((draw(pick_c), RDFS + "subClassOf", draw(pick_c)))
    for _ in range(draw(st.integers(0, 5))):
        axioms.append((draw(pick_p), RDFS + "subPropertyOf", draw(pick_p)))
    for pred in ("equivalentClass", "equivalentProperty", "inverseOf", "inverseOf"):
        pool = pick_c if pred == "equivalentClass" else pick_p
        if draw(st.booleans()):
            axioms.append((draw(pool), OWL + pred, draw(pool)))
    if draw(st.booleans()):
        axioms.append((draw(pick_p), RDF_TYPE, OWL + "SymmetricProperty"))
    pick_d = st.sampled_from(DATA)
    for _ in range(draw(st.integers(0, 3))):
        axioms.append((draw(pick_d), RDFS + "subPropertyOf", draw(pick_d)))
    for _ in range(draw(st.integers(0, 2))):
        axioms.append(
            (draw(pick_d), RDFS + draw(st.sampled_from(["domain", "range"])), draw(pick_c))
        )
    for pred in ("domain", "range", "domain", "range"):
        if draw(st.booleans()):
            axioms.append((draw(pick_p), RDFS + pred, draw(pick_c)))
    if draw(st.booleans()):  # C = (p value n0): a C has p n0, so n0's types follow
        restriction = "_:hv"
        axioms += [
            (restriction, RDF_TYPE, OWL + "Restriction"),
            (restriction, OWL + "onProperty", draw(pick_p)),
            (restriction, OWL + "hasValue", EX + "v0"),
            (restriction, OWL + "equivalentClass", draw(pick_c)),
        ]
    return axioms


def _local_triple(kind: str) -> st.SearchStrategy[tuple]:
    nodes = st.sampled_from(NODES)
    if kind == "type":
        return st.tuples(nodes, st.just(RDF_TYPE), st.sampled_from(CLASSES))
    if kind == "edge":
        return st.tuples(nodes, st.sampled_from(PROPS), nodes)
    return st.tuples(nodes, st.sampled_from(DATA), st.just(Literal("v")))


local_events = st.lists(
    st.sampled_from(["type", "edge", "value"]).flatmap(_local_triple), min_size=1, max_size=10
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(local_ontologies(), local_events)
def test_events_closed_from_templates_equal_owlrl(axioms: list, event: list) -> None:
    """Random hierarchies and events: the templates' closure is owlrl's."""
    assert ours(axioms, event) == owlrl_closure(axioms, event)


CHAIN = [(EX + f"C{i}", RDFS + "subClassOf", EX + f"C{i + 1}") for i in range(40)]


def test_the_closure_limit_holds_for_inferred_types() -> None:
    """Three nodes of a class 40 levels deep close to 3 x 41 type triples."""
    event = [(EX + f"n{i}", RDF_TYPE, EX + "C0") for i in range(3)]
    rules = compile_axioms(CHAIN)
    assert len(close(rules, event, limits=Limits(max_closure_triples=123))) == 123
    with pytest.raises(EventLimitExceeded, match="limit of 122 triples"):
        close(rules, event, limits=Limits(max_closure_triples=122, max_closure_ratio=1))


def test_the_originals_come_first_in_order_then_what_they_imply() -> None:
    rules = compile_axioms([(EX + "p0", RDFS + "subPropertyOf", EX + "p1"), *CHAIN[:2]])
    event = [(EX + "n1", RDF_TYPE, EX + "C0"), (EX + "n0", EX + "p0", EX + "n1")]
    closed = close(rules, [*event, event[0]])
    assert closed[:2] == event
    assert set(closed[2:]) == {
        (EX + "n1", RDF_TYPE, EX + "C1"),
        (EX + "n1", RDF_TYPE, EX + "C2"),
        (EX + "n0", EX + "p1", EX + "n1"),
    }
    assert len(closed) == 5


def test_one_same_as_closes_the_whole_event_with_the_event() -> None:
    rules = compile_axioms(CHAIN[:1])
    event = [(EX + "a", RDF_TYPE, EX + "C0"), (EX + "a", OWL + "sameAs", EX + "b")]
    closed = set(close(rules, event))
    assert (EX + "b", RDF_TYPE, EX + "C1") in closed
    assert ours(CHAIN[:1], event) == owlrl_closure(CHAIN[:1], event)


def test_a_subject_that_is_also_the_object_stamps_both_places() -> None:
    rules = compile_axioms(
        [(EX + "p0", OWL + "inverseOf", EX + "q0"), (EX + "p0", RDFS + "range", EX + "C0")]
    )
    closed = close(rules, [(EX + "n", EX + "p0", EX + "n")])
    assert set(closed) == {
        (EX + "n", EX + "p0", EX + "n"),
        (EX + "n", EX + "q0", EX + "n"),
        (EX + "n", RDF_TYPE, EX + "C0"),
    }
