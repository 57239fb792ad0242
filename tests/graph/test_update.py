"""SPARQL 1.1 Update on the knowledge graph: what each operation does, the errors it gives
(with line and column), and that a refused request changes nothing."""

from __future__ import annotations

import pytest
from semps_test_support import raised

from semps.errors import (
    GraphError,
    GraphLimitExceeded,
    UnsupportedUpdateError,
    UpdateSyntaxError,
)
from semps.graph.graph import KnowledgeGraph
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology import compile_axioms
from semps.terms import RDF_TYPE, RDFS, XSD, Literal

EX = "http://ex/"
P = f"PREFIX : <{EX}> PREFIX rdfs: <{RDFS}> "


def graph(limits: Limits = DEFAULT_LIMITS) -> KnowledgeGraph:
    """A graph under ``:Sensor subClassOf :Point subClassOf :Entity``, holding one
    sensor."""
    axioms = [
        (EX + "Sensor", RDFS + "subClassOf", EX + "Point"),
        (EX + "Point", RDFS + "subClassOf", EX + "Entity"),
    ]
    g = KnowledgeGraph(compile_axioms(axioms), limits=limits)
    g.insert([(EX + "s1", RDF_TYPE, EX + "Sensor"), (EX + "s1", EX + "label", Literal("one"))])
    return g


def asserted(g: KnowledgeGraph) -> set:
    return set(g.view.term_triples(asserted_only=True))


def test_insert_data_adds_the_triples_and_what_they_imply() -> None:
    g = graph()
    change = g.update(P + "INSERT DATA { :s2 a :Sensor }")
    assert (EX + "s2", RDF_TYPE, EX + "Point") in set(g.view.term_triples())
    assert change.summary() == {
        "version": 2,
        "inserted": 1,
        "deleted": 0,
        "inferred_added": 2,
        "inferred_removed": 0,
    }


def test_delete_data_removes_what_only_the_deleted_triple_implied() -> None:
    g = graph()
    g.update(P + "DELETE DATA { :s1 a :Sensor }")
    assert asserted(g) == {(EX + "s1", EX + "label", Literal("one"))}
    assert not g.view.contains((EX + "s1", RDF_TYPE, EX + "Point"))


def test_the_where_clause_sees_asserted_triples_not_inferred_ones() -> None:
    """SPARQL Update works on the store's triples: ``:s1 a :Point`` is inferred, so no
    solution binds ?s to it and nothing is inserted."""
    g = graph()
    change = g.update(P + "INSERT { ?s :seen true } WHERE { ?s a :Point }")
    assert change.empty
    g.update(P + "INSERT { ?s :seen true } WHERE { ?s a :Sensor }")
    assert (EX + "s1", EX + "seen", Literal("true", XSD + "boolean")) in asserted(g)


def test_delete_insert_where_renames_a_property() -> None:
    g = graph()
    g.update(P + "DELETE { ?s :label ?l } INSERT { ?s rdfs:label ?l } WHERE { ?s :label ?l }")
    assert (EX + "s1", RDFS + "label", Literal("one")) in asserted(g)
    assert (EX + "s1", EX + "label", Literal("one")) not in asserted(g)


def test_delete_where_and_operations_in_sequence() -> None:
    g = graph()
    sequence = "INSERT DATA { :s2 a :Sensor } ; DELETE WHERE { ?s a :Sensor } ; "
    g.update(P + sequence + "INSERT DATA { :s3 a :Sensor }")
    assert asserted(g) == {
        (EX + "s1", EX + "label", Literal("one")),
        (EX + "s3", RDF_TYPE, EX + "Sensor"),
    }


def test_clear_then_insert_replaces_everything() -> None:
    g = graph()
    g.update(P + "CLEAR DEFAULT ; INSERT DATA { :s9 :p 1 }")
    assert asserted(g) == {(EX + "s9", EX + "p", Literal("1", XSD + "integer"))}


