"""The bounds of one graph edit: an ontology edit's re-closing, a load and an update are held
to ``max_edit_inferred``, ``max_graph_triples``, ``graph_timeout`` and ``max_update_rows``
while they are computed, and a refused edit changes nothing (the graph, and through
:meth:`OntologyStore.checking` the ontology). The closures checked are a chain's transitive
closure, counted by brute force: ``n`` links make ``n (n + 1) / 2`` paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from semps.errors import GraphLimitExceeded
from semps.graph import bulk
from semps.graph.graph import KnowledgeGraph, connect
from semps.limits import Limits
from semps.ontology import compile_axioms
from semps.ontology.compile import TRANSITIVE
from semps.ontology.expansion import Expansion
from semps.ontology.store import OntologyStore
from semps.terms import RDF_TYPE

EX = "http://ex/"
PART_OF = EX + "partOf"
TRANSITIVE_PART_OF = compile_axioms([(PART_OF, RDF_TYPE, TRANSITIVE)])


def chain(n: int) -> list[tuple[str, str, str]]:
    return [(f"{EX}n{i}", PART_OF, f"{EX}n{i + 1}") for i in range(n)]


def paths(n: int) -> set[tuple[str, str, str]]:
    """Every ``partOf`` of the chain's transitive closure, by brute force."""
    return {(f"{EX}n{i}", PART_OF, f"{EX}n{j}") for i in range(n) for j in range(i + 1, n + 1)}


def state(g: KnowledgeGraph) -> tuple[int, set[object], bytes]:
    return g.version, set(g.view.term_triples(asserted_only=False)), g.export("nt")


def chained(n: int, **limits: float) -> KnowledgeGraph:
    g = KnowledgeGraph(limits=Limits(**limits))  # type: ignore[arg-type]
    g.insert(chain(n))
    return g


def test_a_transitive_property_within_the_bounds_closes_the_chain() -> None:
    g = chained(60)
    g.set_ontology(TRANSITIVE_PART_OF)
    assert set(g.view.term_triples(asserted_only=False)) == paths(60)


def test_the_join_in_small_steps_closes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk, "CHUNK_ROWS", 7)
    g = chained(60)
    g.set_ontology(TRANSITIVE_PART_OF)
    assert set(g.view.term_triples(asserted_only=False)) == paths(60)


def test_a_load_in_small_steps_closes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk, "CHUNK_ROWS", 5)
    g = KnowledgeGraph(TRANSITIVE_PART_OF)
    g.load(chain(40))
    assert set(g.view.term_triples(asserted_only=False)) == paths(40)


def test_an_ontology_edit_past_max_edit_inferred_is_refused_and_stops_early() -> None:
    g = chained(300, max_edit_inferred=5_000)  # 45,150 paths: 44,850 inferred
    before = state(g)
    grown: list[int] = []
    with pytest.raises(GraphLimitExceeded, match=r"more than 5000 .*max_edit_inferred"):
        g.set_ontology(TRANSITIVE_PART_OF, tick=grown.append)
    assert state(g) == before
    assert g.view.expansion.version == Expansion().version
    assert sum(grown) <= 5_000 + 300  # the asserted links, then never past the bound


def test_an_ontology_edit_past_max_graph_triples_is_refused() -> None:
    g = chained(300, max_graph_triples=10_000)
    before = state(g)
    with pytest.raises(GraphLimitExceeded, match=r"more than 10000 .*max_graph_triples"):
        g.set_ontology(TRANSITIVE_PART_OF)
    assert state(g) == before


def test_an_ontology_edit_removing_past_max_edit_inferred_is_refused() -> None:
    g = KnowledgeGraph(TRANSITIVE_PART_OF)
    g.insert(chain(100))  # 5,050 paths
    g.limits = Limits(max_edit_inferred=1_000)
    before = state(g)
    with pytest.raises(GraphLimitExceeded, match="max_edit_inferred"):
        g.set_ontology(Expansion())
    assert state(g) == before


