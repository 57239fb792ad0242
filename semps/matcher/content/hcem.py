"""HCEM: batch matching over REIN's lists, and cell bitsets for events that come alone.

Events that arrive together are matched in one pass over the subscriptions. The batch is
planned per attribute (:mod:`semps.matcher.content._hcem_kernels`): its values sorted, and
for every rank the set of events below it, one bit per event, 64 events per machine word.
The events a constraint ``[low, high]`` passes are the events between two ranks, so each
constraint costs two rank look-ups and one AND per word, for the whole batch at once; a
subscription's constraints are AND-ed together and the events left are its matches. This is
the paper's dynamic adjustment (the failed set of a bucket is the events below it, and it
only grows walking the buckets upwards) taken to single values, so no comparison is left
over after the bit operations. Threads take different ranges of slots.

A batch smaller than ``min_batch`` (a service under light traffic sends one event at a
time), and events where some attribute has several values (a constraint then holds when
*some* value passes, which a difference of two rank sets cannot say), take the cell
bitsets instead (:mod:`semps.matcher.content.cells`): a few streams of bits per event, no
pass over the lists. They are built when first needed after a rebuild, so a batch-only run
(the CLI with its default ``--batch``) never pays for them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from semps._types import Value
from semps.matcher.content._hcem_kernels import batch_plan, block_mark, block_pairs
from semps.matcher.content._kernels import group_by_key
from semps.matcher.content.cells import CellBitsets
from semps.matcher.content.rein import ReinIndex
from semps.matcher.content.space import EncodedEvent
from semps.matcher.results import MatchColumns

__all__ = ["HcemIndex"]

#: Slots below which one thread does the whole pass.
PARALLEL_SLOTS = 1 << 16

_POOL: ThreadPoolExecutor | None = None

#: A batch's plan (see :func:`~semps.matcher.content._hcem_kernels.batch_plan`).
Plan = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="semps-hcem")
    return _POOL


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it starts a pool of its own."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class HcemIndex(ReinIndex):
    """HCEM: :class:`ReinIndex` whose :meth:`match_batch` matches a batch in one pass, and
    whose single events take the cell bitsets.

    Args:
        max_batch: events matched in one pass (a plan holds ``max_batch`` bits per value
            of the batch).
        min_batch: smaller batches take the cell bitsets event by event: a pass costs
            about as much for 1 event as for 64; at n = 1M, m = 20, k = 10 on one thread
            the cell bitsets cost 0.18-0.22 ms CPU an event, a pass of 1,000 events
            0.23-0.24 an event (about even: the pass stays for large batches).
        cells: the cell bitsets' most cells per column.
        bits_per_predicate: the cell bitsets' memory budget for fail rows, in bits per
            stored predicate (512: 64 bytes, against the 20 the table holds per
            predicate). At n = 1M, m = 20, k = 10 that is 256 cells a column and ~730
            bytes a subscription; it halves the list marks 128 cells leave (0.18 against
            0.23 ms CPU an event, in process).
        bucket_size: bounds per bucket of the cell bitsets' lists.
        block: slots per block of the bucket lists; a block's bit rows (``block * batch``
            bits) should stay in the core's cache: 8192 measured best at n = 1M, batch 1000.
        threads: threads sharing a pass (default: numba's thread count, ``NUMBA_NUM_THREADS``);
            each takes a range of blocks.
        **options: see :class:`~semps.matcher.content.rein.ReinIndex`.

    Example:
        >>> from semps.matcher.content.parse import parse_subscription
        >>> index = HcemIndex(buckets=4, min_batch=1)
        >>> index.add(parse_subscription("a between 0.2 and 0.5", sub_id="s1"))
        >>> index.add(parse_subscription("a >= 0.4", sub_id="s2"))
        >>> index.rebuild()
        >>> index.match_batch([{"a": [0.45]}, {"a": [0.9]}, {"b": [1]}])
        [['s1', 's2'], ['s2'], []]
    """

    name = "hcem"

    def __init__(
        self,
        *,
        max_batch: int = 1024,
        min_batch: int = 512,
        block: int = 8192,
        threads: int | None = None,
        cells: int = 256,
        bits_per_predicate: int = 512,
        bucket_size: int = 256,
        **options: float,
    ) -> None:
        super().__init__(block=block, **options)  # type: ignore[arg-type]
        if max_batch < 1 or min_batch < 1:
            msg = f"max_batch and min_batch must be positive, not {max_batch}, {min_batch}"
            raise ValueError(msg)
        if cells < 1 or bits_per_predicate < 0 or bucket_size < 1:
            msg = "cells and bucket_size must be positive, bits_per_predicate not negative"
            raise ValueError(msg)
        self.max_batch = max_batch
        self.min_batch = min_batch
        self.threads = threads
        self.cell_options = {
            "cells": cells,
            "bits_per_predicate": bits_per_predicate,
            "bucket_size": bucket_size,
        }
        self._cells: CellBitsets | None = None

    # -- the cell bitsets ------------------------------------------------------------------

    def _build(self) -> None:
        super()._build()
        self._cells = None  # slots renumbered: built again when next needed

    def _killed(self, slot: int) -> None:
        if self._cells is not None:
            self._cells.kill(slot)

    def cell_bitsets(self) -> CellBitsets:
        """The cell bitsets over the built slots, built now if need be (call after
        :meth:`refresh`: they have room for the delta a rebuild allows)."""
        if self._cells is None:
            room = int(max(self.delta_min, self.delta_fraction * self.built)) + 1
            self._cells = CellBitsets(
                self.table, self.ncols_built, self.built, self.built + room, **self.cell_options
            )
        return self._cells

    def prepare(self, batch: int) -> None:
        """Batches under ``min_batch`` take the cell bitsets: build them (and the structure
        they stand on) now rather than at the first event."""
        if batch < self.min_batch:
            self.refresh()
            if self.built:
                self.cell_bitsets()

    def _structure_bytes(self) -> int:
        cells = self._cells.nbytes() if self._cells is not None else 0
        return super()._structure_bytes() + cells

    def match_encoded(self, event: EncodedEvent) -> np.ndarray:
        """Matching slots (ascending, the delta's included) of one event: cell bitsets."""
        self.refresh()
        if self.built == 0:
            return self._with_delta(np.zeros(0, np.int32), event)
        return self.cell_bitsets().match(event, self.table)

    def match_encoded_batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        """A pass for the single-valued events of a batch of ``min_batch`` or more; the
        cell bitsets for the others."""
        self.refresh()
        if self.built == 0:
            return [self._with_delta(np.zeros(0, np.int32), e) for e in events]
        single = [i for i, e in enumerate(events) if e.single_valued]
        if len(single) < self.min_batch:
            single = []
        out: list[np.ndarray | None] = [None] * len(events)
        for first in range(0, len(single), self.max_batch):
            chunk = single[first : first + self.max_batch]
            for i, slots in zip(chunk, self._batch([events[i] for i in chunk]), strict=True):
                out[i] = self._with_delta(slots, events[i])
        rest = [i for i, o in enumerate(out) if o is None]
        if rest:
            for i, slots in zip(rest, self._cell_match([events[i] for i in rest]), strict=True):
                out[i] = slots
        return [o if o is not None else np.zeros(0, np.int32) for o in out]

    def _cell_match(self, events: Sequence[EncodedEvent | np.ndarray]) -> list[np.ndarray]:
        """Matching slots per event from the cell bitsets, the events shared between
        threads (as many as a pass would use) when there are several."""
        cells = self.cell_bitsets()
        cells.sync(self.table)
        threads = self._threads(len(events))
        if threads == 1:
            return [cells.match_synced(e, self.table) for e in events]
        cuts = np.linspace(0, len(events), threads + 1).astype(np.int64).tolist()
        parts = [events[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
        done = _pool().map(lambda part: [cells.match_synced(e, self.table) for e in part], parts)
        return [slots for part in done for slots in part]

    def _threads(self, most: int) -> int:
        """Threads for ``most`` units of work (numba's count unless ``threads`` was given),
        only when the index is large enough to gain from them."""
        if self.threads is None:
            threads = min(nb.get_num_threads(), self.built // PARALLEL_SLOTS)
        else:
            threads = self.threads
        return max(1, min(threads, most))

    def _batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        """Matching built slots of single-valued events, ascending, per event."""
        ncols = self.ncols_built
        ev_val = np.empty((ncols, len(events)))
        for i, e in enumerate(events):
            ev_val[:, i] = e.dense(ncols)
        offsets, slots = self._pass(ev_val)
        return [slots[offsets[i] : offsets[i + 1]] for i in range(len(events))]

    def match_columns_values(self, values: Sequence[Mapping[str, Value]]) -> MatchColumns:
        """:meth:`match_columns` for events given as attribute -> one value (JSON events'
        ``values``), without building a view or an encoded event per event."""
        self.refresh()
        nev = len(values)
        if 0 < nev < self.min_batch and self.built:  # the cell bitsets, no view per event
            ev_val = self.space.dense_values(values, len(self.space))
            return self._columns(self._cell_match(list(ev_val.T)))
        if len(self.table) != self.built or nev < self.min_batch:
            return self.match_columns([{k: (v,) for k, v in d.items()} for d in values])
        ev_val = self.space.dense_values(values, self.ncols_built)
        parts = [
            self._pass(ev_val[:, a : a + self.max_batch]) for a in range(0, nev, self.max_batch)
        ]
        sizes = np.concatenate([np.diff(offsets) for offsets, _ in parts])
        slots = np.concatenate([s for _, s in parts]).astype(np.int64)
        event = np.repeat(np.arange(nev, dtype=np.int64), sizes)
        return MatchColumns(nev, event, slots, self.table.ids, np.ones(len(slots), np.int64))

    def _pass(self, ev_val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The batch pass over the built slots for the events (columns of ``ev_val``, NaN =
        missing): CSR per event of the matching slots, ascending."""
        nev = ev_val.shape[1]
        if self.built == 0 or nev == 0:
            return np.zeros(nev + 1, np.int64), np.zeros(0, np.int32)
        plan = batch_plan(np.ascontiguousarray(ev_val), self.buckets, self.dlo, self.scale)
        nblocks = (self.built + self.block - 1) // self.block
        threads = self._threads(nblocks)
        cuts = np.linspace(0, nblocks, threads + 1).astype(np.int64).tolist()
        ranges = list(zip(cuts, cuts[1:], strict=False))
        if threads == 1:
            parts = [self._pairs(b0, b1, nev, plan) for b0, b1 in ranges]
        else:
            parts = list(_pool().map(lambda r: self._pairs(r[0], r[1], nev, plan), ranges))
        slots = np.concatenate([p[0] for p in parts])
        evs = np.concatenate([p[1] for p in parts])
        return group_by_key(evs, nev, slots)  # a stable sort of the pairs by event

    def _pairs(self, b0: int, b1: int, nev: int, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
        """(slots, events) of the matches in slot blocks ``b0..b1``, slots ascending."""
        block, ncols = self.block, self.ncols_built
        acc = np.empty((min(block, self.built), (nev + 63) // 64), np.uint64)
        cap = max(1 << 16, (b1 - b0) * block * nev // 512)
        slot_buf, event_buf = np.empty(cap, np.int32), np.empty(cap, np.int32)
        n = 0
        for blk in range(b0, b1):
            block_mark(blk, ncols, self.buckets, block, plan, self.low, self.high, acc)
            s0, s1 = blk * block, min(self.built, (blk + 1) * block)
            while (
                m := block_pairs(acc, s0, s1, self.table.alive, plan[5], slot_buf, event_buf, n)
            ) < 0:
                slot_buf = np.concatenate([slot_buf, np.empty_like(slot_buf)])
                event_buf = np.concatenate([event_buf, np.empty_like(event_buf)])
            n = m
        return slot_buf[:n], event_buf[:n]
