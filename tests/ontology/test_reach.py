"""The hierarchy closure kept edge by edge (semps.ontology.reach.Reach) against a brute-force
recompute after every step: random hierarchies (cycles, self-loops and equivalences, which
are two edges, included) under random sequences of edges added and removed."""

from __future__ import annotations

from collections.abc import Hashable

from hypothesis import given, settings
from hypothesis import strategies as st

from semps.ontology.compile import compile_axioms
from semps.ontology.reach import Reach
from semps.ontology.store import OntologyStore

NODES = 8


def brute(edges: set[tuple[int, int]], node: int) -> frozenset[Hashable]:
    """Every node reached from ``node`` (itself included), by search from scratch."""
    seen, todo = {node}, [node]
    while todo:
        here = todo.pop()
        for a, b in edges:
            if a == here and b not in seen:
                seen.add(b)
                todo.append(b)
    return frozenset(seen)


node = st.integers(0, NODES - 1)
steps = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "equivalent"]), node, node), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(start=st.sets(st.tuples(node, node), max_size=16), ops=steps)
def test_the_kept_closure_is_the_recomputed_one_after_every_step(
    start: set[tuple[int, int]], ops: list[tuple[str, int, int]]
) -> None:
    edges = set(start)
    up: dict[Hashable, set[Hashable]] = {}
    for a, b in edges:
        up.setdefault(a, set()).add(b)
    kept = Reach.of(up)
    for kind, a, b in ops:
        if kind == "add":
            kept.add(a, b)
            edges.add((a, b))
        elif kind == "equivalent":  # owl:equivalentClass: both ways
            kept.add(a, b)
            kept.add(b, a)
            edges |= {(a, b), (b, a)}
        else:
            # remove an edge present (when there is one), else a pair that may be absent
            a, b = sorted(edges)[(a * NODES + b) % len(edges)] if edges else (a, b)
            kept.remove(a, b)
            edges.discard((a, b))
        assert kept.edges() == edges
        for n in range(NODES):
            assert kept.above(n) == brute(edges, n), (kind, a, b, n)


def test_a_table_gives_each_node_with_an_edge_up_its_closure() -> None:
    kept = Reach.of({"c": {"b"}, "b": {"a"}})
    kept.add("a", "c")  # a cycle: the three are equivalent
    assert kept.table() == {n: frozenset("abc") for n in "abc"}
    kept.remove("b", "a")
    assert kept.table() == {"c": frozenset("bc"), "a": frozenset("abc")}


CLASSES = [f"http://ex/C{i}" for i in range(6)]
edit = st.tuples(
    st.sampled_from(["add", "remove"]),
    st.sampled_from(["subClassOf", "equivalentClass"]),
    st.sampled_from(CLASSES),
    st.sampled_from(CLASSES),
)


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(edit, max_size=25))
def test_a_store_s_class_closure_after_each_edit_is_a_fresh_compilation_s(
    edits: list[tuple[str, str, str, str]],
) -> None:
    """Each edit of an ontology store brings its kept class closure to the new axioms (the
    edges added and removed); the oracle is a compilation from scratch of the same axioms
    (every class's ancestors recomputed)."""
    store = OntologyStore()
    present: list[tuple[str, str, str]] = []
    for kind, axiom, sub, sup in edits:
        if kind == "add":
            store.add_axiom(axiom, sub, sup)
            present.append((axiom, sub, sup))
        elif present:  # one of the axioms there (the edit's classes pick which)
            gone = present.pop((CLASSES.index(sub) * 6 + CLASSES.index(sup)) % len(present))
            if gone not in present:  # (an axiom added twice is there once)
                store.remove_axiom(*gone)
        fresh = compile_axioms(list(store.triples()))
        assert store.expansion().classes == fresh.classes


WIDE = 20
wide_pair = st.tuples(st.integers(0, WIDE - 1), st.integers(0, WIDE - 1))


@settings(max_examples=100, deadline=None)
@given(start=st.sets(wide_pair, max_size=150), target=st.sets(wide_pair, min_size=80, max_size=150))
def test_synced_to_any_edges_the_closure_is_theirs(
    start: set[tuple[int, int]], target: set[tuple[int, int]]
) -> None:
    """Brought to other edges at once (edge by edge for a small difference, closed again
    from scratch past REBUILD_AT changed edges: a bulk load), the closure is theirs."""

    def grouped(edges: set[tuple[int, int]]) -> dict[Hashable, set[Hashable]]:
        up: dict[Hashable, set[Hashable]] = {}
        for a, b in edges:
            up.setdefault(a, set()).add(b)
        return up

    kept = Reach.of(grouped(start))
    kept.sync(grouped(target))
    assert kept.edges() == target
    for n in range(WIDE):
        assert kept.above(n) == brute(target, n)
    kept.add(0, 1)  # and it is kept in step from there
    assert all(kept.above(n) == brute(target | {(0, 1)}, n) for n in range(WIDE))
