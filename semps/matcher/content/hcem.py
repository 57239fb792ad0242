"""HCEM: REIN plus batch matching.

Events that arrive together are matched in one pass over the subscriptions. The batch is
planned per attribute (:mod:`semps.matcher.content._hcem_kernels`): its values sorted, and
for every rank the set of events below it, one bit per event, 64 events per machine word.
The events a constraint ``[low, high]`` passes are the events between two ranks, so each
constraint costs two rank look-ups and one AND per word, for the whole batch at once; a
subscription's constraints are AND-ed together and the events left are its matches. This is
the paper's dynamic adjustment (the failed set of a bucket is the events below it, and it
only grows walking the buckets upwards) taken to single values, so no comparison is left
over after the bit operations. Threads take different ranges of slots.

Events where some attribute has several values take REIN's single-event path (a constraint
then holds when *some* value passes, which a difference of two rank sets cannot say). REIN's
bucket lists are built only when that path is first needed, so a batch-only run (the CLI)
never pays for them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from semps._types import Value
from semps.matcher.content._hcem_kernels import batch_plan, block_mark, block_pairs
from semps.matcher.content._kernels import counting_order
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
    """HCEM: :class:`ReinIndex` whose :meth:`match_batch` matches a batch in one pass.

    Args:
        max_batch: events matched in one pass (a plan holds ``max_batch`` bits per value
            of the batch).
        min_batch: smaller batches take REIN's single-event path (a pass costs about as
            much for 1 event as for 64).
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
        min_batch: int = 16,
        block: int = 8192,
        threads: int | None = None,
        **options: float,
    ) -> None:
        super().__init__(block=block, **options)  # type: ignore[arg-type]
        if max_batch < 1 or min_batch < 1:
            msg = f"max_batch and min_batch must be positive, not {max_batch}, {min_batch}"
            raise ValueError(msg)
        self.max_batch = max_batch
        self.min_batch = min_batch
        self.threads = threads

    def _match_built_batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        out: list[np.ndarray | None] = [None] * len(events)
        single = [i for i, e in enumerate(events) if e.single_valued]
        if len(single) < self.min_batch:  # a pass costs as much as many REIN events
            single = []
        for i, e in enumerate(events):
            if out[i] is None and (not single or not e.single_valued):
                out[i] = self._match_built(e)
        for first in range(0, len(single), self.max_batch):
            chunk = single[first : first + self.max_batch]
            for i, slots in zip(chunk, self._batch([events[i] for i in chunk]), strict=True):
                out[i] = slots
        return [o if o is not None else np.zeros(0, np.int32) for o in out]

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
        if self.threads is None:
            threads = min(nb.get_num_threads(), self.built // PARALLEL_SLOTS)
        else:
            threads = self.threads
        threads = max(1, min(threads, nblocks))
        cuts = np.linspace(0, nblocks, threads + 1).astype(np.int64).tolist()
        ranges = list(zip(cuts, cuts[1:], strict=False))
        if threads == 1:
            parts = [self._pairs(b0, b1, nev, plan) for b0, b1 in ranges]
        else:
            parts = list(_pool().map(lambda r: self._pairs(r[0], r[1], nev, plan), ranges))
        slots = np.concatenate([p[0] for p in parts])
        evs = np.concatenate([p[1] for p in parts])
        order, offsets = counting_order(evs, nev)  # a stable sort of the pairs by event
        return offsets, slots[order]

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
