"""Browsing a graph view (semps.graph.browse) against brute force over the same triples:
random graphs with IRIs, blank nodes, labels and an ontology that infers; every page walk
lists each subject once in name order, every search keeps exactly the subjects whose name or
label holds the text, and a resource's pages laid end to end are all its triples, each
flagged asserted exactly when it was inserted."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from semps.graph.browse import LABELS, Resources, describe
from semps.graph.graph import KnowledgeGraph
from semps.ontology import compile_axioms
from semps.terms import RDFS, Literal, n3

EX = "http://ex.org/"
NODES = [EX + "Alpha", EX + "beta", EX + "Gamma-1", "_:b1", "_:b2", EX + "d\u00e9j\u00e0"]
PROPS = [EX + "p", EX + "q", EX + "sub"]
ONTOLOGY = compile_axioms([(EX + "sub", RDFS + "subPropertyOf", EX + "p")])

triple = st.tuples(st.sampled_from(NODES), st.sampled_from(PROPS), st.sampled_from(NODES))
label = st.tuples(
    st.sampled_from(NODES),
    st.just(LABELS[0]),
    st.sampled_from(["Pump 1", "pump 2", "Fan", "ALPHA unit"]).map(Literal),
)
graphs = st.lists(st.one_of(triple, label), min_size=0, max_size=30)


def _graph(triples: list[tuple[str, str, object]]) -> KnowledgeGraph:
    g = KnowledgeGraph(ONTOLOGY)
    g.insert(triples)  # type: ignore[arg-type]
    return g


def _closure(g: KnowledgeGraph) -> list[tuple[object, object, object]]:
    return list(g.view.term_triples())


def _labels(closure: list[tuple[object, object, object]], s: object) -> str | None:
    found = [o.lexical for x, p, o in closure if x == s and p == LABELS[0]]  # type: ignore[attr-defined]
    return min(found) if found else None


@settings(max_examples=80, deadline=None)
@given(graphs, st.integers(1, 4), st.sampled_from(["", "a", "PUMP", "-1", "ex.org/b", "_:"]))
def test_pages_and_searches_agree_with_brute_force(
    triples: list[tuple[str, str, object]], limit: int, q: str
) -> None:
    g = _graph(triples)
    closure = _closure(g)
    index = Resources(g.view)
    subjects = sorted({str(s) for s, _, _ in closure})
    wanted = [
        s
        for s in subjects
        if q.lower() in s.lower() or q.lower() in (_labels(closure, s) or "").lower()
    ]
    walked, after = [], None
    while True:
        page = index.page(q, after, limit)
        assert page["total"] == len(wanted)
        items = page["items"]
        assert isinstance(items, list) and len(items) <= limit
        walked.extend(items)
        after = page["next"]  # type: ignore[assignment]
        if after is None:
            break
    assert [i["iri"] for i in walked] == wanted
    asserted = {(str(s), p, o) for s, p, o in triples}
    for item in walked:
        s = item["iri"]
        assert item["triples"] == sum(1 for x, _, _ in closure if x == s)
        assert item["asserted"] == sum(1 for x, p, o in asserted if x == s)
        assert item["label"] == _labels(closure, s)


@settings(max_examples=80, deadline=None)
@given(graphs, st.sampled_from(NODES), st.integers(1, 3))
def test_a_resource_s_pages_are_all_its_triples(
    triples: list[tuple[str, str, object]], node: str, limit: int
) -> None:
    g = _graph(triples)
    closure = _closure(g)
    asserted = {(s, p, o) for s, p, o in triples}
    out, into, offset = [], [], 0
    while True:
        doc = describe(g.view, node, limit, offset)
        got_out, got_in = doc["outgoing"], doc["incoming"]
        assert isinstance(got_out, list) and isinstance(got_in, list)
        if not got_out and not got_in:
            break
        out.extend(got_out)
        into.extend(got_in)
        offset += limit
    wanted_out = Counter((n3(p), n3(o), (s, p, o) in asserted) for s, p, o in closure if s == node)
    wanted_in = Counter((n3(s), n3(p), (s, p, o) in asserted) for s, p, o in closure if o == node)
    assert Counter((t["predicate"], t["object"], t["asserted"]) for t in out) == wanted_out
    assert Counter((t["subject"], t["predicate"], t["asserted"]) for t in into) == wanted_in
    assert doc["outgoing_total"] == len(out) and doc["incoming_total"] == len(into)
