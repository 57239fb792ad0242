"""The knowledge graph in its SQLite file: what is committed survives a restart (terms,
closure, asserted flags, version) without a recompute; an ontology change recomputes once;
a failed commit leaves memory and disk as they were."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from graph_support import EX

from semps.errors import StorageFull, StoreError
from semps.graph import gsp
from semps.graph.graph import DATABASE, KnowledgeGraph, connect
from semps.graph.store import LOG_MAX, GraphStore
from semps.ontology import compile_axioms
from semps.terms import RDF_TYPE, RDFS, Literal

ONTOLOGY = compile_axioms(
    [
        (EX + "Sensor", RDFS + "subClassOf", EX + "Point"),
        (EX + "isPointOf", "http://www.w3.org/2002/07/owl#inverseOf", EX + "hasPoint"),
    ]
)
MODEL = [
    (EX + "s1", RDF_TYPE, EX + "Sensor"),
    (EX + "s1", EX + "isPointOf", EX + "ahu1"),
    (EX + "s1", EX + "label", Literal("S1", lang="en")),
    ("_:b0", EX + "value", Literal("1.5", "http://www.w3.org/2001/XMLSchema#double")),
]


def state(g: KnowledgeGraph) -> tuple:
    return (
        g.version,
        sorted(g.view.term_triples()),
        sorted(g.view.term_triples(asserted_only=True)),
        list(g.view.terms.by_id),
    )


def test_what_is_committed_is_read_back_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / DATABASE
    g = KnowledgeGraph.open(connect(db), ONTOLOGY)
    g.load(MODEL)
    g.update(f"PREFIX : <{EX}> INSERT DATA {{ :s2 a :Sensor ; :isPointOf :ahu1 }}")
    g.delete([(EX + "s1", RDF_TYPE, EX + "Sensor")])
    before = state(g)
    again = KnowledgeGraph.open(connect(db), ONTOLOGY)
    assert state(again) == before
    assert again.view.contains((EX + "ahu1", EX + "hasPoint", EX + "s2"))


def test_the_log_is_folded_into_segments_and_still_reads_the_same(tmp_path: Path) -> None:
    db = tmp_path / DATABASE
    g = KnowledgeGraph.open(connect(db), ONTOLOGY)
    for i in range(20):
        g.insert([(EX + f"n{i}", RDF_TYPE, EX + "Sensor")])
    assert g.store is not None and g.store.log_rows() > 0
    before = state(g)
    assert g.compact() > 0
    assert g.store.log_rows() == 0
    assert state(KnowledgeGraph.open(connect(db), ONTOLOGY)) == before
    assert LOG_MAX > 1000  # (the log folds itself only past this)


def test_another_ontology_recomputes_the_closure_once(tmp_path: Path) -> None:
    db = tmp_path / DATABASE
    KnowledgeGraph.open(connect(db), ONTOLOGY).load(MODEL)
    wider = compile_axioms([(EX + "Sensor", RDFS + "subClassOf", EX + "Device")])
    g = KnowledgeGraph.open(connect(db), wider)
    assert g.view.contains((EX + "s1", RDF_TYPE, EX + "Device"))
    assert not g.view.contains((EX + "s1", RDF_TYPE, EX + "Point"))
    assert len(list(g.view.term_triples(asserted_only=True))) == len(MODEL)
    version = g.version
    assert KnowledgeGraph.open(connect(db), wider).version == version  # no second recompute


def test_a_reader_recomputes_in_memory_only(tmp_path: Path) -> None:
    db = tmp_path / DATABASE
    KnowledgeGraph.open(connect(db), ONTOLOGY).load(MODEL)
    stored = state(KnowledgeGraph.open(connect(db), ONTOLOGY))
    reader = KnowledgeGraph.open(connect(db), compile_axioms([]), write=False)
    assert not reader.view.contains((EX + "s1", RDF_TYPE, EX + "Point"))
    assert state(KnowledgeGraph.open(connect(db), ONTOLOGY)) == stored


def test_a_failed_commit_changes_neither_memory_nor_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / DATABASE
    g = KnowledgeGraph.open(connect(db), ONTOLOGY)
    g.load(MODEL)
    before = state(g)
    change = g.plan_insert([(EX + "s3", RDF_TYPE, EX + "Sensor")])

    def broken(self: GraphStore, *args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(GraphStore, "write", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        g.commit(change)
    monkeypatch.undo()
    assert state(g) == before
    assert state(KnowledgeGraph.open(connect(db), ONTOLOGY)) == before


def test_a_full_disk_is_storage_full_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / DATABASE
    conn = connect(db)
    g = KnowledgeGraph.open(conn, ONTOLOGY)
    g.load(MODEL)
    before = state(g)
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: a full disk
    many = [(EX + f"sensor-{i:05d}-{'x' * 200}", RDF_TYPE, EX + "Sensor") for i in range(500)]
    with pytest.raises(StorageFull, match="cannot write the knowledge graph: the disk is full"):
        g.commit(g.plan_insert(many))
    assert state(g) == before  # 507, not the client's fault, and nothing of it applied
    assert state(KnowledgeGraph.open(connect(db), ONTOLOGY)) == before


def test_graph_store_protocol_operations(tmp_path: Path) -> None:
    g = KnowledgeGraph.open(connect(tmp_path / DATABASE), ONTOLOGY)
    turtle = f"<{EX}s1> a <{EX}Sensor> ; <{EX}isPointOf> <{EX}ahu1> .".encode()
    g.commit(gsp.load(g, turtle, "text/turtle", replace=True))
    body, media_type = gsp.get(g, "application/n-triples")
    assert media_type == "application/n-triples"
    assert body.count(b"\n") == 2
    g.commit(gsp.load(g, f"<{EX}s2> a <{EX}Sensor> .".encode(), "text/turtle"))
    assert g.view.contains((EX + "s2", RDF_TYPE, EX + "Point"))
    g.commit(gsp.load(g, f"<{EX}s3> a <{EX}Sensor> .".encode(), "text/turtle", replace=True))
    assert sorted(g.view.term_triples(asserted_only=True)) == [(EX + "s3", RDF_TYPE, EX + "Sensor")]
    g.commit(gsp.delete(g))
    assert len(g) == 0 and gsp.get(g)[0] == b""


@pytest.mark.parametrize(
    "media_type",
    ["text/turtle", "application/n-triples", "application/rdf+xml", "application/ld+json"],
)
def test_export_reads_back_the_same_triples(media_type: str) -> None:
    g = KnowledgeGraph(ONTOLOGY)
    g.load(MODEL)
    copy = KnowledgeGraph(ONTOLOGY)
    copy.load(g.export(media_type), media_type=media_type)

    def shape(k: KnowledgeGraph) -> list:  # blank nodes get fresh names on each load
        return sorted(
            (s if not s.startswith("_:") else "_", p, o) for s, p, o in k.view.term_triples()
        )

    assert shape(copy) == shape(g)


def test_each_load_names_its_blank_nodes_afresh() -> None:
    g = KnowledgeGraph()
    doc = b'_:b1 <http://ex/p> "1" .'
    g.load(doc, media_type="application/n-triples")
    g.load(doc, media_type="application/n-triples")
    assert len(g) == 2
