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
broken.

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

from semps.ontology.budget import Meter
from semps.ontology.hierarchy import ancestors

__all__ = ["Reach"]


class Reach:
    """Edges (node -> the nodes directly above it) and each node's closure (itself and
    every node it reaches), kept together (see the module docstring). ``meter`` counts the
    unions' work (``ontology_timeout``); the rule entries the closure holds are the
    caller's to count."""

    def __init__(self, meter: Meter | None = None) -> None:
        self.up: dict[Hashable, set[Hashable]] = {}
        self.down: dict[Hashable, set[Hashable]] = {}
        self._reach: dict[Hashable, frozenset[Hashable]] = {}
        self.meter = meter or Meter()

    @classmethod
    def of(cls, edges: Mapping[Hashable, Set[Hashable]], meter: Meter | None = None) -> Reach:
        """The closure of ``edges``, computed once (linear in the hierarchy plus the
        closure's size)."""
        made = cls(meter)
        for a, above in edges.items():
            made.up.setdefault(a, set()).update(above)
            for b in above:
                made.down.setdefault(b, set()).add(a)
        nodes = set(made.up) | set(made.down)
        made._reach = dict(ancestors(made.up, Meter(made.meter.budget), nodes))
        return made

    def above(self, node: Hashable) -> frozenset[Hashable]:
        """``node`` and every node it reaches."""
        return self._reach.get(node, frozenset((node,)))

    def table(self, keys: Iterable[Hashable] | None = None) -> dict[Hashable, frozenset[Hashable]]:
        """Each of ``keys`` (default: every node with an edge up) -> what it reaches."""
        wanted = self.up if keys is None else keys
        return {k: self.above(k) for k in wanted}

    def edges(self) -> set[tuple[Hashable, Hashable]]:
        """Every edge ``(a, b)``."""
        return {(a, b) for a, above in self.up.items() for b in above}

    def sync(self, edges: Mapping[Hashable, Set[Hashable]]) -> None:
        """Make the edges ``edges`` (the ones missing added, the ones gone removed): the
        work is that of the difference, plus a pass over the edges to find it."""
        now = {(a, b) for a, above in edges.items() for b in above}
        self.meter.work(len(now))
        for a, b in sorted(self.edges() - now, key=repr):
            self.remove(a, b)
        for a, b in sorted(now - self.edges(), key=repr):
            self.add(a, b)

    def _below(self, node: Hashable) -> set[Hashable]:
        """``node`` and every node that reaches it (walking the edges down)."""
        seen, todo = {node}, [node]
        while todo:
            for lower in self.down.get(todo.pop(), ()):
                if lower not in seen:
                    seen.add(lower)
                    todo.append(lower)
        self.meter.work(len(seen))
        return seen

    def add(self, a: Hashable, b: Hashable) -> None:
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

    def remove(self, a: Hashable, b: Hashable) -> None:
        """Remove the edge ``a -> b``; the closures of the nodes that reached ``a`` are
        recomputed from the remaining edges (no other closure can change)."""
        above = self.up.get(a)
        if above is None or b not in above:
            return
        above.discard(b)
        if not above:
            del self.up[a]
        lower = self.down[b]
        lower.discard(a)
        if not lower:
            del self.down[b]
        affected = self._below(a)
        # Inside the affected part, edges as they are; an edge leaving it ends at a node
        # whose closure is unchanged: that node stands for its closure, as a leaf.
        inside: dict[Hashable, set[Hashable]] = {}
        outside: dict[Hashable, set[Hashable]] = {}
        for node in affected:
            for higher in self.up.get(node, ()):
                (inside if higher in affected else outside).setdefault(node, set()).add(higher)
            inside.setdefault(node, set())
        fresh = ancestors(inside, Meter(self.meter.budget), affected)
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
