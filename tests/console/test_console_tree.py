"""The console's ontology view, checked against rdflib reading the same file."""

from __future__ import annotations

from collections import defaultdict

import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from semps.api.console.tree import ontology_tree
from semps.cli.demo import demo_dir
from semps.ontology.store import OntologyStore
from semps.terms import XSD_STRING, Literal

UNIV_BENCH = demo_dir() / "univ-bench.owl"


def _oracle() -> tuple[rdflib.Graph, dict[str, set[str]], dict[str, set[str]]]:
    graph = rdflib.Graph().parse(UNIV_BENCH, format="xml")
    parents: dict[str, dict[str, set[str]]] = {"class": defaultdict(set), "prop": defaultdict(set)}
    for key, predicate in (("class", RDFS.subClassOf), ("prop", RDFS.subPropertyOf)):
        for s, o in graph.subject_objects(predicate):
            if isinstance(s, rdflib.URIRef) and isinstance(o, rdflib.URIRef) and s != o:
                parents[key][str(s)].add(str(o))
    return graph, parents["class"], parents["prop"]


def _tree_of_univ_bench() -> dict[str, object]:
    store = OntologyStore()
    try:
        store.load(UNIV_BENCH.read_bytes(), format="application/rdf+xml")
        return ontology_tree(store.triples(), store.version)
    finally:
        store.close()


def test_class_and_property_parents_are_the_named_direct_ones_rdflib_reads() -> None:
    graph, class_parents, property_parents = _oracle()
    tree = _tree_of_univ_bench()
    classes = {c["iri"]: set(c["parents"]) for c in tree["classes"]}  # type: ignore[attr-defined]
    properties = {p["iri"]: set(p["parents"]) for p in tree["properties"]}  # type: ignore[attr-defined]
    declared = {str(c) for c in graph.subjects(RDF.type, OWL.Class) if isinstance(c, rdflib.URIRef)}
    assert declared <= set(classes)
    assert {iri: ps for iri, ps in classes.items() if ps} == dict(class_parents)
    assert {iri: ps for iri, ps in properties.items() if ps} == dict(property_parents)


def test_every_named_axiom_is_listed_once_in_the_kinds_the_api_takes() -> None:
    graph, class_parents, _ = _oracle()
    tree = _tree_of_univ_bench()
    axioms = tree["axioms"]
    assert isinstance(axioms, list)
    pairs = [(a["subject"], a["object"]) for a in axioms if a["kind"] == "subClassOf"]
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == {(s, o) for s, os in class_parents.items() for o in os}
    inverse = {
        (str(s), str(o))
        for s, o in graph.subject_objects(OWL.inverseOf)
        if isinstance(o, rdflib.URIRef)
    }
    listed = {(a["subject"], a["object"]) for a in axioms if a["kind"] == "inverseOf"}
    assert listed == inverse


def test_labels_and_characteristics_are_carried_and_blank_nodes_left_out() -> None:
    ex = "http://ex/"
    triples = [
        (ex + "Grad", str(RDFS.subClassOf), ex + "Student"),
        (ex + "Grad", str(RDFS.subClassOf), "_:restriction"),
        (ex + "Grad", str(RDFS.label), Literal("<b>Graduate</b>", XSD_STRING)),
        (ex + "knows", str(RDF.type), str(OWL.SymmetricProperty)),
        (ex + "knows", str(RDF.type), str(OWL.ObjectProperty)),
        ("_:restriction", str(OWL.onProperty), ex + "knows"),
    ]
    tree = ontology_tree(triples, version=7)
    assert tree["version"] == 7
    assert tree["classes"] == [
        {"iri": ex + "Grad", "label": "<b>Graduate</b>", "parents": [ex + "Student"]},
        {"iri": ex + "Student", "label": None, "parents": []},
    ]
    assert tree["properties"] == [
        {
            "iri": ex + "knows",
            "label": None,
            "parents": [],
            "kinds": ["object"],
            "characteristics": ["symmetric"],
        }
    ]
