"""A view's snapshot (semps.graph.view.GraphView.snapshot) is what reads run on while the
graph goes on being edited: whatever edits follow (small ones into the overlay, large ones
merged into new arrays, flags raised and cleared, an ontology change), the snapshot holds
the triples it held when taken. The oracle is a plain set of the triples taken at the same
moment."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from semps._types import Triple
from semps.graph.graph import KnowledgeGraph
from semps.graph.view import GraphView
from semps.ontology import compile_axioms

P, Q = "http://ex/p", "http://ex/q"


def node(i: int) -> str:
    return f"http://ex/n{i}"


def everything(view: GraphView) -> set[tuple[Triple, bool]]:
    asserted = set(view.term_triples(asserted_only=True))
    return {(t, t in asserted) for t in view.term_triples()}


edits = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "load"]),
        st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=30),
    ),
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(before=edits, after=edits)
def test_a_snapshot_keeps_its_triples_whatever_edits_follow(before: list, after: list) -> None:  # type: ignore[type-arg]
    g = KnowledgeGraph()

    def run(steps: list) -> None:  # type: ignore[type-arg]
        for kind, pairs in steps:
            triples = [(node(s), P, node(o)) for s, o in pairs]
            if kind == "insert":
                g.insert(triples)
            elif kind == "delete":
                g.delete(triples)
            else:  # a bulk replace: the large path, new arrays
                g.load(triples * 1, replace=True)

    run(before)
    snap = g.view.snapshot()
    held, version = everything(snap), snap.version
    run(after)
    assert everything(snap) == held
    assert snap.version == version


def test_a_large_change_of_flags_only_leaves_the_snapshot_s_flags() -> None:
    # p is a sub-property of q: every (a q b) is inferred. Asserting 5,000 of them changes
    # only q's flags, merged at once into new arrays; the old flags array, which the
    # snapshot shares, must not be written in place.
    subproperty = "http://www.w3.org/2000/01/rdf-schema#subPropertyOf"
    g = KnowledgeGraph(compile_axioms([(P, subproperty, Q)]))
    g.load([(node(i), P, node(i + 1)) for i in range(5000)])
    snap = g.view.snapshot()
    held = everything(snap)
    assert ((node(0), Q, node(1)), False) in held
    g.load([(node(i), Q, node(i + 1)) for i in range(5000)])
    assert ((node(0), Q, node(1)), True) in everything(g.view)
    assert everything(snap) == held