def test_an_edit_still_planning_at_graph_timeout_is_cut_off() -> None:
    g = chained(50, graph_timeout=1e-9)  # past as soon as it starts
    before = state(g)
    with pytest.raises(GraphLimitExceeded, match="graph_timeout"):
        g.set_ontology(TRANSITIVE_PART_OF)
    with pytest.raises(GraphLimitExceeded, match="graph_timeout"):
        g.load(chain(5000), replace=True)
    assert state(g) == before


def test_an_update_still_planning_at_graph_timeout_is_cut_off() -> None:
    g = KnowledgeGraph(TRANSITIVE_PART_OF, limits=Limits(graph_timeout=1e-9))
    with pytest.raises(GraphLimitExceeded, match="graph_timeout"):
        g.insert(chain(5000))
    assert len(g) == 0 and g.version == 0


def test_loads_and_inserts_past_max_graph_triples_are_refused() -> None:
    g = KnowledgeGraph(TRANSITIVE_PART_OF, limits=Limits(max_graph_triples=1_000))
    g.insert(chain(40))  # 820 paths
    before = state(g)
    with pytest.raises(GraphLimitExceeded, match="max_graph_triples"):
        g.load([(f"{EX}m{i}", PART_OF, f"{EX}m{i + 1}") for i in range(30)])  # 465 more
    with pytest.raises(GraphLimitExceeded, match="max_graph_triples"):
        g.insert(chain(45)[40:])  # the chain of 45 links: 1,035 paths
    with pytest.raises(GraphLimitExceeded, match="max_graph_triples"):
        g.load(chain(60), replace=True)  # 1,830 paths
    assert state(g) == before
    g.insert(chain(44)[40:])  # 990 paths: within
    assert set(g.view.term_triples(asserted_only=False)) == paths(44)


def test_where_clauses_are_held_to_max_update_rows() -> None:
    g = chained(50, max_update_rows=20)
    before = state(g)
    update = f"INSERT {{ ?a <{EX}near> ?b }} WHERE {{ ?a <{PART_OF}> ?b }}"
    with pytest.raises(GraphLimitExceeded, match=r"more than 20 rows .*max_update_rows"):
        g.update(update)
    assert state(g) == before
    chained(5, max_update_rows=20).update(update)


def test_a_refused_check_leaves_the_ontology_as_it_was(tmp_path: Path) -> None:
    store = OntologyStore(tmp_path / "ontology.sqlite3")
    store.add_axiom("subClassOf", EX + "A", EX + "B")
    version, triples = store.version, list(store.triples())

    def refuse(expansion: Expansion) -> None:
        assert expansion.transitive  # the ontology the edit would make
        raise GraphLimitExceeded("refused (max_edit_inferred)")

    with store.checking(refuse), pytest.raises(GraphLimitExceeded):
        store.set_characteristic(PART_OF, "transitive")
    assert (store.version, list(store.triples())) == (version, triples)
    store.close()
    again = OntologyStore(tmp_path / "ontology.sqlite3")
    assert (again.version, list(again.triples())) == (version, triples)
    again.set_characteristic(PART_OF, "transitive")  # no check outside the block
    assert again.version == version + 1
    again.close()


def test_a_stored_graph_over_the_limits_under_a_new_ontology_says_what_to_do(
    tmp_path: Path,
) -> None:
    db = tmp_path / "semps.sqlite3"
    stored = KnowledgeGraph.open(connect(db), Expansion())
    stored.insert(chain(300))
    version = stored.version
    limits = Limits(max_edit_inferred=1_000)
    with pytest.raises(GraphLimitExceeded, match=r"max_edit_inferred.*semps ontology reset"):
        KnowledgeGraph.open(connect(db), TRANSITIVE_PART_OF, limits=limits)
    g = KnowledgeGraph.open(connect(db), Expansion())  # still there, unchanged
    assert (g.version, len(g)) == (version, 300)
