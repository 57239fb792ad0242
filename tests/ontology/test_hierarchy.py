"""Hierarchies closed once per component, in linear time, against brute force: each node's
ancestors walked from scratch, the depth as the longest chain of distinct equivalence
classes, and the OWL 2 RL schema rules between restrictions applied pair by pair."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from semps.ontology.compile import compile_axioms
from semps.ontology.hierarchy import ancestors, depth
from semps.terms import OWL, RDFS

Edges = dict[int, set[int]]

graphs = st.dictionaries(
    st.integers(0, 14), st.sets(st.integers(0, 14), max_size=4), max_size=15
).map(lambda d: {k: set(v) for k, v in d.items()})


def reach(start: int, edges: Edges) -> set[int]:
    seen, todo = {start}, deque([start])
    while todo:
        for nxt in edges.get(todo.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def brute_depth(edges: Edges) -> int:
    nodes = set(edges) | {n for succ in edges.values() for n in succ}
    above = {n: reach(n, edges) for n in nodes}
    level: dict[int, int] = {}

    def of(n: int) -> int:  # strictly above: reachable, not reaching back
        if n not in level:
            level[n] = 1 + max((of(m) for m in above[n] if n not in above[m]), default=0)
        return level[n]

    return max((of(n) for n in nodes if edges), default=0)


@given(graphs)
@settings(max_examples=300, deadline=None)
def test_ancestors_are_what_each_node_reaches(edges: Edges) -> None:
    assert ancestors(edges) == {n: frozenset(reach(n, edges)) for n in edges}


@given(graphs)
@settings(max_examples=300, deadline=None)
def test_depth_is_the_longest_chain_of_equivalence_classes(edges: Edges) -> None:
    found, bottom = depth(edges)
    assert found == brute_depth(edges)
    assert (bottom == "") == (found == 0)


# -- the schema rules between restrictions, pair by pair (the compiler's earlier method) ----

CLASSES = [f"http://e/C{i}" for i in range(8)]
PROPS = [f"http://e/p{i}" for i in range(4)]
KINDS = {"svf": OWL + "someValuesFrom", "avf": OWL + "allValuesFrom", "hv": OWL + "hasValue"}


def brute_classes(triples: list[tuple[str, str, str]]) -> dict[str, frozenset[str]]:
    up: dict[str, set[str]] = {}
    sup: dict[str, set[str]] = {}
    for s, p, o in triples:
        if p == RDFS + "subClassOf":
            up.setdefault(s, set()).add(o)
        elif p == RDFS + "subPropertyOf":
            sup.setdefault(s, set()).add(o)
    restrictions = {k: [] for k in KINDS}  # type: dict[str, list[tuple[str, str, str]]]
    on = {s: o for s, p, o in triples if p == OWL + "onProperty"}
    for s, p, o in triples:
        for kind, predicate in KINDS.items():
            if p == predicate and s in on:
                restrictions[kind].append((s, on[s], o))

    def sub_prop(p1: str, p2: str) -> bool:
        return p2 in reach(p1, sup)  # type: ignore[arg-type]

    while True:
        classes = {c: frozenset(reach(c, up)) for c in up}  # type: ignore[arg-type]
        added = False
        for kind, items in restrictions.items():
            for r1, p1, y1 in items:
                for r2, p2, y2 in items:
                    if r1 == r2:
                        continue
                    if kind == "hv":
                        implied = y1 == y2 and sub_prop(p1, p2)
                    else:
                        below = y2 in classes.get(y1, {y1})
                        implied = (p1 == p2 and below) or (y1 == y2 and sub_prop(p1, p2))
                    low, high = (r2, r1) if kind == "avf" and p1 != p2 else (r1, r2)
                    if implied and high not in up.get(low, ()):
                        up.setdefault(low, set()).add(high)
                        added = True
        if not added:
            return classes


ontologies = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(CLASSES), st.just(RDFS + "subClassOf"), st.sampled_from(CLASSES)),
        st.tuples(st.sampled_from(PROPS), st.just(RDFS + "subPropertyOf"), st.sampled_from(PROPS)),
        st.tuples(
            st.integers(0, 9),
            st.sampled_from(sorted(KINDS)),
            st.sampled_from(PROPS),
            st.sampled_from(CLASSES[:5]),
            st.sampled_from(CLASSES),
            st.booleans(),
        ),
    ),
    max_size=25,
)


def expand(items: list[tuple[object, ...]]) -> list[tuple[str, str, str]]:
    """Restriction tuples (number, kind, property, value, class, above) as triples: the
    restriction is below (or above) ``class``."""
    out: list[tuple[str, str, str]] = []
    for item in items:
        if len(item) == 3:
            out.append(item)  # type: ignore[arg-type]
            continue
        number, kind, prop, value, cls, above = item
        node = f"_:r{number}"
        out += [(node, OWL + "onProperty", prop), (node, KINDS[kind], value)]  # type: ignore[index]
        out.append((cls, RDFS + "subClassOf", node) if above else (node, RDFS + "subClassOf", cls))  # type: ignore[arg-type]
    return list(dict.fromkeys(out))


@given(ontologies)
@settings(max_examples=300, deadline=None)
def test_the_class_closure_matches_the_rules_applied_pair_by_pair(
    items: list[tuple[object, ...]],
) -> None:
    triples = expand(items)
    # one value per restriction node, as in a real ontology (the first one wins)
    first: dict[tuple[str, str], str] = {}
    single = {OWL + "onProperty", *KINDS.values()}
    triples = [
        t for t in triples if t[1] not in single or first.setdefault((t[0], t[1]), t[2]) == t[2]
    ]
    assert compile_axioms(triples).classes == brute_classes(triples)
