"""The owlready2-backed ontology store: load, edit, export, persist, derive expansions."""

from __future__ import annotations

from pathlib import Path

import pytest
from semps_test_support import WORKLOADS

from semps.errors import OntologyError
from semps.ontology import load_expansion
from semps.ontology.store import OntologyStore
from semps.terms import OWL

EX = "http://example.org/"
UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
LUBM = WORKLOADS / "lubm-u0" / "ontology.owl"


@pytest.fixture
def store(tmp_path: Path):
    s = OntologyStore(tmp_path / "ontology.sqlite3")
    yield s
    s.close()


def test_loaded_ontology_expands_like_the_file(store: OntologyStore) -> None:
    store.load(LUBM)
    from_store, from_file = store.expansion(), load_expansion(LUBM)
    assert from_store.properties == from_file.properties
    named = {c for c in from_file.classes if not c.startswith("_:")}
    for cls in named:
        expected = {c for c in from_file.classes[cls] if not c.startswith("_:")}
        assert {c for c in from_store.classes[cls] if not c.startswith("_:")} == expected


def test_an_edit_takes_effect_in_the_next_expansion(store: OntologyStore) -> None:
    before = store.expansion()
    store.add_axiom("subPropertyOf", EX + "worksFor", EX + "memberOf")
    after = store.expansion()
    assert after.version > before.version
    assert (EX + "memberOf", False) in after.expand_property(EX + "worksFor")
    assert before.expand_property(EX + "worksFor") == ((EX + "worksFor", False),)


def test_every_axiom_kind_round_trips(store: OntologyStore) -> None:
    store.add_class(EX + "Grad", parents=[EX + "Student"])
    store.add_property(EX + "advisor", "object", parents=[EX + "knows"])
    store.add_axiom("equivalentClass", EX + "Pupil", EX + "Student")
    store.add_axiom("equivalentProperty", EX + "mentor", EX + "advisor")
    store.add_axiom("inverseOf", EX + "advises", EX + "advisor")
    store.set_characteristic(EX + "knows", "symmetric")
    store.set_characteristic(EX + "partOf", "transitive")
    e = store.expansion()
    assert {EX + "Student", EX + "Pupil"} <= e.expand_class(EX + "Grad")
    implied = set(e.expand_property(EX + "mentor"))
    assert {(EX + "advisor", False), (EX + "knows", False), (EX + "knows", True)} <= implied
    assert (EX + "advisor", True) in e.expand_property(EX + "advises")
    assert EX + "partOf" in e.transitive
    store.remove_axiom("inverseOf", EX + "advises", EX + "advisor")
    store.set_characteristic(EX + "partOf", "transitive", enabled=False)
    store.remove_class(EX + "Pupil")
    e = store.expansion()
    assert e.expand_property(EX + "advises") == ((EX + "advises", False),)
    assert EX + "partOf" not in e.transitive
    assert EX + "Pupil" not in e.expand_class(EX + "Grad")


def test_the_ontology_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    first = OntologyStore(path)
    first.load(LUBM)
    first.add_axiom("subClassOf", EX + "Robot", UB + "Employee")
    first.close()
    second = OntologyStore(path)
    try:
        assert UB + "Person" in second.expansion().expand_class(EX + "Robot")
        assert UB + "GraduateStudent" in second.classes()
    finally:
        second.close()


def test_meta_classes_stay_out_of_the_tables(store: OntologyStore) -> None:
    store.load(LUBM)
    e = store.expansion()
    meta = {OWL + "Thing", OWL + "Class", OWL + "ObjectProperty", OWL + "DatatypeProperty"}
    assert not any(meta & ancestors for ancestors in e.classes.values())


def test_export_reloads_to_the_same_tables(store: OntologyStore) -> None:
    store.load(LUBM)
    for fmt, media in (("rdfxml", "application/rdf+xml"), ("turtle", "text/turtle")):
        again = load_expansion(store.export(fmt), media_type=media)
        assert again.properties == store.expansion().properties


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.add_axiom("subKindOf", EX + "a", EX + "b"), "unknown axiom kind 'subKindOf'"),
        (lambda s: s.add_axiom("subClassOf", "not an iri", EX + "b"), "not an absolute IRI"),
        (lambda s: s.remove_axiom("subClassOf", EX + "a", EX + "b"), "no such axiom"),
        (lambda s: s.remove_class(EX + "Nope"), "http://example.org/Nope is not in the ontology"),
        (lambda s: s.load(b"<rdf:RDF"), "cannot parse ontology"),
        (lambda s: s.set_characteristic(EX + "p", "reflexive"), "unknown property characteristic"),
    ],
)
def test_bad_edits_raise_ontology_errors(store: OntologyStore, call, message: str) -> None:
    version = store.version
    with pytest.raises(OntologyError, match=message):
        call(store)
    assert store.version == version