def test_template_blank_nodes_are_fresh_per_solution() -> None:
    g = graph()
    g.update(P + "INSERT DATA { :s2 a :Sensor }")
    g.update(P + "INSERT { ?s :reading [ :value 1 ] } WHERE { ?s a :Sensor }")
    readings = {o for s, p, o in asserted(g) if p == EX + "reading"}
    assert len(readings) == 2 and all(r.startswith("_:") for r in readings)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("INSERT DATA { :a :p }", "1:21", "expected a object but found '}'"),
        ("INSERT DATA { :a :p ?x }", "1:21", "a variable ?x in DATA"),
        ("DELETE DATA { _:b :p 1 }", "1:15", "a blank node in DATA"),
        ("DELETE { ?s :p [] } WHERE { ?s :p ?o }", "1:16", "a blank node in a DELETE template"),
        ("INSERT DATA { :a :p :b } ;\nDELETE { ?s :p ?o }", "2:20", "expected WHERE"),
        ("INSERT DATA { :a :p/:q 1 }", "1:18", "a property path in an update template"),
        ("INSERT DATA { nope:a :p 1 }", "1:15", "unknown prefix 'nope'"),
    ],
)
def test_syntax_errors_say_line_and_column(text: str, where: str, message: str) -> None:
    error = raised(UpdateSyntaxError, graph().update, f"PREFIX : <{EX}>\n" + text)
    line, column = where.split(":")
    assert (error.line, error.column) == (int(line) + 1, int(column))
    assert message in str(error)


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("LOAD <http://example.org/data.ttl>", "LOAD (semps never fetches remote data)"),
        ("INSERT { ?s ?p ?o } WHERE { SERVICE <http://x/sparql> { ?s ?p ?o } }", "SERVICE"),
        ("INSERT DATA { GRAPH <http://g> { :a :p 1 } }", "GRAPH (named graphs)"),
        ("WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "WITH (named graphs)"),
        ("CLEAR GRAPH <http://g>", "CLEAR or DROP of a named graph"),
        ("CREATE GRAPH <http://g>", "CREATE (named graphs)"),
    ],
)
def test_remote_data_and_named_graphs_are_refused(text: str, construct: str) -> None:
    error = raised(UnsupportedUpdateError, graph().update, P + text)
    assert error.construct == construct
    assert error.line == 1


def _unchanged(g: KnowledgeGraph, call: object) -> None:
    before = (g.version, set(g.view.term_triples()), asserted(g))
    with pytest.raises(GraphError):
        call()  # type: ignore[operator]
    assert (g.version, set(g.view.term_triples()), asserted(g)) == before


def test_a_refused_request_changes_nothing() -> None:
    g = graph()
    _unchanged(g, lambda: g.update(P + "INSERT DATA { :s2 a :Sensor } ; LOAD <http://x>"))
    _unchanged(
        g,
        lambda: g.update(
            P + "DELETE DATA { :s1 a :Sensor } ; INSERT DATA { :A rdfs:subClassOf :B }"
        ),
    )
    _unchanged(
        g, lambda: g.update(P + "INSERT DATA { :a <http://www.w3.org/2002/07/owl#sameAs> :b }")
    )


def test_axioms_are_refused_saying_where_they_belong() -> None:
    error = raised(GraphError, graph().update, P + "INSERT DATA { :A rdfs:subClassOf :B }")
    assert "axioms belong in the ontology" in str(error)


def test_limits_refuse_the_whole_update() -> None:
    small = Limits(
        max_update_bytes=200, max_update_triples=3, max_edit_inferred=1, max_edit_inferred_ratio=1
    )
    g = graph(small)
    error = raised(GraphLimitExceeded, g.update, P + "INSERT DATA { " + ":a :p 1 . " * 30 + "}")
    assert "(max_update_bytes)" in str(error)
    error = raised(GraphLimitExceeded, g.update, P + "INSERT DATA { :a :p 1, 2, 3, 4 }")
    assert "(max_update_triples)" in str(error)
    _unchanged(g, lambda: g.update(P + "INSERT DATA { :s2 a :Sensor . :s3 a :Sensor }"))
    error = raised(
        GraphLimitExceeded, g.update, P + "INSERT DATA { :s2 a :Sensor . :s3 a :Sensor }"
    )
    assert "max_edit_inferred" in str(error)
