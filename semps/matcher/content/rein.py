"""REIN: per attribute two bucket lists, L_low and L_high, and negative search.

Every constraint is a closed interval ``[low, high]`` on its attribute (``>=`` leaves the
high end open, ``<=`` the low end, ``=`` is ``[v, v]``). Per attribute, L_low files each
subscription's low bound in one of ``b`` buckets over the attribute's domain and L_high its
high bound. For an event value ``v`` in bucket ``j``, every low bound in a bucket above ``j``
exceeds ``v`` and every high bound below ``j`` is under it: those subscriptions are marked
unmatched without a comparison (a scan), and only bucket ``j`` itself is compared. What no
attribute marked matches. The buckets' domain is the range of the finite bounds seen at the
last build; values outside it fall into the end buckets, which are compared, so the domain
only affects speed, never answers.
"""

from __future__ import annotations

import numpy as np

from semps.matcher.content._kernels import build_bucket_list, column_domains, rein_match
from semps.matcher.content.index import CompiledIndex
from semps.matcher.content.space import EncodedEvent

__all__ = ["ReinIndex"]


class ReinIndex(CompiledIndex):
    """REIN (single events). See the module doc.

    Args:
        buckets: ``b``, buckets per bucket list (the paper's default is 1000).
        block: slots per block of the bucket lists. Matching visits one block at a time so
            that the marks it writes stay in cache (HCEM's bit rows most of all); larger
            blocks cost fewer loop starts. 32768 measured best at n = 1M, batch 1000.
        **options: see :class:`~semps.matcher.content.index.CompiledIndex`.

    Example:
        >>> from semps.matcher.content.parse import parse_subscription
        >>> index = ReinIndex(buckets=4)
        >>> index.add(parse_subscription("a between 0.2 and 0.5", sub_id="s1"))
        >>> index.add(parse_subscription("a >= 0.4 and b = 1", sub_id="s2"))
        >>> index.rebuild()
        >>> index.match({"a": [0.45], "b": [1]}), index.match({"a": [0.45]})
        (['s1', 's2'], ['s1'])
    """

    name = "rein"

    def __init__(
        self, *, buckets: int = 1000, block: int = 32768, delta_min: int = 1024, **options: float
    ) -> None:
        super().__init__(delta_min=delta_min, **options)
        if buckets < 1:
            msg = f"buckets must be positive, not {buckets}"
            raise ValueError(msg)
        self.buckets = buckets
        self.block = block
        self._empty_lists()

    def _empty_lists(self) -> None:
        empty_off = np.zeros(1, np.int64)
        self.dlo = np.zeros(0)
        self.scale = np.zeros(0)
        self.low = (empty_off, np.zeros(0, np.int32), np.zeros(0))
        self.high = (empty_off, np.zeros(0, np.int32), np.zeros(0))
        self._marks = np.zeros(0, np.uint8)
        self._fails = np.zeros(0, np.int32)

    def _build(self) -> None:
        t, b, ncols = self.table, self.buckets, self.ncols_built
        self.dlo, self.scale = column_domains(t.cols, t.lows, t.highs, ncols, b)
        self.low = build_bucket_list(
            t.starts, t.cols, t.lows, ncols, b, self.dlo, self.scale, self.block
        )
        self.high = build_bucket_list(
            t.starts, t.cols, t.highs, ncols, b, self.dlo, self.scale, self.block
        )
        self._marks = np.zeros(self.built, np.uint8)
        self._fails = np.zeros(self.built, np.int32)

    def _match_built(self, event: EncodedEvent) -> np.ndarray:
        if self.built == 0:
            return np.zeros(0, np.int32)
        out = np.empty(self.built, np.int32)
        n = rein_match(
            event.start, event.values, self.ncols_built, self.buckets, self.block, self.dlo,
            self.scale, self.low, self.high, self.table.alive, self._marks, self._fails, out,
        )  # fmt: skip
        return out[:n]

    def _structure_bytes(self) -> int:
        arrays = (*self.low, *self.high, self._marks, self._fails, self.dlo, self.scale)
        return sum(a.nbytes for a in arrays)
