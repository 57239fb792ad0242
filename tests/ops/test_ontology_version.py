"""The ontology's version keeps increasing across restarts (clients compare versions)."""

from __future__ import annotations

from pathlib import Path

from semps.ontology.store import OntologyStore


def test_the_version_survives_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ontology.sqlite3"
    store = OntologyStore(path)
    store.add_axiom("subClassOf", "http://ex/A", "http://ex/B")
    store.add_axiom("subClassOf", "http://ex/B", "http://ex/C")
    assert store.version == 2
    store.close()
    store = OntologyStore(path)
    try:
        assert store.version == 2
        store.add_axiom("subClassOf", "http://ex/C", "http://ex/D")
        assert store.version == 3
        assert store.expansion().version == 3
    finally:
        store.close()


def test_an_ontology_in_memory_starts_at_zero() -> None:
    store = OntologyStore()
    try:
        assert store.version == 0
    finally:
        store.close()
