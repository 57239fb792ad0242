"""The console's ontology view (levels, search, axiom pages), checked against rdflib reading
the same file and against brute force over the view's inputs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS
from semps_test_support import WORKLOADS

from semps.api.console.namespaces import namespace_of, suggest_prefixes
from semps.api.console.tree import OntologyView, ViewCache, ontology_view
from semps.cli.demo import demo_dir
from semps.ontology.store import OntologyStore
from semps.terms import XSD_STRING, Literal

UNIV_BENCH = demo_dir() / "univ-bench.owl"
BRICK = WORKLOADS / "brick-a" / "ontology.owl"
EX = "http://ex/"
SUB = str(RDFS.subClassOf)


def _parents(path: Path) -> tuple[rdflib.Graph, dict[str, dict[str, set[str]]]]:
    """rdflib's direct named parents of each class and property (the oracle)."""
    graph = rdflib.Graph().parse(path, format="xml")
    parents: dict[str, dict[str, set[str]]] = {"classes": defaultdict(set), "properties": {}}
    parents["properties"] = defaultdict(set)
    for tree, predicate in (("classes", RDFS.subClassOf), ("properties", RDFS.subPropertyOf)):
        for s, o in graph.subject_objects(predicate):
            if isinstance(s, rdflib.URIRef) and isinstance(o, rdflib.URIRef) and s != o:
                parents[tree][str(s)].add(str(o))
    return graph, parents


def _view_of(path: Path) -> OntologyView:
    store = OntologyStore()
    try:
        store.load(path.read_bytes(), format="application/rdf+xml")
        return ontology_view(store.triples(), store.version)
    finally:
        store.close()


def _walk(view: OntologyView, tree: str, page: int) -> dict[str, set[str]]:
    """Every (entity, parent) the levels show, expanding every entity once, page by page:
    what a user clicking through the whole tree would see."""
    shown: dict[str, set[str]] = defaultdict(set)
    todo: list[str | None] = [None]
    expanded: set[str | None] = set()
    while todo:
        parent = todo.pop()
        if parent in expanded:
            continue
        expanded.add(parent)
        offset, total = 0, 1
        while offset < total:
            answer = view.level(tree, parent, offset, page)  # type: ignore[arg-type]
            total = int(answer["total"])  # type: ignore[call-overload]
            items = answer["items"]
            assert isinstance(items, list) and len(items) <= page
            for item in items:
                shown[item["iri"]].add(parent or "")
                if item["children"]:
                    todo.append(item["iri"])
            offset += page
    return shown


@pytest.mark.parametrize("path", [UNIV_BENCH, BRICK], ids=["univ-bench", "brick-a"])
def test_expanding_every_level_shows_each_entity_under_each_named_parent(path: Path) -> None:
    graph, parents = _parents(path)
    view = _view_of(path)
    for tree in ("classes", "properties"):
        shown = _walk(view, tree, page=7)
        expected = {iri: ps for iri, ps in parents[tree].items()}
        under = {iri: ps - {""} for iri, ps in shown.items() if ps - {""}}
        assert under == expected
        roots = {iri for iri, ps in shown.items() if "" in ps}
        assert roots == {iri for iri in shown if iri not in expected}
    declared = {str(c) for c in graph.subjects(RDF.type, OWL.Class) if isinstance(c, rdflib.URIRef)}
    assert declared <= set(view.classes.entities)


def test_a_cycle_no_root_reaches_is_entered_through_one_of_its_classes() -> None:
    triples = [(EX + "A", SUB, EX + "B"), (EX + "B", SUB, EX + "A"), (EX + "C", SUB, EX + "D")]
    view = ontology_view(triples, version=1)
    roots = [item["iri"] for item in view.level("classes", None, 0, 10)["items"]]  # type: ignore[index]
    assert roots == [EX + "D", EX + "A"]
    assert set(_walk(view, "classes", page=1)) == {EX + c for c in "ABCD"}


def test_a_page_holding_a_focus_is_the_one_answered() -> None:
    triples = [(EX + f"C{i:03}", SUB, EX + "Top") for i in range(250)]
    view = ontology_view(triples, version=1)
    page = view.level("classes", EX + "Top", 0, 100, focus=EX + "C234")
    assert (page["offset"], page["total"]) == (200, 250)
    assert EX + "C234" in [item["iri"] for item in page["items"]]  # type: ignore[attr-defined]


