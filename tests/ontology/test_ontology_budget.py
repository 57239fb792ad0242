"""Ontology edits have budgets like events: an edit that would make an ontology over a limit
(triples, hierarchy depth, compiled rule entries, compile time, document size) is refused
with a message naming the limit, and nothing of it is applied; an ontology on file that
breaks the limits is refused at start-up with the command that repairs the data directory;
reads never wait for an edit."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS, raised

from semps.cli import main as semps_main
from semps.errors import DocumentTooLarge, OntologyLimitExceeded, StorageFull
from semps.limits import Limits
from semps.ontology.store import OntologyStore
from semps.terms import OWL, RDF_TYPE, RDFS

EX = "http://ex/"
SUB_CLASS = RDFS + "subClassOf"
SUB_PROPERTY = RDFS + "subPropertyOf"


def nt(triples: list[tuple[str, str, str]]) -> bytes:
    return "\n".join(f"<{s}> <{p}> <{o}> ." for s, p, o in triples).encode()


def chain(links: int) -> list[tuple[str, str, str]]:
    """The issue's wedge: ``C0 ⊑ C1 ⊑ ... ⊑ C<links>``."""
    return [(f"{EX}C{i}", SUB_CLASS, f"{EX}C{i + 1}") for i in range(links)]


def cycle(length: int) -> list[tuple[str, str, str]]:
    return [(f"{EX}p{i}", SUB_PROPERTY, f"{EX}p{(i + 1) % length}") for i in range(length)]


def some_values(count: int) -> bytes:
    """``count`` someValuesFrom restrictions, one over each class of a chain (Turtle)."""
    lines = [
        f"[] <{OWL}onProperty> <{EX}p> ; <{OWL}someValuesFrom> <{EX}C{i}> ." for i in range(count)
    ]
    return nt(chain(count)) + b"\n" + "\n".join(lines).encode()


@pytest.fixture
def store(tmp_path: Path):
    s = OntologyStore(tmp_path / "ontology.sqlite3")
    s.add_axiom("subClassOf", EX + "Grad", EX + "Student")
    yield s
    s.close()


def unchanged(store: OntologyStore, version: int, triples: set[object]) -> None:
    """Nothing of a refused edit was applied: not in memory, not on file."""
    assert store.version == version
    assert set(store.triples()) == triples
    assert store.expansion().version == version
    path = store.path
    assert path is not None
    db = sqlite3.connect(path)
    row = db.execute("SELECT value FROM semps_meta WHERE name = 'version'").fetchone()
    db.close()
    assert (row[0] if row else 0) == version


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            nt(chain(20_000)),
            f"the class hierarchy is 20001 levels deep (below {EX}C0), over the limit of 256 "
            "levels (max_hierarchy_depth)",
        ),
        (
            nt(cycle(2_500)),
            "the ontology compiles to more than the limit of 1000000 rule entries "
            "(max_ontology_rules)",
        ),
        (
            some_values(1_500),
            f"the class hierarchy is 1501 levels deep (below {EX}C0), over the limit of 256 "
            "levels (max_hierarchy_depth)",
        ),
    ],
    ids=["20000-deep-subclass-chain", "2500-long-subproperty-cycle", "1500-some-values-from"],
)
def test_the_issues_wedges_are_refused_before_anything_is_applied(
    store: OntologyStore, document: bytes, message: str
) -> None:
    version, triples = store.version, set(store.triples())
    for replace in (True, False):
        media = "text/turtle"
        error = raised(OntologyLimitExceeded, store.load, document, format=media, replace=replace)
        assert str(error) == message
        unchanged(store, version, triples)


def test_an_edit_of_one_axiom_that_deepens_the_hierarchy_past_the_limit_is_refused(
    tmp_path: Path,
) -> None:
    store = OntologyStore(tmp_path / "o.sqlite3", limits=Limits(max_hierarchy_depth=3))
    try:
        store.add_axiom("subClassOf", EX + "A", EX + "B")
        store.add_axiom("subClassOf", EX + "B", EX + "C")
        version, triples = store.version, set(store.triples())
        error = raised(OntologyLimitExceeded, store.add_axiom, "subClassOf", EX + "C", EX + "D")
        assert "is 4 levels deep" in str(error) and "(max_hierarchy_depth)" in str(error)
        unchanged(store, version, triples)
        store.add_axiom("subClassOf", EX + "C", EX + "A")  # a cycle counts once
        assert store.expansion().expand_class(EX + "A") == {EX + "A", EX + "B", EX + "C"}
    finally:
        store.close()


