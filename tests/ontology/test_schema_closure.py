"""An event's own schema triples (subClassOf, subPropertyOf, equivalences, declarations) are
closed by OWL 2 RL's schema rules, as owlrl closes them; the W3C entailment tests read their
data as ontology and event alike, and so do these."""

from __future__ import annotations

import owlrl
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.ontology import compile_axioms
from semps.ontology.closure import close
from semps.terms import OWL, RDF, RDF_TYPE, RDFS

EX = "http://example.org/"
SUB_CLASS, SUB_PROPERTY = RDFS + "subClassOf", RDFS + "subPropertyOf"
EQ_CLASS, EQ_PROPERTY = OWL + "equivalentClass", OWL + "equivalentProperty"
SCHEMA = (SUB_CLASS, SUB_PROPERTY, EQ_CLASS, EQ_PROPERTY)
CLASSES = [EX + f"C{i}" for i in range(5)]
PROPS = [EX + f"p{i}" for i in range(4)]
#: An ontology that says nothing about the event's terms (but is an ontology).
UNRELATED = [(EX + "Other", SUB_CLASS, EX + "Thing2")]


def _owlrl(triples: list) -> set:
    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((rdflib.URIRef(s), rdflib.URIRef(p), rdflib.URIRef(o)))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)
    return {
        (str(s), str(p), str(o))
        for s, p, o in graph
        if str(p) in SCHEMA and str(s).startswith(EX) and not isinstance(o, rdflib.Literal)
    }


def _schema(closed: list) -> set:
    return {t for t in closed if t[1] in SCHEMA and t[0].startswith(EX)}


def _check(ours: set, theirs: set) -> None:
    assert theirs <= ours, sorted(theirs - ours)
    # Only reflexive triples are extra: RDFS (rdfs6, rdfs10) makes the ends of subClassOf /
    # subPropertyOf triples their own subclass / subproperty (OWL 2 RL: declared ones only,
    # scm-cls, scm-op), and owlrl leaves out the reflexive conclusions of scm-sco and
    # scm-eqc2 on a cycle (C sco D sco C entails C sco C and C eqc C).
    extra = ours - theirs
    assert all(s == o for s, _, o in extra), sorted(extra)


@st.composite
def schemas(draw: st.DrawFn) -> list:
    triples = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["sco", "eqc", "spo", "eqp", "class", "property"]))
        if kind in ("sco", "eqc"):
            a, b = draw(st.sampled_from(CLASSES)), draw(st.sampled_from(CLASSES))
            triples.append((a, SUB_CLASS if kind == "sco" else EQ_CLASS, b))
        elif kind in ("spo", "eqp"):
            a, b = draw(st.sampled_from(PROPS)), draw(st.sampled_from(PROPS))
            triples.append((a, SUB_PROPERTY if kind == "spo" else EQ_PROPERTY, b))
        elif kind == "class":
            triples.append((draw(st.sampled_from(CLASSES)), RDF_TYPE, OWL + "Class"))
        else:
            triples.append((draw(st.sampled_from(PROPS)), RDF_TYPE, OWL + "ObjectProperty"))
    return triples


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_data_as_ontology_and_event_closes_like_owlrl(triples: list) -> None:
    ours = _schema(close(compile_axioms(triples), triples))
    _check(ours, _owlrl(triples))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_an_event_s_schema_triples_close_under_any_ontology(triples: list) -> None:
    ours = _schema(close(compile_axioms(UNRELATED), triples))
    _check(ours, _owlrl(triples))


def test_subclass_answers_are_reflexive_and_transitive() -> None:
    """What the W3C entailment tests rdfs05, rdfs10, rdfs11 and sparqldl-02 ask."""
    a, b, c = CLASSES[:3]
    p, q = PROPS[:2]
    event = [(a, SUB_CLASS, b), (b, SUB_CLASS, c), (p, SUB_PROPERTY, q)]
    closed = set(close(compile_axioms(event), event))
    assert {(a, SUB_CLASS, c), (a, SUB_CLASS, a), (c, SUB_CLASS, c)} <= closed
    assert {(q, SUB_PROPERTY, q), (p, SUB_PROPERTY, p)} <= closed


def test_a_declared_class_is_below_owl_thing_and_equivalent_to_itself() -> None:
    event = [(CLASSES[0], RDF_TYPE, OWL + "Class")]
    closed = set(close(compile_axioms(event), event))
    assert (CLASSES[0], SUB_CLASS, OWL + "Thing") in closed
    assert (CLASSES[0], EQ_CLASS, CLASSES[0]) in closed


def test_the_event_joins_the_ontology_s_hierarchy_above_it() -> None:
    """scm-sco across the two: the event says A below B, the ontology B below C."""
    a, b, c = CLASSES[:3]
    closed = close(compile_axioms([(b, SUB_CLASS, c)]), [(a, SUB_CLASS, b)])
    assert (a, SUB_CLASS, c) in closed


def test_no_ontology_means_no_schema_closure() -> None:
    """The W3C evaluation tests run under simple entailment: an empty ontology closes
    nothing, schema triples included."""
    from semps.ontology import Expansion

    event = [(CLASSES[0], SUB_CLASS, CLASSES[1]), (CLASSES[1], RDF_TYPE, RDF + "Property")]
    assert close(Expansion(), event) == event