def test_search_finds_by_iri_or_label_substring_best_first_with_a_path_from_a_root() -> None:
    view = _view_of(BRICK)
    entities = view.classes.entities
    for text in ("air_handling", "AHU", "brick#Zone", "Temperature Sensor", "zzz-none"):
        needle = text.lower()
        brute = {
            iri
            for iri, e in entities.items()
            if needle in iri.lower() or needle in (e.label or "").lower()
        }
        found = view.search("classes", text, limit=1000)
        hits = found["items"]
        assert isinstance(hits, list)
        assert found["total"] == len(brute) == len(hits)
        assert {h["iri"] for h in hits} == brute
        for hit in hits:  # the path: from a root, each the parent of the next, to a parent
            path = hit["path"]
            assert not path or not entities[path[0]].parents or path[0] in view.classes.roots
            for parent, child in zip(path, [*path[1:], hit["iri"]], strict=True):
                assert parent in entities[child].parents
    ahu = view.search("classes", "ahu", limit=3)["items"]
    assert ahu[0]["iri"] == "https://brickschema.org/schema/Brick#AHU"  # type: ignore[index]


def test_axiom_pages_cover_each_named_axiom_once_and_filter_by_text() -> None:
    graph, parents = _parents(UNIV_BENCH)
    view = _view_of(UNIV_BENCH)
    seen: list[tuple[str, str, str]] = []
    offset, total = 0, 1
    while offset < total:
        page = view.axiom_page("", offset, 9)
        total = int(page["total"])  # type: ignore[call-overload]
        seen += [(a["subject"], a["kind"], a["object"]) for a in page["items"]]  # type: ignore[attr-defined]
        offset += 9
    assert len(seen) == len(set(seen)) == total
    subclass = {(s, o) for s, k, o in seen if k == "subClassOf"}
    assert subclass == {(s, o) for s, os in parents["classes"].items() for o in os}
    inverse = {(str(s), str(o)) for s, o in graph.subject_objects(OWL.inverseOf)}
    assert {(s, o) for s, k, o in seen if k == "inverseOf"} == inverse
    chair = view.axiom_page("chair", 0, 100)["items"]
    assert chair and all("chair" in "".join(a.values()).lower() for a in chair)  # type: ignore[union-attr]


def test_labels_and_characteristics_are_carried_and_blank_nodes_left_out() -> None:
    triples = [
        (EX + "Grad", SUB, EX + "Student"),
        (EX + "Grad", SUB, "_:restriction"),
        (EX + "Grad", str(RDFS.label), Literal("<b>Graduate</b>", XSD_STRING)),
        (EX + "knows", str(RDF.type), str(OWL.SymmetricProperty)),
        (EX + "knows", str(RDF.type), str(OWL.ObjectProperty)),
        ("_:restriction", str(OWL.onProperty), EX + "knows"),
    ]
    view = ontology_view(triples, version=7)
    assert view.level("classes", EX + "Student", 0, 10)["items"] == [
        {"iri": EX + "Grad", "label": "<b>Graduate</b>", "children": 0, "parents": 1}
    ]
    assert view.level("properties", None, 0, 10)["items"] == [
        {
            "iri": EX + "knows",
            "label": None,
            "children": 0,
            "parents": 0,
            "kinds": ["object"],
            "characteristics": ["symmetric"],
        }
    ]
    assert view.summary()["classes"] == 2 and view.summary()["version"] == 7
    assert view.axiom_page("", 0, 10)["items"] == [
        {"subject": EX + "Grad", "kind": "subClassOf", "object": EX + "Student"}
    ]


def test_the_view_is_built_once_per_ontology_version() -> None:
    store = OntologyStore()
    try:
        cache = ViewCache()
        store.add_axiom("subClassOf", EX + "A", EX + "B")
        first = cache.get(store)
        assert cache.get(store) is first
        store.add_axiom("subClassOf", EX + "C", EX + "B")
        second = cache.get(store)
        assert second is not first and second.version == store.version
        assert second.level("classes", EX + "B", 0, 10)["total"] == 2
    finally:
        store.close()


def test_the_ontologys_namespaces_get_distinct_prefixes_from_their_paths() -> None:
    view = _view_of(BRICK)
    names = {n["namespace"]: n["prefix"] for n in view.summary()["namespaces"]}  # type: ignore[attr-defined]
    assert names["https://brickschema.org/schema/Brick#"] == "brick"
    assert names["https://brickschema.org/schema/Brick/ref#"] == "ref"
    assert len(set(names.values())) == len(names)
    assert namespace_of("https://w3id.org/rec#Room") == "https://w3id.org/rec#"
    assert suggest_prefixes(["http://ex.org/2020#", "http://ex.com/", "http://schema.org/"]) == {
        "http://ex.org/2020#": "ex",
        "http://ex.com/": "ex2",
        "http://schema.org/": None,
    }
