"""Hierarchies (subClassOf, subPropertyOf, ...) as graphs: their depth and their closure,
in time linear in the graph plus what the closure holds.

The graph's strongly connected components (a cycle's members are equivalent) are found once
(Tarjan's algorithm, without recursion); a component's ancestors are its members and its
parents' ancestors, made once per component from the parents' (already made: Tarjan emits a
component after every component it reaches) and shared by its members. Walking each node's
ancestors from scratch, as before, cost a chain of n links n²/2 steps; and a depth (the
longest chain of components) is found before any of that, so a chain too deep to compile is
refused in linear time.

Example:
    >>> up = {"c": {"b"}, "b": {"a"}, "a": {"b"}}
    >>> sorted(ancestors(up)["c"]), depth(up)
    (['a', 'b', 'c'], (2, 'c'))
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Set
from typing import TypeVar

from semps.ontology.budget import Meter

__all__ = ["ancestors", "components", "depth", "discard"]

N = TypeVar("N", bound=Hashable)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)


def discard(index: dict[K, set[V]], key: K, value: V) -> None:
    """Take ``value`` out of ``index[key]`` (present), dropping ``key`` once its set is
    empty: an index of edges (or pairs) keeps no empty entries."""
    found = index[key]
    found.discard(value)
    if not found:
        del index[key]


def components(edges: Mapping[N, Set[N]]) -> tuple[dict[N, int], list[list[N]]]:
    """The strongly connected components of ``edges`` (node -> its successors): each
    node's component number, and the components, each after every component it reaches."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    on_stack: set[N] = set()
    comp_of: dict[N, int] = {}
    comps: list[list[N]] = []
    counter = 0
    for root in list(edges):
        if root in index:
            continue
        work: list[tuple[N, list[N]]] = []
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work.append((root, list(edges.get(root, ()))))
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, list(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members: list[N] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp_of[member] = len(comps)
                    members.append(member)
                    if member == node:
                        break
                comps.append(members)
    return comp_of, comps


def depth(edges: Mapping[N, Set[N]]) -> tuple[int, str]:
    """The most components on one path of ``edges`` (a node alone: 1), and a node at the
    bottom of such a path, as text (``""`` for no edges)."""
    comp_of, comps = components(edges)
    level = [0] * len(comps)
    deepest = (0, "")
    for number, members in enumerate(comps):  # successors' components come first
        above = 0
        for member in members:
            for nxt in edges.get(member, ()):
                other = comp_of[nxt]
                if other != number:
                    above = max(above, level[other])
        level[number] = above + 1
        if level[number] > deepest[0]:
            deepest = (level[number], str(members[0]))
    return deepest


def ancestors(
    edges: Mapping[N, Set[N]], meter: Meter | None = None, keys: Set[N] | None = None
) -> dict[N, frozenset[N]]:
    """Each node of ``keys`` (default: every node with successors) -> itself and every node
    it reaches. Members of one component share one set. ``meter`` counts each set's size
    once per key it is given to (``max_ontology_rules``) and the unions' work."""
    meter = meter or Meter()
    wanted = set(edges) if keys is None else set(keys)
    comp_of, comps = components(edges)
    reach: list[frozenset[N]] = []
    out: dict[N, frozenset[N]] = {}
    for number, members in enumerate(comps):
        found: set[N] = set(members)
        for member in members:
            for nxt in edges.get(member, ()):
                other = comp_of[nxt]
                if other != number:
                    meter.work(len(reach[other]))
                    found |= reach[other]
        shared = frozenset(found)
        reach.append(shared)
        given = [m for m in members if m in wanted]
        if given:
            meter.rules(len(shared) * len(given))
            for member in given:
                out[member] = shared
    return out
