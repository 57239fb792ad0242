"""HCEM: REIN plus the batch dynamic adjustment (seed 002).

Events that arrive together are matched in one pass per bucket list. Per attribute the
batch is sorted by bucket; L_low is scanned upwards and every entry of bucket ``j`` fails all
events of lower buckets at once (the paper lets the largest value enter L_low first; visiting
buckets upwards while the failed set grows is the same order read from the other end), so
each bucket list is scanned once per batch instead of once per event. The marks are one bit
per (subscription, event): a subscription's row of bits is OR-ed with the failed set, 64
events per machine word. Threads split the batch's words, so they never write one word.

Events where some attribute has several values take REIN's single-event path (negative
search needs "all values fail" there, which one bitset per event expresses directly).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semps.matcher.content._kernels import hcem_mark, hcem_plan, unmarked_pairs
from semps.matcher.content.rein import ReinIndex
from semps.matcher.content.space import EncodedEvent

__all__ = ["HcemIndex"]


class HcemIndex(ReinIndex):
    """HCEM: :class:`ReinIndex` whose :meth:`match_batch` uses the dynamic adjustment.

    Args:
        max_batch: events matched in one pass (the bit matrix has ``n * max_batch`` bits).
        min_batch: smaller batches take REIN's single-event path (one pass has fixed costs:
            the batch plan, the bit matrix, thread start-up).
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

    def __init__(self, *, max_batch: int = 1024, min_batch: int = 16, **options: float) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        if max_batch < 1 or min_batch < 1:
            msg = f"max_batch and min_batch must be positive, not {max_batch}, {min_batch}"
            raise ValueError(msg)
        self.max_batch = max_batch
        self.min_batch = min_batch

    def _match_built_batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        out: list[np.ndarray | None] = [None] * len(events)
        single = [i for i, e in enumerate(events) if e.single_valued]
        if len(single) < self.min_batch:  # too few to pay for a batch pass: REIN per event
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
        nev = len(events)
        if self.built == 0 or nev == 0:
            return [np.zeros(0, np.int32) for _ in events]
        ncols = self.ncols_built
        ev_val = np.empty((ncols, nev))
        for i, e in enumerate(events):
            ev_val[:, i] = e.dense(ncols)
        words = (nev + 63) // 64
        marks = np.zeros((self.built, words), np.uint64)
        plan = hcem_plan(ev_val, self.buckets, self.dlo, self.scale, words)
        hcem_mark(ev_val, ncols, self.buckets, plan, *self.low, *self.high, marks)
        offsets, slots = unmarked_pairs(marks, nev, self.table.alive)
        return [slots[offsets[i] : offsets[i + 1]] for i in range(nev)]
