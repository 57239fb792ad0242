"""Cell bitsets: one event against every subscription in a few streams of bits (HEM-style).

Per column, the value domain is cut into *buckets* (about equal numbers of bounds each, and
a bucket of its own for any value common enough to fill one, such as an equality many
subscriptions share), and consecutive buckets are grouped into *cells*. Built once per
rebuild:

- per cell, its *fail row*: a bitset with the slots whose interval on the column misses the
  whole cell (a low bound in a later cell, or a high bound in an earlier one);
- per column, its *constrained row*: the slots that constrain it (an event lacking the
  column fails them all);
- per bucket, the slots with a finite low bound in it, and those with a high bound in it
  (slots only; the bounds themselves stay in the slot table).

An event's value ``v`` in bucket ``q`` of cell ``k`` fails exactly: the fail row of ``k``;
the lows in the buckets of ``k`` above ``q`` and the highs in those below ``q`` (no
comparison needed); and some of the bounds in ``q`` itself. Those few are not decided
here: the slots left over at the end that have a bound in ``q`` are checked against their
predicates in the table. A bucket holding one value ``u`` only (the equality case) is
decided without that check: its lows hold, its highs fail unless ``v == u``.

So one event costs one row OR per column (``n / 64`` words, streamed), one pass over the
list slots of one cell per column, and a check of the handful of survivors with a bound in
the event's buckets; no per-event Python. Rows cost ``n / 8`` bytes each: the number of
cells is bounded by a memory budget (``bits_per_predicate``), shared between columns in
proportion to how many subscriptions constrain them. A column few subscriptions constrain
(fewer than ``n / 64``) has no rows at all: its lists are walked instead, which then
costs less than a row.

Updates stay incremental: a slot added after the build is entered into the fail and
constrained rows at once (a few bits per predicate) and checked against its predicates
when it survives them, since it is in no list; a removed slot is set in the *dead* row.
Rows have room for the index's delta; the next rebuild (see
:class:`~semps.matcher.content.index.CompiledIndex`) rebuilds them.
"""

from __future__ import annotations

import threading

import numpy as np

from semps.matcher.content._cell_build_kernels import (
    bound_buckets,
    bucket_cells,
    column_edges,
    column_samples,
    fail_rows,
    single_buckets,
)
from semps.matcher.content._cell_kernels import Cells, cell_match, dense_event, mark_slots
from semps.matcher.content._kernels import group_by_key
from semps.matcher.content.space import EncodedEvent
from semps.matcher.content.table import SlotTable

__all__ = ["CellBitsets"]

#: Bounds sampled per column to place its bucket edges.
SAMPLE = 1 << 16


