"""The Advanced Event Tree (seed 003): one shared tree of composite-event detectors.

Nodes are indexed by event name; a node used by several composites is stored once and keeps
its parents (``activeComEvents`` / ``passiveComEvents`` in the seed) with the role it plays
for each, in the order the parents were defined. An occurrence is delivered to the parents
in that order; a detection is itself an occurrence, delivered to its own parents at once
(depth first) before the next parent of the original occurrence hears of it.

Per operator: ``and`` sets the child's status and detects when both are set (then resets
both); ``or`` detects on every occurrence; ``then``: the left child sets the left status
(repeats change nothing) and activates the right child, which detects only while activated,
then resets and deactivates; ``OP B in A, C``: A opens the interval (again while open: no
change), B counts while open, C (while open) closes it, detecting for ``all`` if the count
is > 0, for ``N times`` if it equals N, for ``no`` if it is 0, and resetting either way.
With ``within T``, a pending status or an open interval expires T after it was set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semps.errors import CompositeDefinitionError
from semps.matcher.composite.language import Definition

Constituents = list[dict[str, Any]]
Pending = tuple[float, Constituents] | None


#: Operator codes (the hot path compares small ints, not strings).
OR, AND, THEN, ALL, TIMES, NO = range(6)
_CODES = {"or": OR, "and": AND, "then": THEN, "all": ALL, "times": TIMES, "no": NO}


@dataclass(eq=False)
class Node:
    """An event in the tree: a primitive (``definition is None``) or a composite.

    ``parents`` lists ``(parent, role, gated)`` in the order the parents were defined;
    ``gated`` marks the roles that only count while the parent is open (``then``'s right
    child, a ternary's monitored and closing children): while the parent is closed they are
    the seed's passiveComEvents, skipped without a call.
    """

    name: str
    definition: Definition | None = None
    parents: list[tuple[Node, int, bool]] = field(default_factory=list)
    pending: list[Pending] = field(
        default_factory=list
    )  # and: 2 statuses; then: left; ternary: open
    count: int = 0
    monitored: Constituents = field(default_factory=list)
    code: int = OR
    within: float | None = None
    times: int = 0

    def __post_init__(self) -> None:
        d = self.definition
        if d is not None:
            self.code, self.within, self.times = _CODES[d.op], d.within, d.n

    def reset(self) -> None:
        self.pending = [None, None] if self.code == AND else [None]
        self.count = 0
        self.monitored = []

    def _expire(self, now: float) -> None:
        within = self.within
        for i, status in enumerate(self.pending):
            if status is not None and now - status[0] > within:  # type: ignore[operator]
                self.pending[i] = None
                if self.code >= ALL:
                    self.count, self.monitored = 0, []

    def deliver(self, role: int, now: float, cons: Constituents) -> Constituents | None:
        """Hand an occurrence of the child in ``role`` to this composite; the constituents
        of the detection it causes, if any."""
        code = self.code
        if code == OR:
            return list(cons)
        pending = self.pending
        within = self.within
        if within is not None:  # expire lazily, on the next delivery
            first = pending[0]
            if first is not None and now - first[0] > within:
                self._expire(now)
            elif code == AND and pending[1] is not None and now - pending[1][0] > within:
                self._expire(now)
            pending = self.pending
        if code == AND:
            if pending[role] is None:
                pending[role] = (now, list(cons))
            left, right = pending
            if left is not None and right is not None:
                self.pending = [None, None]
                return left[1] + right[1]
            return None
        opened = pending[0]
        if code == THEN:
            if role == 0:
                if opened is None:
                    pending[0] = (now, list(cons))
                return None
            if opened is None:
                return None
            pending[0] = None
            return opened[1] + list(cons)
        if role == 0:  # ternary: A opens (again while open: no change)
            if opened is None:
                pending[0] = (now, list(cons))
                self.count, self.monitored = 0, []
            return None
        if opened is None:
            return None
        if role == 1:
            self.count += 1
            self.monitored += cons
            return None
        count = self.count
        hit = count > 0 if code == ALL else count == self.times if code == TIMES else count == 0
        found = opened[1] + self.monitored + list(cons) if hit else None
        pending[0], self.count, self.monitored = None, 0, []
        return found


class EventTree:
    """The shared tree of all composite definitions."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}

    def composites(self) -> list[str]:
        """The defined composite names, in definition order."""
        return [n.name for n in self.nodes.values() if n.definition is not None]

    def primitives(self) -> set[str]:
        return {n.name for n in self.nodes.values() if n.definition is None}

    def define(self, definitions: list[Definition]) -> None:
        """Add checked definitions (see :func:`parse_definitions`)."""
        for d in definitions:
            node = Node(d.name, d)
            node.reset()
            gated_from = 1 if node.code in (THEN, ALL, TIMES, NO) else 2
            for role, operand in enumerate(d.operands):
                child = self.nodes.get(operand)
                if child is None:
                    child = self.nodes[operand] = Node(operand)
                child.parents.append((node, role, role >= gated_from))
            self.nodes[d.name] = node

    def drop(self, name: str) -> None:
        """Remove a composite; shared nodes nobody uses any more are freed."""
        node = self.nodes.get(name)
        if node is None or node.definition is None:
            msg = f"no composite event {name!r}"
            raise CompositeDefinitionError(msg)
        if node.parents:
            users = ", ".join(sorted({p.name for p, _, _ in node.parents}))
            msg = f"composite event {name!r} is used by {users}; drop those first"
            raise CompositeDefinitionError(msg)
        del self.nodes[name]
        for operand in node.definition.operands:
            child = self.nodes[operand]
            child.parents = [link for link in child.parents if link[0] is not node]
            if child.definition is None and not child.parents:
                del self.nodes[operand]

    def occur(self, name: str, now: float, cons: Constituents) -> list[tuple[str, Constituents]]:
        """An occurrence of ``name``: every detection it causes, in delivery order."""
        out: list[tuple[str, Constituents]] = []
        node = self.nodes.get(name)
        if node is not None:
            self._propagate(node, now, cons, out)
        return out

    def _propagate(
        self, node: Node, now: float, cons: Constituents, out: list[tuple[str, Constituents]]
    ) -> None:
        for parent, role, gated in node.parents:
            if gated and parent.pending[0] is None:
                continue  # passive: a closed parent ignores this role (and has nothing to expire)
            found = parent.deliver(role, now, cons)
            if found is not None:
                out.append((parent.name, found))
                self._propagate(parent, now, found, out)

    def state(self) -> dict[str, Any]:
        """Every composite's pending statuses, counts and monitored occurrences (JSON-able)."""
        return {
            n.name: {"pending": n.pending, "count": n.count, "monitored": n.monitored}
            for n in self.nodes.values()
            if n.definition is not None
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Reload :meth:`state` (names no longer defined are ignored)."""
        for name, saved in state.items():
            node = self.nodes.get(name)
            if node is None or node.definition is None:
                continue
            node.pending = [(p[0], p[1]) if p is not None else None for p in saved["pending"]]
            node.count = int(saved["count"])
            node.monitored = list(saved["monitored"])
