"""A hierarchy's closure kept up to date edge by edge: what each node reaches (itself and
every node above it), after each edge added or removed, without recomputing the whole.

- **Adding** ``a -> b``: the nodes that reach ``a`` (found by walking the edges down from
  ``a``) each gain what ``b`` reaches; nothing else changes.
- **Removing** ``a -> b`` (delete and re-derive, on the affected part only): only the nodes
  that reached ``a`` can lose anything, as only their paths may have used the edge. Their
  closures are recomputed from the remaining edges (:func:`~semps.ontology.hierarchy.ancestors`
  on the affected nodes, their cycles included), taking the unchanged closures of the
  nodes outside as they are.

A cycle's members reach each other (they are equivalent), however the cycle was made or
broken. A bulk change (:meth:`Reach.sync` to edges that differ by more than
:data:`REBUILD_AT` edges and an eighth of them) closes the hierarchy again from scratch, in
linear time, as each edge added one by one may cost up to the closure's size.

Example:
    >>> r = Reach()
    >>> r.add("c", "b"); r.add("b", "a"); r.add("a", "b")
    >>> sorted(r.above("c"))
    ['a', 'b', 'c']
    >>> r.remove("a", "b"); sorted(r.above("a")), sorted(r.above("c"))
    (['a'], ['a', 'b', 'c'])
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Set
from typing import Generic, TypeVar

from semps.ontology.budget import Meter
from semps.ontology.hierarchy import ancestors, discard

__all__ = ["Reach"]

N = TypeVar("N", bound=Hashable)

#: Edges changed at most by one :meth:`Reach.sync` made edge by edge (past it, and past an
#: eighth of the edges, the hierarchy is closed again from scratch).
REBUILD_AT = 64


class Reach(Generic[N]):
    """Edges (node -> the nodes directly above it) and each node's closure (itself and
    every node it reaches), kept together (see the module docstring). ``meter`` counts the
    unions' work (``ontology_timeout``, on its clock); the rule entries the closure holds
    are the caller's to count (as it reads the closures it keeps)."""

    def __init__(self, meter: Meter | None = None) -> None:
        self.up: dict[N, set[N]] = {}
        self.down: dict[N, set[N]] = {}
        self._reach: dict[N, frozenset[N]] = {}
        self.meter = meter or Meter()

    @classmethod
    def of(cls, edges: Mapping[N, Set[N]], meter: Meter | None = None) -> Reach[N]:
        """The closure of ``edges``, computed once (linear in the hierarchy plus the
        closure's size)."""
        made: Reach[N] = cls(meter)
        made._close(edges)
        return made

    def _close(self, edges: Mapping[N, Set[N]]) -> None:
        """Take ``edges`` and close them from scratch (what was held is dropped)."""
        self.up, self.down = {}, {}
        for a, above in edges.items():
            if above:
                self.up.setdefault(a, set()).update(above)
            for b in above:
                self.down.setdefault(b, set()).add(a)
        nodes = set(self.up) | set(self.down)
        self._reach = dict(ancestors(self.up, self.meter.timer(), nodes))

    def above(self, node: N) -> frozenset[N]:
        """``node`` and every node it reaches."""
        return self._reach.get(node, frozenset((node,)))

    def table(self, keys: Iterable[N] | None = None) -> dict[N, frozenset[N]]:
        """Each of ``keys`` (default: every node with an edge up) -> what it reaches."""
        wanted = self.up if keys is None else keys
        return {k: self.above(k) for k in wanted}

    def edges(self) -> set[tuple[N, N]]:
        """Every edge ``(a, b)``."""
        return {(a, b) for a, above in self.up.items() for b in above}

    def sync(self, edges: Mapping[N, Set[N]]) -> None:
        """Make the edges ``edges`` (the ones missing added, the ones gone removed): the
        work is that of the difference, plus a pass over the edges to find it. A
        difference of more than :data:`REBUILD_AT` edges and an eighth of the edges (a
        bulk load) closes ``edges`` from scratch instead, in linear time: edge by edge,
        each edge added may cost up to the closure's size."""
        now = {(a, b) for a, above in edges.items() for b in above}
        self.meter.work(len(now))
        have = self.edges()
        gone, new = have - now, now - have
        if len(gone) + len(new) > max(REBUILD_AT, len(now) // 8):
            self._close(edges)
            return
        for a, b in sorted(gone, key=repr):
            self.remove(a, b)
        for a, b in sorted(new, key=repr):
            self.add(a, b)

    def _below(self, node: N) -> set[N]:
        """``node`` and every node that reaches it (walking the edges down)."""
        seen, todo = {node}, [node]
        while todo:
            for lower in self.down.get(todo.pop(), ()):
                if lower not in seen:
                    seen.add(lower)
                    todo.append(lower)
        self.meter.work(len(seen))
        return seen

    def add(self, a: N, b: N) -> None:
        """Add the edge ``a -> b`` (``a`` is below ``b``)."""
        above = self.up.setdefault(a, set())
        if b in above:
            return
        above.add(b)
        self.down.setdefault(b, set()).add(a)
        gained = self.above(b)
        for node in self._below(a):
            mine = self.above(node)
            if not gained <= mine:
                self.meter.work(len(gained) + len(mine))
                self._reach[node] = mine | gained

    def remove(self, a: N, b: N) -> None:
        """Remove the edge ``a -> b``; the closures of the nodes that reached ``a`` are
        recomputed from the remaining edges (no other closure can change)."""
        above = self.up.get(a)
        if above is None or b not in above:
            return
        discard(self.up, a, b)
        discard(self.down, b, a)
        affected = self._below(a)
        # Inside the affected part, edges as they are; an edge leaving it ends at a node
        # whose closure is unchanged: that node stands for its closure, as a leaf.
        inside: dict[N, set[N]] = {}
        outside: dict[N, set[N]] = {}
        for node in affected:
            for higher in self.up.get(node, ()):
                (inside if higher in affected else outside).setdefault(node, set()).add(higher)
            inside.setdefault(node, set())
        fresh = ancestors(inside, self.meter.timer(), affected)
        for node in affected:
            found = set(fresh[node])
            for member in fresh[node]:
                for higher in outside.get(member, ()):
                    self.meter.work(len(self.above(higher)))
                    found |= self.above(higher)
            if len(found) == 1 and node not in self.up and node not in self.down:
                self._reach.pop(node, None)
            else:
                self._reach[node] = frozenset(found)
