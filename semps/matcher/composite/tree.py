"""The Advanced Event Tree: one shared tree of composite-event detectors.

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

The structure lives here; the delivery loop is compiled (:mod:`._kernel`) and runs over
arrays: node ids, parent lists in CSR form, and the detection state. Constituents are kept
per occurrence id on this side, and only while some status still refers to them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from semps.errors import CompositeDefinitionError
from semps.matcher.composite import _kernel as k
from semps.matcher.composite.language import Definition
from semps.matcher.composite.nodes import (
    Constituents,
    Detections,
    IntArray,
    Name,
    Node,
    grown,
    object_array,
)

#: The first size of the detection log and of the monitored cells (they grow as needed; a
#: run that fills one stops, grows it and resumes: see :func:`._kernel.run_arrivals`).
ROOM = 64

_CODES = {"or": k.OR, "and": k.AND, "then": k.THEN, "all": k.ALL, "times": k.TIMES, "no": k.NO}


class EventTree:
    """The shared tree of all composite definitions.

    Args:
        constituents: keep each detection's constituents (the broker needs them; the CLI
            and benchmarks that only want names can turn it off).
    """

    def __init__(self, constituents: bool = True) -> None:
        self.nodes: dict[Name, Node] = {}
        self._track = constituents
        #: Whether the last run stopped at its detection limit (see :meth:`occur_many`).
        self.truncated = False
        self._free: list[int] = []
        self._names: list[Name | None] = []
        self._dirty = True
        cap = 16
        self._code = np.full(cap, -1, dtype=np.int64)
        self._within = np.full(cap, np.inf)
        self._times = np.zeros(cap, dtype=np.int64)
        self._st_set = np.zeros((cap, 2), dtype=np.bool_)
        self._st_time = np.zeros((cap, 2))
        self._st_occ = np.zeros((cap, 2), dtype=np.int64)
        self._count = np.zeros(cap, dtype=np.int64)
        self._mon_head = np.full(cap, -1, dtype=np.int64)
        self._mon_tail = np.full(cap, -1, dtype=np.int64)
        self._cell_occ = np.zeros(ROOM, dtype=np.int64)
        self._cell_next = np.zeros(ROOM, dtype=np.int64)
        self._scal = np.array([0, -1, 0, 0, 0], dtype=np.int64)  # see _kernel's slots
        self._cons: dict[int, Constituents] = {}
        self._live_after_gc = 0
        self._par_off = self._par_node = self._par_role = np.zeros(1, dtype=np.int64)
        self._par_gated = np.zeros(0, dtype=np.bool_)
        self._ids: dict[Name, int] = {}
        self._per_node = (self._code, self._within, self._times)
        self._name_array = np.array([], dtype=object)
        e = np.empty
        self._stack = (e(1, np.int64), e(1, np.int64), e(1, np.int64))
        # detections' arrival, node, occurrence, part offsets; parts (reused, grown)
        self._log = [e(ROOM, np.int64), e(ROOM, np.int64), e(ROOM, np.int64), e(ROOM + 1, np.int64)]
        self._parts = e(2 * ROOM, np.int64)

    # --- structure -------------------------------------------------------------------

    def composites(self) -> list[Name]:
        """The defined composite names, in definition order."""
        return [n.name for n in self.nodes.values() if n.definition is not None]

    def primitives(self) -> set[Name]:
        return {n.name for n in self.nodes.values() if n.definition is None}

    def define(
        self, definitions: list[Definition], key: Callable[[str], Name] = lambda name: name
    ) -> None:
        """Add checked definitions (see :func:`parse_definitions`), all or none: a definition
        the tree cannot hold undoes those added before it. ``key`` gives the node name of
        each event name (default: itself).

        Raises:
            CompositeDefinitionError: a definition cannot be held (it names where).
        """
        added: list[Name] = []
        try:
            for d in definitions:
                self._define(d, key)
                added.append(key(d.name))
        except (OverflowError, ValueError, KeyError) as exc:
            for name in reversed(added):
                self.drop(name)
            d = definitions[len(added)]
            msg = f"definition of {d.name!r} is refused: {exc}"
            raise CompositeDefinitionError(msg, line=d.line, column=d.column) from exc
        finally:
            self._dirty = True

    def _define(self, d: Definition, key: Callable[[str], Name]) -> None:
        code = _CODES[d.op]
        within = np.inf if d.within is None else float(d.within)
        times = np.int64(d.n)  # OverflowError before any node is made
        name = key(d.name)
        if name in self.nodes:
            msg = f"event {d.name!r} is already defined"
            raise ValueError(msg)
        node = self._new_node(name, d)
        node.operands = tuple(key(o) for o in d.operands)
        self._code[node.id] = code
        self._within[node.id] = within
        self._times[node.id] = times
        gated_from = 1 if code in (k.THEN, k.ALL, k.TIMES, k.NO) else 2
        for role, operand in enumerate(node.operands):
            child = self.nodes.get(operand) or self._new_node(operand, None)
            child.parents.append((node, role, role >= gated_from))

    def drop(self, name: Name) -> None:
        """Remove a composite; shared nodes nobody uses any more are freed."""
        node = self.nodes.get(name)
        if node is None or node.definition is None:
            msg = f"no composite event {name!r}"
            raise CompositeDefinitionError(msg)
        if node.parents:
            users = ", ".join(sorted({str(p.name) for p, _, _ in node.parents}))
            msg = f"composite event {name!r} is used by {users}; drop those first"
            raise CompositeDefinitionError(msg)
        self._free_node(node)
        for operand in node.operands:
            child = self.nodes[operand]
            child.parents = [link for link in child.parents if link[0] is not node]
            if child.definition is None and not child.parents:
                self._free_node(child)
        self._dirty = True

    def _new_node(self, name: Name, definition: Definition | None) -> Node:
        if self._free:
            nid = self._free.pop()
            self._names[nid] = name
        else:
            nid = len(self._names)
            self._names.append(name)
            if nid >= len(self._code):
                self._grow(2 * len(self._code))
        self._reset(nid)
        self._code[nid] = -1
        node = self.nodes[name] = Node(name, nid, definition)
        return node

    def _free_node(self, node: Node) -> None:
        del self.nodes[node.name]
        self._reset(node.id)
        self._names[node.id] = None
        self._free.append(node.id)

    def _reset(self, nid: int) -> None:
        self._st_set[nid] = False
        self._count[nid] = 0
        k.clear_monitored(nid, self._mon_head, self._mon_tail, self._cell_next, self._scal)

    def _grow(self, cap: int) -> None:
        self._code, self._within = grown(self._code, cap, -1), grown(self._within, cap, np.inf)
        self._times, self._count = grown(self._times, cap, 0), grown(self._count, cap, 0)
        self._st_set = grown(self._st_set, cap, False)
        self._st_time, self._st_occ = grown(self._st_time, cap, 0.0), grown(self._st_occ, cap, 0)
        self._mon_head = grown(self._mon_head, cap, -1)
        self._mon_tail = grown(self._mon_tail, cap, -1)

    def _compile(self) -> None:
        """The parent lists as CSR arrays (after any change of the structure)."""
        n = len(self._names)
        off = np.zeros(n + 1, dtype=np.int64)
        for node in self.nodes.values():
            off[node.id + 1] = len(node.parents)
        np.cumsum(off, out=off)
        total = int(off[-1])
        par_node = np.empty(total, dtype=np.int64)
        par_role = np.empty(total, dtype=np.int64)
        par_gated = np.empty(total, dtype=np.bool_)
        for node in self.nodes.values():
            at = int(off[node.id])
            for i, (parent, role, gated) in enumerate(node.parents):
                par_node[at + i], par_role[at + i], par_gated[at + i] = parent.id, role, gated
        self._par_off, self._par_node, self._par_role = off, par_node, par_role
        self._par_gated = par_gated
        self._ids = {name: node.id for name, node in self.nodes.items()}
        n = len(self._names)
        self._per_node = (self._code[:n], self._within[:n], self._times[:n])
        self._name_array = object_array(self._names)
        self._stack = (
            np.empty(n + 1, np.int64),
            np.empty(n + 1, np.int64),
            np.empty(n + 1, np.int64),
        )
        self._dirty = False

    # --- detection -------------------------------------------------------------------

    def occur(self, name: Name, now: float, cons: Constituents) -> list[tuple[Name, Constituents]]:
        """An occurrence of ``name``: every detection it causes (with its constituents),
        in delivery order."""
        return self.occur_many([(name, now, cons)])[0]

    def occur_many(
        self, arrivals: Sequence[tuple[Name, float, Constituents]], limit: int | None = None
    ) -> list[list[tuple[Name, Constituents]]]:
        """Occurrences ``(name, time, constituents)`` in one compiled call (the broker hands
        over an event's matches at once): per arrival, what :meth:`occur` would return.

        With ``limit``, the run stops once it has made that many detections (shared
        definitions can multiply them: a chain of diamonds doubles them at each step);
        :attr:`truncated` says whether it did, and the detections past it are lost."""
        if self._dirty:
            self._compile()
        get = self._ids.get
        ids = [get(name, -1) for name, _, _ in arrivals]
        out: list[list[tuple[Name, Constituents]]] = [[] for _ in arrivals]
        self.truncated = False
        if max(ids, default=-1) < 0:
            return out
        first = self._next_occurrences(len(ids))
        if self._track:
            for i, (_, _, cons) in enumerate(arrivals):
                if ids[i] >= 0:
                    self._cons[first + i] = list(cons)
        log = self._run(
            np.array(ids, np.int64),
            np.array([now for _, now, _ in arrivals], np.float64),
            np.arange(first, first + len(ids), dtype=np.int64),
            limit,
        )
        found = self._constituents(log) if self._track else [(n, []) for n in log[1]]
        for i, item in zip(log[0].tolist(), found, strict=True):
            out[i].append(item)
        return out

    def run(self, names: Sequence[Name], times: Sequence[float] | None = None) -> Detections:
        """A batch of arrivals (``times`` defaults to the arrival index) in one compiled
        call; the detections by name (the arrivals carry no constituents)."""
        at, nodes = self.run_nodes(self.node_ids(names), times)
        return Detections(at, self._name_array[nodes].tolist())

    def node_ids(self, names: Sequence[Name]) -> IntArray:
        """The node id of each name (-1 for names no definition uses)."""
        if self._dirty:
            self._compile()
        ids: IntArray = np.fromiter(
            map(self._ids.get, names, repeat(-1)), np.int64, count=len(names)
        )
        return ids

    def node_names(self) -> npt.NDArray[np.object_]:
        """Node id -> name (valid until the structure changes)."""
        if self._dirty:
            self._compile()
        return self._name_array

    def run_nodes(
        self, ids: IntArray, times: Sequence[float] | npt.NDArray[np.float64] | None = None
    ) -> tuple[IntArray, IntArray]:
        """:meth:`run` over node ids (:meth:`node_ids`): the detections as (arrival index,
        node id) arrays, in delivery order; names come from :meth:`node_names`."""
        if self._dirty:
            self._compile()
        at = np.asarray(times if times is not None else np.arange(len(ids)), dtype=np.float64)
        first = self._next_occurrences(len(ids))
        log = self._run_raw(ids, at, np.arange(first, first + len(ids), dtype=np.int64))
        if self._track:
            for occ in (first + np.flatnonzero(ids >= 0)).tolist():
                self._cons[occ] = []
            self._constituents((log[0], self._name_array[log[1]].tolist(), *log[2:]))
        return log[0].copy(), log[1].copy()

    def _next_occurrences(self, n: int) -> int:
        first = int(self._scal[k.NEXT_OCC])
        self._scal[k.NEXT_OCC] = first + n
        return first

    def _run(
        self, ids: IntArray, at: npt.NDArray[np.float64], occ: IntArray, limit: int | None = None
    ) -> tuple[IntArray, list[Name], IntArray, IntArray, IntArray]:
        det_at, det_node, *rest = self._run_raw(ids, at, occ, limit)
        found: list[Name] = self._name_array[det_node].tolist()
        return (det_at, found, *rest)  # type: ignore[return-value]

    def _run_raw(
        self, ids: IntArray, at: npt.NDArray[np.float64], occ: IntArray, limit: int | None = None
    ) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
        """The compiled loop: detections as (arrival index, node, occurrence, part offsets,
        parts); without constituents, only the first two (the rest are not written). With
        ``limit``, it stops at the first pause for room once ``limit`` are made."""
        if self._dirty:
            self._compile()
        keep, nd = self._track, 0
        try:
            while True:
                det_at, det_node, det_occ, part_off = self._log
                nd = k.run_arrivals(
                    ids,
                    at,
                    occ,
                    self._par_off,
                    self._par_node,
                    self._par_role,
                    self._par_gated,
                    *self._per_node,
                    self._st_set,
                    self._st_time,
                    self._st_occ,
                    self._count,
                    self._mon_head,
                    self._mon_tail,
                    self._cell_occ,
                    self._cell_next,
                    self._scal,
                    *self._stack,
                    det_at,
                    det_node,
                    det_occ,
                    part_off,
                    self._parts,
                    nd,
                    keep,
                )
                if self._scal[k.SP] == 0:
                    break
                if limit is not None and nd >= limit:
                    self._scal[k.AT] = self._scal[k.SP] = 0  # the next run starts afresh
                    self.truncated = True
                    nd = limit
                    break
                self._make_room(nd)
        except BaseException:  # the next run starts afresh, not where this one stopped
            self._scal[k.AT] = self._scal[k.SP] = 0
            raise
        det_at, det_node, det_occ, part_off = self._log
        return det_at[:nd], det_node[:nd], det_occ[:nd], part_off[: nd + 1], self._parts

    def _make_room(self, nd: int) -> None:
        """Grow what an interrupted :func:`run_arrivals` stopped for (see its contract)."""
        keep, log = self._track, self._log
        written = 4 if keep else 2  # the log arrays the run writes (part_off: one more)
        if nd >= min(len(a) - (i == 3) for i, a in enumerate(log[:written])):
            for i in range(written):
                log[i] = grown(log[i], 2 * nd + ROOM + (i == 3))
        if not keep:
            return
        stk_pos = self._stack[1]
        parent = int(self._par_node[stk_pos[self._scal[k.SP] - 1]])
        need = int(log[3][nd]) + 2 + int(self._count[parent])
        if need > len(self._parts):
            self._parts = grown(self._parts, 2 * need)
        self._room_for_a_cell()

    def _room_for_a_cell(self) -> None:
        scal = self._scal
        if scal[k.FREE_CELL] < 0 and scal[k.USED_CELLS] >= len(self._cell_occ):
            size = 2 * len(self._cell_occ)
            self._cell_occ = grown(self._cell_occ, size)
            self._cell_next = grown(self._cell_next, size)

    def _constituents(
        self, log: tuple[IntArray, list[Name], IntArray, IntArray, IntArray]
    ) -> list[tuple[Name, Constituents]]:
        """Each detection's constituents: its parts' constituents, in order."""
        _, found, det_occ, part_off, parts = log
        store = self._cons
        off = part_off.tolist()
        flat = parts[: off[-1]].tolist()
        out = []
        for i, (name, occ) in enumerate(zip(found, det_occ.tolist(), strict=True)):
            cons: Constituents = []
            for p in flat[off[i] : off[i + 1]]:
                cons += store[p]
            store[occ] = cons
            out.append((name, cons))
        if len(store) > 2 * self._live_after_gc + 1024:
            self._collect()
        return out

    def _live(self) -> set[int]:
        """The occurrences some status or monitored list still refers to."""
        live = set(self._st_occ[self._st_set].tolist())
        cell_occ, cell_next = self._cell_occ, self._cell_next
        for head in self._mon_head[self._mon_head >= 0].tolist():
            cell = head
            while cell >= 0:
                live.add(int(cell_occ[cell]))
                cell = int(cell_next[cell])
        return live

    def _collect(self) -> None:
        live = self._live()
        self._cons = {occ: c for occ, c in self._cons.items() if occ in live}
        self._live_after_gc = len(self._cons)

    # --- persistence -----------------------------------------------------------------

    def state(self) -> dict[Name, Any]:
        """The pending statuses, counts and monitored occurrences (JSON-able values, by node
        name) of every composite that holds any: one that holds none is left out (the
        broker writes this after each event, and most composites hold nothing)."""
        n = len(self._names)
        busy = (
            self._st_set[:n].any(axis=1) | (self._count[:n] != 0) | (self._mon_head[:n] >= 0)
        ).tolist()
        out = {}
        for node in self.nodes.values():
            if node.definition is None or not busy[node.id]:
                continue
            x = node.id
            slots = 2 if self._code[x] == k.AND else 1
            pending = [
                (float(self._st_time[x, s]), self._cons.get(int(self._st_occ[x, s]), []))
                if self._st_set[x, s]
                else None
                for s in range(slots)
            ]
            monitored: Constituents = []
            cell = int(self._mon_head[x])
            while cell >= 0:
                monitored += self._cons.get(int(self._cell_occ[cell]), [])
                cell = int(self._cell_next[cell])
            out[node.name] = {
                "pending": pending,
                "count": int(self._count[x]),
                "monitored": monitored,
            }
        return out

    def restore(self, state: dict[Name, Any]) -> None:
        """Reload :meth:`state` (names no longer defined are ignored; composites it leaves
        out keep theirs: a fresh tree's, nothing)."""
        for name, saved in state.items():
            node = self.nodes.get(name)
            if node is None or node.definition is None:
                continue
            x = node.id
            self._reset(x)
            for s, status in enumerate(saved["pending"][:2]):
                if status is not None:
                    occ = self._next_occurrences(1)
                    self._cons[occ] = list(status[1])
                    self._st_set[x, s], self._st_time[x, s], self._st_occ[x, s] = (
                        True,
                        status[0],
                        occ,
                    )
            self._count[x] = int(saved["count"])
            if saved["monitored"]:  # one cell: a list never outgrows its count
                self._append_monitored(x, list(saved["monitored"]))

    def _append_monitored(self, x: int, cons: Constituents) -> None:
        occ = self._next_occurrences(1)
        self._cons[occ] = cons
        self._room_for_a_cell()
        k.push_monitored(
            x, occ, self._mon_head, self._mon_tail, self._cell_occ, self._cell_next, self._scal
        )


def warm() -> None:
    """Load (or compile) the tree's kernels now, on a throwaway tree: the first call of each
    in a process loads it from numba's cache (about half a second, holding the GIL), which
    must not happen while the broker holds its matchers' lock (every commit waits on it)."""
    tree = EventTree()
    tree.define([Definition("w", "all", ("a", "b", "c"))])  # clear_monitored
    tree.occur_many([("a", 0.0, []), ("b", 0.0, []), ("c", 0.0, [])])  # run_arrivals
    tree.restore({"w": {"pending": [None], "count": 1, "monitored": [{}]}})  # push_monitored
