"""The knowledge graph from the Python client (both clients, against a real server with
univ-bench): loads from text, a file and an rdflib Graph, exports, SPARQL Updates whose
notifications carry what they added and removed (against the oracle: pyoxigraph over
owlrl's closure before and after), retained events, and the server's refusals raised as
the exception tree's classes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import rdflib
from kg_oracle import canonical_counter, expected_change

from semps.client import GraphEdit, GraphInfo, Notification
from semps.errors import (
    GraphError,
    PermissionDenied,
    UnsupportedUpdateError,
    UpdateSyntaxError,
)

pytestmark = [pytest.mark.server]

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
EX = "http://ex.org/u#"
PEOPLE = f"""@prefix ub: <{UB}> . @prefix ex: <{EX}> .
ex:p1 a ub:FullProfessor ; ub:worksFor ex:d1 .
ex:p2 a ub:AssistantProfessor .
"""
PROFESSORS = f"PREFIX ub: <{UB}> SELECT ?who WHERE {{ ?who a ub:Professor }}"
MOVE = (
    f"PREFIX ub: <{UB}> PREFIX ex: <{EX}>\n"
    "DELETE DATA { ex:p1 a ub:FullProfessor } ;\n"
    "INSERT DATA { ex:p3 a ub:Dean }"
)


def _triples(text: str) -> set[tuple[Any, ...]]:
    return set(rdflib.Graph().parse(data=text, format="nt"))


def test_a_graph_loaded_from_text_a_file_or_an_rdflib_graph_is_exported_as_loaded(
    publisher: Any, tmp_path: Path
) -> None:
    people = rdflib.Graph().parse(data=PEOPLE, format="turtle")
    path = tmp_path / "people.nt"
    path.write_bytes(people.serialize(format="nt", encoding="utf-8"))
    for source in (PEOPLE, path, people):
        publisher.clear_graph()
        edit = publisher.load_graph(source)
        assert isinstance(edit, GraphEdit) and edit.inserted == len(people)
        assert _triples(publisher.export_graph("application/n-triples")) == set(people)
    edit = publisher.load_graph(PEOPLE.encode(), replace=True)
    assert (edit.inserted, edit.deleted) == (0, 0)
    info = publisher.graph_info()
    assert isinstance(info, GraphInfo) and info.version == edit.version
    assert info.asserted == len(people) and info.triples > info.asserted
    closure = _triples(publisher.export_graph("application/n-triples", closure=True))
    assert (rdflib.URIRef(EX + "p1"), rdflib.RDF.type, rdflib.URIRef(UB + "Professor")) in closure


def test_an_update_notifies_the_solutions_it_added_and_removed(
    publisher: Any, subscriber: Any, demo: Path
) -> None:
    publisher.load_graph(PEOPLE, replace=True)
    before = _triples(publisher.export_graph("application/n-triples"))
    sub = subscriber.subscribe(PROFESSORS)
    edit = publisher.update_graph(MOVE)
    assert (edit.inserted, edit.deleted, edit.notified) == (1, 1, 1)
    (note,) = list(subscriber.notifications(sub, once=True))
    after = _triples(publisher.export_graph("application/n-triples"))
    subscriber.delete(sub)
    assert isinstance(note, Notification) and note.graph_version == edit.version
    assert note.event == f"graph-{edit.version}"
    ontology = list(rdflib.Graph().parse(demo / "univ-bench.owl"))
    added, removed = expected_change(ontology, list(before), list(after), PROFESSORS)
    assert _counter(note.bindings()) == canonical_counter(added)
    assert _counter(note.removed_bindings()) == canonical_counter(removed)
    assert (note.count, note.removed_count) == (1, 1)


def test_a_retained_event_is_a_change_of_the_graph(publisher: Any, subscriber: Any) -> None:
    publisher.load_graph(PEOPLE, replace=True)
    sub = subscriber.subscribe(PROFESSORS)
    event = f"<{EX}p4> <{rdflib.RDF.type}> <{UB}Chair> ."
    published = publisher.publish(event, "application/n-triples", retain=True)
    (note,) = list(subscriber.notifications(sub, once=True))
    subscriber.delete(sub)
    assert note.event == published.id and note.graph_version is not None
    assert note.bindings() == [{"who": EX + "p4"}] and note.removed == ()
    assert (rdflib.URIRef(EX + "p4"), rdflib.RDF.type, rdflib.URIRef(UB + "Chair")) in _triples(
        publisher.export_graph("application/n-triples")
    )


def test_the_servers_refusals_are_raised_and_change_nothing(
    publisher: Any, subscriber: Any
) -> None:
    publisher.load_graph(PEOPLE, replace=True)
    version = publisher.graph_info().version
    with pytest.raises(UpdateSyntaxError) as syntax:
        publisher.update_graph("INSERT DATA {\n <urn:a> <urn:b> }")
    assert (syntax.value.line, syntax.value.column) == (2, 18)
    with pytest.raises(UnsupportedUpdateError) as load:
        publisher.update_graph("LOAD <http://example.org/data.ttl>")
    assert load.value.construct.startswith("LOAD")
    with pytest.raises(GraphError) as bad:
        publisher.load_graph("<urn:a> <urn:b> .")
    assert bad.value.line == 1
    with pytest.raises(PermissionDenied):
        subscriber.update_graph(MOVE)
    with pytest.raises(PermissionDenied):
        subscriber.load_graph(PEOPLE)
    assert publisher.graph_info().version == version


def _counter(rows: list[dict[str, object]]) -> Counter:
    return canonical_counter(Counter(frozenset(row.items()) for row in rows))