def test_an_ontology_over_the_triple_limit_is_refused(tmp_path: Path) -> None:
    store = OntologyStore(tmp_path / "o.sqlite3", limits=Limits(max_ontology_triples=10))
    try:
        store.load(nt(chain(6)), format="application/n-triples")
        version, triples = store.version, set(store.triples())
        error = raised(
            OntologyLimitExceeded, store.load, nt(chain(12)[6:]), format="application/n-triples"
        )
        assert str(error) == (
            "the ontology would hold 12 triples, over the limit of 10 (max_ontology_triples)"
        )
        unchanged(store, version, triples)
    finally:
        store.close()


def test_a_document_over_the_byte_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    store = OntologyStore(tmp_path / "o.sqlite3", limits=Limits(max_ontology_bytes=100))
    try:
        document = nt(chain(3))
        error = raised(DocumentTooLarge, store.load, document, format="application/n-triples")
        assert str(error) == (
            f"the ontology document is {len(document)} bytes, over the limit of 100 bytes "
            "(max_ontology_bytes)"
        )
        assert store.version == 0
    finally:
        store.close()


def test_an_edit_whose_compilation_overruns_its_time_is_cut_off_and_not_applied(
    tmp_path: Path,
) -> None:
    store = OntologyStore(tmp_path / "o.sqlite3", limits=Limits(ontology_timeout=1e-9))
    try:
        version, triples = store.version, set(store.triples())
        error = raised(OntologyLimitExceeded, store.load, nt(chain(50)), format="text/turtle")
        assert str(error) == (
            "compiling the ontology took more than 1e-09 s; the edit was cut off (ontology_timeout)"
        )
        unchanged(store, version, triples)
    finally:
        store.close()


@pytest.mark.parametrize("case", ["brick-a", "brick-kg-a", "lubm-u0"])
def test_real_ontologies_load_under_the_default_limits(tmp_path: Path, case: str) -> None:
    store = OntologyStore(tmp_path / "o.sqlite3")
    try:
        store.load(WORKLOADS / case / "ontology.owl", replace=True)
        assert store.expansion().classes
    finally:
        store.close()


def test_a_stored_ontology_over_the_limits_is_refused_at_start_up_and_reset_repairs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ontology.sqlite3"
    first = OntologyStore(path)
    first.load(nt(chain(10)), format="application/n-triples")
    first.close()
    error = raised(OntologyLimitExceeded, OntologyStore, path, limits=Limits(max_hierarchy_depth=5))
    assert str(error) == (
        f"the ontology stored in {path} breaks a limit: the class hierarchy is 11 levels deep "
        f"(below {EX}C0), over the limit of 5 levels (max_hierarchy_depth). Start with that "
        f"limit raised, or empty the ontology with `semps ontology reset --data-dir {tmp_path}` "
        "(the old file is kept beside it)"
    )
    assert semps_main(["ontology", "reset", "--data-dir", str(tmp_path)]) == 0
    assert f"the ontology of {tmp_path} is empty now (version 2)" in capsys.readouterr().out
    assert (tmp_path / "ontology.sqlite3.v1").exists()
    again = OntologyStore(path, limits=Limits(max_hierarchy_depth=5))
    try:
        assert (again.version, list(again.triples())) == (2, [])
    finally:
        again.close()


def test_reads_never_wait_for_an_edit(store: OntologyStore) -> None:
    """An edit holds the store's edit lock while it compiles and writes; the event path,
    ``GET /ontology`` and the console read the snapshot without it."""
    with store._lock:  # an edit in progress
        done = threading.Event()

        def read() -> None:
            store.expansion()
            store.export("turtle")
            store.export("rdfxml")
            list(store.triples())
            store.snapshot()
            store.classes()
            done.set()

        reader = threading.Thread(target=read)
        reader.start()
        reader.join()  # returns without the lock being released
        assert done.is_set()


def test_owlready2s_own_ontology_declarations_are_not_shown(store: OntologyStore) -> None:
    shown = set(store.triples())
    assert ("http://anonymous", RDF_TYPE, OWL + "Ontology") not in shown
    assert ("urn:semps:ontology", RDF_TYPE, OWL + "Ontology") not in shown
    assert b"anonymous" not in store.export("ntriples")
    assert shown == {(EX + "Grad", SUB_CLASS, EX + "Student")}


def test_a_failed_write_leaves_the_ontology_and_its_version_as_they_were(
    store: OntologyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    version, triples = store.version, set(store.triples())
    quads = store._quads

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(quads, "write", full)
    error = raised(StorageFull, store.add_axiom, "subClassOf", EX + "Student", EX + "Person")
    assert "the disk is full" in str(error)
    unchanged(store, version, triples)
    monkeypatch.undo()
    store.add_axiom("subClassOf", EX + "Student", EX + "Person")  # room again: it works
    assert store.version == version + 1
    assert EX + "Person" in store.expansion().expand_class(EX + "Grad")
