"""An ontology document's individuals are never dropped in silence: split from the axioms,
refused by the ontology with a message saying where they belong, or handed to the graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from semps.errors import OntologyError
from semps.ontology import load_expansion, load_ontology
from semps.ontology.split import split
from semps.ontology.store import OntologyStore
from semps.terms import OWL, RDF, RDF_TYPE, RDFS, Literal

EX = "http://ex/"
AXIOMS = [
    (EX + "Sensor", RDF_TYPE, OWL + "Class"),
    (EX + "Sensor", RDFS + "subClassOf", EX + "Point"),
    (EX + "Sensor", RDFS + "label", Literal("Sensor")),
    ("_:r", RDF_TYPE, OWL + "Restriction"),
    ("_:r", OWL + "onProperty", EX + "hasTag"),
    ("_:r", OWL + "hasValue", EX + "TempTag"),
    (EX + "T", OWL + "intersectionOf", "_:l1"),
    ("_:l1", RDF + "first", "_:r"),
    ("_:l1", RDF + "rest", RDF + "nil"),
]
FACTS = [
    (EX + "s1", RDF_TYPE, EX + "Sensor"),
    (EX + "s1", EX + "isPointOf", EX + "ahu1"),
    (EX + "TempTag", RDFS + "label", Literal("Temperature")),  # an individual a hasValue names
]

TURTLE = f"""
@prefix : <{EX}> . @prefix owl: <{OWL}> . @prefix rdfs: <{RDFS}> .
:Sensor a owl:Class ; rdfs:subClassOf :Point .
:s1 a :Sensor ; :isPointOf :ahu1 .
""".encode()


def test_split_keeps_vocabulary_as_axioms_and_individuals_as_facts() -> None:
    found = split(AXIOMS + FACTS)
    assert sorted(found.axioms) == sorted(AXIOMS)
    assert sorted(found.facts) == sorted(FACTS)


def test_load_expansion_refuses_individuals_saying_where_they_belong(tmp_path: Path) -> None:
    path = tmp_path / "brick+model.ttl"
    path.write_bytes(TURTLE)
    with pytest.raises(
        OntologyError, match="2 triples about individuals .* belong in the knowledge graph"
    ):
        load_expansion(path)
    expansion, facts = load_ontology(path)
    assert EX + "Point" in expansion.expand_class(EX + "Sensor")
    assert sorted(facts) == sorted(
        [(EX + "s1", RDF_TYPE, EX + "Sensor"), (EX + "s1", EX + "isPointOf", EX + "ahu1")]
    )


def test_the_ontology_store_refuses_individuals_and_keeps_what_it_had() -> None:
    store = OntologyStore()
    store.add_axiom("subClassOf", EX + "A", EX + "B")
    with pytest.raises(OntologyError, match="belong in the knowledge graph"):
        store.load(TURTLE, format="text/turtle")
    assert store.expansion().expand_class(EX + "Sensor") == frozenset({EX + "Sensor"})
    store.close()
