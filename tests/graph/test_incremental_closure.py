"""The graph's materialised closure stays equal to OWL 2 RL's (owlrl) while triples are
added and removed: semi-naive additions, DRed deletions and the vectorised bulk load all
give the closure a recompute would."""

from __future__ import annotations

from graph_support import DATA, EX, facts, ontologies, owlrl_closure, seen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import GraphError
from semps.graph.graph import KnowledgeGraph
from semps.ontology import compile_axioms
from semps.terms import RDF_TYPE, Literal, n3

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ontologies(), st.lists(facts, min_size=1, max_size=10))
def test_bulk_load_closure_is_owl_rl(axioms: list, graph: list) -> None:
    g = KnowledgeGraph(compile_axioms(axioms))
    g.load(graph)
    assert seen(g.view.term_triples()) == owlrl_closure(axioms, graph)


@SETTINGS
@given(ontologies(), st.lists(facts, min_size=1, max_size=10))
def test_inserting_one_by_one_gives_the_bulk_closure(axioms: list, graph: list) -> None:
    rules = compile_axioms(axioms)
    one_by_one, bulk = KnowledgeGraph(rules), KnowledgeGraph(rules)
    for triple in graph:
        one_by_one.insert([triple])
    bulk.load(graph)
    assert set(one_by_one.view.term_triples()) == set(bulk.view.term_triples())
    assert seen(one_by_one.view.term_triples()) == owlrl_closure(axioms, graph)


@SETTINGS
@given(
    ontologies(),
    st.lists(facts, min_size=1, max_size=10, unique=True),
    st.lists(st.lists(st.integers(0, 9), max_size=4), min_size=1, max_size=4),
    st.lists(facts, max_size=3),
)
def test_deletions_and_insertions_keep_the_closure_exact(
    axioms: list, graph: list, rounds: list, extra: list
) -> None:
    """DRed: after each round of deletions (and an insertion), the closure is OWL 2 RL's
    closure of what is asserted then, and the asserted triples are exactly those left."""
    g = KnowledgeGraph(compile_axioms(axioms))
    g.load(graph)
    asserted = list(graph)
    for k, positions in enumerate(rounds):
        doomed = [asserted[i] for i in positions if i < len(asserted)]
        g.delete(doomed)
        asserted = [t for t in asserted if t not in doomed]
        if k < len(extra):
            g.insert([extra[k]])
            asserted = list(dict.fromkeys([*asserted, extra[k]]))
        assert seen(g.view.term_triples()) == owlrl_closure(axioms, asserted)
        assert set(g.view.term_triples(asserted_only=True)) == set(asserted)


def document(triples: list) -> bytes:
    """The triples as an N-Triples document (read by the bulk reader, no tuple a triple)."""
    return "".join(f"{n3(s)} {n3(p)} {n3(o)} .\n" for s, p, o in triples).encode()


@SETTINGS
@given(
    ontologies(),
    st.lists(facts, min_size=1, max_size=10, unique=True),
    st.lists(st.integers(0, 9), max_size=4),
)
def test_a_document_bulk_load_closes_as_owl_rl_and_deletes_exactly(
    axioms: list, graph: list, doomed_at: list
) -> None:
    """A document read as a batch (terms once, triples as index columns) closes as OWL 2
    RL does, and DRed then removes from what it loaded exactly."""
    g = KnowledgeGraph(compile_axioms(axioms))
    g.load(document(graph + graph[:1]), media_type="application/n-triples")
    assert seen(g.view.term_triples()) == owlrl_closure(axioms, graph)
    assert set(g.view.term_triples(asserted_only=True)) == set(graph)
    doomed = [graph[i] for i in doomed_at if i < len(graph)]
    g.delete(doomed)
    left = [t for t in graph if t not in doomed]
    assert seen(g.view.term_triples()) == owlrl_closure(axioms, left)


def test_a_document_holding_an_axiom_is_refused_naming_it() -> None:
    g = KnowledgeGraph(compile_axioms([]))
    doc = document([(EX + "n0", RDF_TYPE, EX + "C0"), (EX + "C0", RDFS_SUB, EX + "C1")])
    try:
        g.load(doc, media_type="application/n-triples")
    except GraphError as exc:
        assert str(exc).startswith(f"<{EX}C0> <{RDFS_SUB}> <{EX}C1>: <{RDFS_SUB}> states an")
        assert "axioms belong in the ontology" in str(exc)
    else:
        raise AssertionError("the axiom was loaded")
    assert len(g.view) == 0


RDFS_SUB = "http://www.w3.org/2000/01/rdf-schema#subClassOf"


def test_deleting_an_asserted_triple_that_is_also_inferred_keeps_it_inferred() -> None:
    axioms = [(EX + "C0", "http://www.w3.org/2000/01/rdf-schema#subClassOf", EX + "C1")]
    g = KnowledgeGraph(compile_axioms(axioms))
    g.load([(EX + "n0", RDF_TYPE, EX + "C0"), (EX + "n0", RDF_TYPE, EX + "C1")])
    change = g.delete([(EX + "n0", RDF_TYPE, EX + "C1")])
    assert g.view.contains((EX + "n0", RDF_TYPE, EX + "C1"))
    assert change.summary()["deleted"] == 1
    assert change.summary()["inferred_removed"] == 0
    assert set(g.view.term_triples(asserted_only=True)) == {(EX + "n0", RDF_TYPE, EX + "C0")}


def test_a_literal_has_value_restriction_types_its_subjects() -> None:
    axioms = [
        ("_:r", "http://www.w3.org/2002/07/owl#onProperty", DATA),
        ("_:r", "http://www.w3.org/2002/07/owl#hasValue", Literal("v")),
        ("_:r", "http://www.w3.org/2002/07/owl#equivalentClass", EX + "C0"),
    ]
    g = KnowledgeGraph(compile_axioms(axioms))
    g.insert([(EX + "n0", DATA, Literal("v"))])
    assert g.view.contains((EX + "n0", RDF_TYPE, EX + "C0"))
    g.delete([(EX + "n0", DATA, Literal("v"))])
    assert len(g.view) == 0
