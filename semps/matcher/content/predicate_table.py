"""The predicate table, match bucket, subscription list and interface list.

**Predicate table.** A subscription's condition on a column is one or two *predicates*; all
predicates of one attribute and one operator form a *predicate family*, one row of the
table. Families: lower bounds ``a >= x`` (row sorted ascending, so the predicates an event
value ``v`` satisfies are the left run ``x <= v``), upper bounds ``a <= x`` (sorted
descending: the left run ``x >= v``), and equalities ``a = x`` (hashed: value -> its run).
A binary search splits a sorted row into the matching left part and the rest.

**Chains and the match bucket.** Each subscription's predicates are chained from the top row
down; its first predicates are the initial match bucket. Rows are scanned top to bottom: a
predicate in the bucket whose index falls left of its row's split point holds, so its chain
moves on (its successor enters the bucket of a lower row) or, at the chain's end, the
subscription matches. Chains skip rows freely, which is what the bucket is for.

**Symmetric use.** With an event *region* ``[l, h]`` per attribute, lower bounds are tested
against ``h`` and upper bounds against ``l`` (the predicate table's cross comparison), equalities
against the run ``[l, h]``; a missing attribute is unbounded. A point is ``[v, v]``, so
forward, reverse and symmetric matching are one scan (:mod:`semps.matcher.symmetric`).

**Departures, on purpose.** The seed counts a row whose attribute the event lacks as
matched; content subscriptions here follow the issue's contract (a constraint on a missing
attribute fails), while regions keep the seed's rule. Rows are arrays rebuilt in one sort
after a batch of inserts (see :mod:`semps.matcher.content.index`) instead of linked lists
updated one predicate at a time: the same binary-search order, NumPy-sized.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semps.matcher.content import _table_kernels as k
from semps.matcher.content._kernels import group_by_key
from semps.matcher.content.bulk import ParsedSubscriptions
from semps.matcher.content.constraints import ContentSubscription
from semps.matcher.content.index import CompiledIndex
from semps.matcher.content.interfaces import Entry, InterfaceList, Op
from semps.matcher.content.space import EncodedEvent
from semps.matcher.content.table import SlotTable

__all__ = ["PredicateTable", "PredicateTableIndex"]


class PredicateTable:
    """The structure: rows of sorted predicates, chains, heads and the match bucket."""

    def __init__(self) -> None:
        self.ncols = 0
        self.row_start = np.zeros(1, np.int64)
        self.keys = np.zeros(0)
        self.nxt = np.zeros(0, np.int32)
        self.owner = np.zeros(0, np.int32)
        self.heads = np.zeros(0, np.int32)
        self.heads_off = np.zeros(1, np.int64)
        self.eq_runs: dict[int, dict[float, tuple[int, int]]] = {}
        self._bucket = np.zeros(0, np.int32)
        self._bcount = np.zeros(0, np.int64)

    def build(self, table: SlotTable, ncols: int) -> None:
        """Build the rows over every slot of ``table`` (compacted: all live)."""
        row, key, own, first = k.table_nodes(table.starts, table.cols, table.lows, table.highs)
        nrows = 3 * ncols
        by_key = np.argsort(key)  # then a stable grouping by row keeps each row sorted
        row_start, perm = group_by_key(row[by_key], nrows, by_key)
        self.ncols = ncols
        self.row_start = row_start
        self.keys = key[perm]
        self.nxt, self.owner, self.heads = k.link_chains(perm, own, first)
        self.heads_off = np.searchsorted(self.heads, row_start).astype(np.int64)
        self.eq_runs = {c: self._runs(3 * c + 2) for c in range(ncols)}
        self._bucket = np.empty(len(self.keys), np.int32)
        self._bcount = np.zeros(nrows, np.int64)

    def _runs(self, r: int) -> dict[float, tuple[int, int]]:
        """The hashed equality row ``r``: value -> its run of positions in the row."""
        a, b = int(self.row_start[r]), int(self.row_start[r + 1])
        if a == b:
            return {}
        values, first, counts = np.unique(self.keys[a:b], return_index=True, return_counts=True)
        return {
            v: (f, f + n)
            for v, f, n in zip(values.tolist(), first.tolist(), counts.tolist(), strict=True)
        }

    def nbytes(self) -> int:
        arrays = (self.row_start, self.keys, self.nxt, self.owner, self.heads, self.heads_off)
        return sum(a.nbytes for a in (*arrays, self._bucket, self._bcount))

    def point_rows(self, event: EncodedEvent) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """How each row is tested for a content event (missing attributes fail)."""
        nrows = 3 * self.ncols
        mode = np.zeros(nrows, np.int64)  # ROW_NONE
        qa = np.zeros(nrows)
        qb = np.zeros(nrows)
        start, values = event.start, event.values
        present = np.flatnonzero(np.diff(start[: self.ncols + 1]))
        for c in present.tolist():
            r = 3 * c
            if start[c + 1] - start[c] > 1:
                mode[r : r + 3] = k.ROW_VALUES
                continue
            v = float(values[start[c]])
            mode[r], qa[r] = k.ROW_PREFIX, v
            mode[r + 1], qa[r + 1] = k.ROW_PREFIX, -v
            run = self.eq_runs[c].get(v)
            if run is not None:
                mode[r + 2], qa[r + 2], qb[r + 2] = k.ROW_GIVEN, run[0], run[1]
        return mode, qa, qb

    def region_rows(
        self, lows: np.ndarray, highs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """How each row is tested for a region (``-inf``/``inf`` where unbounded)."""
        lo, hi = lows[: self.ncols], highs[: self.ncols]
        mode = np.tile(np.array([k.ROW_PREFIX, k.ROW_PREFIX, k.ROW_RANGE], np.int64), self.ncols)
        qa = np.stack([hi, -lo, lo], axis=1).ravel()
        qb = np.stack([hi, hi, hi], axis=1).ravel()
        return mode, qa, qb

    def match(
        self,
        rows: tuple[np.ndarray, np.ndarray, np.ndarray],
        table: SlotTable,
        event: EncodedEvent | None = None,
    ) -> np.ndarray:
        """The slots whose chains complete, ascending (dead slots included)."""
        if len(self.keys) == 0:
            return np.zeros(0, np.int32)
        mode, qa, qb = rows
        start = event.start if event is not None else np.zeros(1, np.int64)
        values = event.values if event is not None else np.zeros(0)
        out = np.empty(len(self.heads), np.int32)
        n = k.table_match(
            self.row_start, self.keys, self.nxt, self.owner, self.heads, self.heads_off, mode,
            qa, qb, (table.starts, table.cols, table.lows, table.highs), start, values,
            self._bucket, self._bcount, out,
        )  # fmt: skip
        return np.sort(out[:n])


class PredicateTableIndex(CompiledIndex):
    """For content subscriptions: the predicate table plus the interface list.

    Args:
        interface_limit: when an interface (a subscription's ``interface``, the subscriber
            in the broker) holds more entries than this, its two most-overlapping entries are
            aggregated into one covering entry; matches of an aggregate are re-checked
            against its member subscriptions, so answers stay exact. ``None``: never.
        **options: see :class:`~semps.matcher.content.index.CompiledIndex`.

    Example:
        >>> from semps.matcher.content.parse import parse_subscription
        >>> index = PredicateTableIndex(interface_limit=1)
        >>> index.add(parse_subscription("a between 0.1 and 0.4", sub_id="s1", interface="i"))
        >>> index.add(parse_subscription("a between 0.3 and 0.6", sub_id="s2", interface="i"))
        >>> index.rebuild()
        >>> len(index.interfaces.entries), index.match({"a": [0.5]}), index.match({"a": [0.35]})
        (1, ['s2'], ['s1', 's2'])
    """

    name = "predicate-table"

    def __init__(self, *, interface_limit: int | None = None, **options: float) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.interfaces = InterfaceList(interface_limit)
        self.structure = PredicateTable()

    def __len__(self) -> int:
        return len(self.interfaces.subscriptions)

    def __contains__(self, sub_id: object) -> bool:
        return sub_id in self.interfaces.subscriptions

    def add(self, subscription: ContentSubscription) -> None:
        """Insert or replace; may aggregate two entries of the subscription's interface."""
        self._apply(self.interfaces.add(subscription))

    def remove(self, sub_id: str) -> None:
        """Delete; an aggregate left with one member becomes that member's own entry."""
        self._apply(self.interfaces.remove(sub_id))

    def bulk_load(
        self, ids: Sequence[str], attrs: Sequence[str], cols: np.ndarray, bounds: np.ndarray
    ) -> None:
        """Bulk insert (each subscription its own interface, so never aggregated)."""
        super().bulk_load(ids, attrs, cols, bounds)
        self.interfaces.adopt(ids)

    @property
    def bulk_loadable(self) -> bool:  # type: ignore[override]
        """Bulk inserts skip the interface list, so only without a limit."""
        return self.interfaces.limit is None

    def add_many(self, parsed: ParsedSubscriptions) -> None:
        """Bulk insert (only without an interface limit: nothing is aggregated)."""
        if not self.bulk_loadable:
            msg = "add_many needs interface_limit=None"
            raise ValueError(msg)
        super().add_many(parsed)
        self.interfaces.adopt(parsed.ids)

    def _apply(self, ops: list[Op]) -> None:
        for _, item in ops:
            if isinstance(item, Entry):
                self.table.append(item.uid, *self.space.encode_conditions(item.conditions))
            else:
                self.table.kill(item)

    def _build(self) -> None:
        self.structure.build(self.table, self.ncols_built)

    def _match_built(self, event: EncodedEvent) -> np.ndarray:
        slots = self.structure.match(self.structure.point_rows(event), self.table, event)
        live: np.ndarray = slots[self.table.alive[slots]]
        return live

    def _structure_bytes(self) -> int:
        return self.structure.nbytes()

    def _units_are_subscriptions(self) -> bool:
        return self.interfaces.limit is None  # without a limit nothing is aggregated

    def ids_of(self, slots: np.ndarray, event: EncodedEvent) -> list[str]:
        """Matching subscription ids: entries' ids, aggregates re-checked member by member."""
        out = []
        for s in slots.tolist():
            uid = self.table.ids[s]
            entry = self.interfaces.entries.get(uid)
            if entry is None or entry.plain:
                out.append(uid)
                continue
            for member in entry.members:
                sub = self.interfaces.subscriptions[member]
                assert sub is not None  # aggregates only hold subscriptions added one by one
                conditions = sub.conditions()
                if _holds(self.space.encode_conditions(conditions), event):
                    out.append(member)
        return sorted(out)


def _holds(encoded: tuple[np.ndarray, np.ndarray, np.ndarray], event: EncodedEvent) -> bool:
    """Direct check of one subscription's encoded intervals (an aggregate's member)."""
    start, values = event.start, event.values
    for c, lo, hi in zip(*(a.tolist() for a in encoded), strict=True):
        if c + 1 >= len(start):
            return False
        vs = values[start[c] : start[c + 1]]
        if not np.any((lo <= vs) & (vs <= hi)):
            return False
    return True