class CellBitsets:
    """The cell bitsets of the slots ``0..built-1`` of a table (see the module doc).

    Args:
        table: the slot table (slots below ``built`` all live, as a rebuild leaves them).
        ncols: the columns at the build (later ones are checked in the table).
        built: the slots to build over.
        capacity: slots the rows have room for (``built`` plus the delta allowed).
        cells: at most this many cells per column.
        bits_per_predicate: the fail rows' budget, in bits per stored predicate.
        bucket_size: bounds per bucket (the slots checked per column and event are about
            this many, before the other columns fail most of them).

    Example:
        >>> from semps.matcher.content.space import AttributeSpace
        >>> space, table = AttributeSpace(), SlotTable()
        >>> for i, (low, high) in enumerate([(0.0, 0.5), (0.4, 1.0), (0.6, 0.9)]):
        ...     _ = table.append(f"s{i}", *space.encode_conditions({"a": (low, high)}))
        >>> cells = CellBitsets(table, 1, 3, 64, cells=2, bits_per_predicate=64, bucket_size=1)
        >>> cells.match(space.encode_view({"a": [0.45]}), table).tolist()
        [0, 1]
    """

    def __init__(
        self,
        table: SlotTable,
        ncols: int,
        built: int,
        capacity: int,
        *,
        cells: int = 256,
        bits_per_predicate: int = 512,
        bucket_size: int = 256,
    ) -> None:
        if capacity < built or cells < 1 or bits_per_predicate < 0 or bucket_size < 1:
            msg = "capacity >= built, cells >= 1, bits_per_predicate >= 0, bucket_size >= 1"
            raise ValueError(msg)
        self.ncols = ncols
        self.built = built
        self.capacity = capacity
        nwords = (capacity + 63) >> 6
        self.arrays = _build(table, ncols, built, nwords, cells, bits_per_predicate, bucket_size)
        self.dead = np.zeros(nwords, np.uint64)
        gone = np.flatnonzero(~table.alive[:built])  # removed since the table was compacted
        np.bitwise_or.at(self.dead, gone >> 6, np.uint64(1) << (gone & 63).astype(np.uint64))
        self.marked = built
        self._local = threading.local()  # per thread: scratch rows and an output buffer

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the threads' scratch (a process gets its own)."""
        return {k: v for k, v in self.__dict__.items() if k != "_local"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    @property
    def rows(self) -> int:
        """Bitset rows (fail rows and constrained rows)."""
        return int(self.arrays[13].shape[0])

    def nbytes(self) -> int:
        """Bytes held (rows, lists, edges, and one thread's scratch)."""
        scratch = 4 * self.dead.nbytes + 4 * self.capacity
        return sum(int(a.nbytes) for a in (*self.arrays, self.dead)) + scratch

    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        local = self._local
        if not hasattr(local, "scratch"):
            local.scratch = np.zeros((4, self.dead.shape[0]), np.uint64)
            local.out = np.empty(self.capacity, np.int32)
        return local.scratch, local.out

    def kill(self, slot: int) -> None:
        """A slot was removed (its bits stay until the next build; the dead row hides it)."""
        if slot < self.capacity:
            self.dead[slot >> 6] |= np.uint64(1) << np.uint64(slot & 63)

    def sync(self, table: SlotTable) -> None:
        """Enter the slots appended to ``table`` since the last call."""
        n = len(table)
        if n > self.capacity:
            msg = f"{n} slots do not fit cell bitsets built for {self.capacity}"
            raise ValueError(msg)
        if n > self.marked:
            mark_slots(
                self.marked, n, table.starts, table.cols, table.lows, table.highs, table.alive,
                self.ncols, self.arrays, self.dead,
            )  # fmt: skip
            self.marked = n

    def match(self, event: EncodedEvent, table: SlotTable) -> np.ndarray:
        """The live slots of ``table`` that ``event`` matches, ascending (delta included)."""
        self.sync(table)
        return self.match_synced(event, table)

    def match_synced(self, event: EncodedEvent | np.ndarray, table: SlotTable) -> np.ndarray:
        """:meth:`match` once :meth:`sync` has seen every slot of ``table``: threads may
        call it at once (each has its own scratch) while nothing changes the table. The
        event may also be one value per column (NaN: missing), as
        :meth:`~semps.matcher.content.space.AttributeSpace.dense_values` gives it."""
        scratch, out = self._buffers()
        start, values = (
            dense_event(event) if isinstance(event, np.ndarray) else (event.start, event.values)
        )
        n = cell_match(
            start, values, self.ncols, self.built, len(table), table.starts, table.cols,
            table.lows, table.highs, self.arrays, self.dead, scratch, out,
        )  # fmt: skip
        return out[:n].copy()


def _build(
    table: SlotTable,
    ncols: int,
    built: int,
    nwords: int,
    max_cells: int,
    bits_per_predicate: int,
    bucket_size: int,
) -> Cells:
    npred = int(table.starts[built])
    cols, lows, highs = table.cols[:npred], table.lows[:npred], table.highs[:npred]
    slot_of = np.repeat(np.arange(built, dtype=np.int32), np.diff(table.starts[: built + 1]))
    per_column = np.bincount(cols, minlength=ncols).astype(np.int64)
    # cells: the budget shared in proportion to the predicates; sparse columns get lists only
    dense = per_column * 64 >= max(built, 1)
    cells = np.where(
        dense, np.clip(bits_per_predicate * per_column // max(built, 1), 1, max_cells), 1
    ).astype(np.int64)
    eoff, edges = _edges(cols, lows, highs, ncols, cells, bucket_size)
    bbase = eoff + np.arange(ncols + 1, dtype=np.int64)
    nbuckets = int(bbase[-1])
    bucket_lo = bound_buckets(cols, lows, eoff, edges, bbase)
    bucket_hi = bound_buckets(cols, highs, eoff, edges, bbase)
    lo_at, lo_slot = group_by_key(bucket_lo, nbuckets, slot_of)  # -1: an infinite bound
    hi_at, hi_slot = group_by_key(bucket_hi, nbuckets, slot_of)
    lower = np.concatenate(
        [np.concatenate([[np.nan], edges[eoff[c] : eoff[c + 1]]]) for c in range(ncols)]
        or [np.zeros(0)]
    )
    single = single_buckets(lows, bucket_lo, highs, bucket_hi, lower)
    cell_of, first, cbase = bucket_cells(lo_at, hi_at, bbase, cells)
    ncells = np.diff(cbase)
    with_rows = dense & (ncells >= 2)
    frow = np.full(int(cbase[-1]), -1, np.int64)
    con = np.full(ncols, -1, np.int64)
    r = 0
    for c in np.flatnonzero(dense).tolist():
        con[c] = r
        r += 1
        if with_rows[c]:
            frow[cbase[c] : cbase[c + 1]] = np.arange(r, r + ncells[c])
            r += int(ncells[c])
    rows = np.zeros((r, nwords), np.uint64)
    fail_rows(lo_at, lo_slot, hi_at, hi_slot, bbase, cell_of, cbase, frow, con, rows)
    return (
        eoff, edges, bbase, cell_of, first, cbase, frow, con,
        lo_at, lo_slot, hi_at, hi_slot, single, rows,
    )  # fmt: skip


def _edges(
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    ncols: int,
    cells: np.ndarray,
    bucket_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Every column's bucket edges (``edges[eoff[c]:eoff[c + 1]]``)."""
    count, soff, sample = column_samples(cols, lows, highs, ncols, SAMPLE)
    parts = []
    for c in range(ncols):
        want = max(4 * int(cells[c]), int(count[c]) // bucket_size, 1)
        parts.append(column_edges(sample[soff[c] : soff[c + 1]], want))
    eoff = np.zeros(ncols + 1, np.int64)
    np.cumsum([len(p) for p in parts], out=eoff[1:])
    edges = np.concatenate(parts) if parts else np.zeros(0)
    return eoff, edges
