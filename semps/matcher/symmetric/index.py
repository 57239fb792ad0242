"""RegionIndex: symmetric matching of single publications (the predicate table) and
of batches (a sort-based sweep).

Single publications scan the predicate table with its cross comparison: a lower-bound
row (the subscriptions' lows) is split by the publication's high, an upper-bound row (their
highs) by the publication's low, an equality row (points) by the run ``[low, high]``; an
attribute the publication does not name leaves its rows whole.

Batches (many publications at once, as in data-distribution management) sweep instead.
Subscriptions are grouped in classes of similar length on the attribute most of them name
(lengths within a factor of two), cut into slabs by their low there, and sorted inside a
slab by their low on the second most-named attribute. A publication's candidates in a class
are then a run of slabs (lows in ``[p.low - maxlen, p.high]``) and, inside each, one
binary-searched run on the second attribute; every candidate is checked on every attribute.
Publications are split between threads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from semps.errors import NotFound
from semps.matcher.content.predicate_table import PredicateTable
from semps.matcher.content.space import AttributeSpace
from semps.matcher.content.table import SlotTable, id_order
from semps.matcher.kernels import check_slots
from semps.matcher.results import MatchColumns
from semps.matcher.symmetric._kernels import Layout, slabs_of, sweep_pairs
from semps.matcher.symmetric.region import Region, RegionSubscription

__all__ = ["RegionIndex"]


class RegionIndex:
    """Subscription regions; exact single and batch matching, insert, update and delete.

    The sweep writes each thread's pairs into a buffer sized from the pairs per publication
    seen so far (at least ``min_capacity``), and retries a batch that overflows it.

    Args:
        delta_min: inserts checked directly before the predicate table is rebuilt.
        delta_fraction: or this fraction of the built table.

    Example:
        >>> index = RegionIndex(delta_min=0)
        >>> index.add(RegionSubscription("s1", {"x": (0.1, 0.3), "y": (0.5, 0.5)}))
        >>> index.add(RegionSubscription("s2", {"x": (0.35, 0.9)}))
        >>> index.match({"x": (0.2, 0.4)}), index.match_batch([{"y": (0.6, 0.7)}, {"z": (0, 1)}])
        (['s1', 's2'], [['s2'], ['s1', 's2']])
    """

    min_capacity = 1 << 16

    def __init__(self, *, delta_min: int = 1024, delta_fraction: float = 1 / 16) -> None:
        self.delta_min = delta_min
        self.delta_fraction = delta_fraction
        self.space = AttributeSpace()
        self.table = SlotTable()
        self.structure = PredicateTable()
        self.built = 0
        self._dense: tuple[Layout, np.ndarray] | None = None
        self._dense_version = -1
        self._version = 0
        self._pairs_per_publication = 1
        self._rank: np.ndarray = np.zeros(0, np.int64)
        self._rank_version = -1

    def __len__(self) -> int:
        return self.table.live

    def __contains__(self, sub_id: object) -> bool:
        return sub_id in self.table.slot_of

    def add(self, subscription: RegionSubscription) -> None:
        """Insert (or replace) a subscription region."""
        cols, lows, highs = self.space.encode_conditions(dict(subscription.region))
        if subscription.id in self.table.slot_of:
            self.table.kill(subscription.id)
        self.table.append(subscription.id, cols, lows, highs)
        self._version += 1

    def bulk_load(self, ids: Sequence[str], attrs: Sequence[str], bounds: np.ndarray) -> None:
        """Insert ``n`` regions naming every attribute of ``attrs``: ``bounds`` is (n, d, 2)."""
        n, d, _ = bounds.shape
        if np.any(bounds[..., 0] > bounds[..., 1]) or not np.isfinite(bounds).all():
            raise ValueError("bulk_load bounds must be finite with low <= high")
        cols = np.array([self.space.column(a, False) for a in attrs], np.int32)
        order = np.argsort(cols)
        starts = np.arange(n + 1, dtype=np.int64) * d
        self.table.extend(
            list(ids),
            starts,
            np.tile(cols[order], n),
            bounds[:, order, 0].ravel(),
            bounds[:, order, 1].ravel(),
        )
        self._version += 1

    def remove(self, sub_id: str) -> None:
        if sub_id not in self.table.slot_of:
            msg = f"no symmetric subscription {sub_id!r}"
            raise NotFound(msg)
        self.table.kill(sub_id)
        self._version += 1

    # -- single publications: the predicate table ----------------------------------------------

    def _refresh(self) -> None:
        delta = len(self.table) - self.built
        limit = max(self.delta_min, self.delta_fraction * self.built)
        if delta > limit or self.table.dead > max(self.delta_min, len(self.table) // 4):
            self.table.compact()
            self.built = len(self.table)
            self.structure.build(self.table, len(self.space))
            self._version += 1

    def encode(self, region: Region) -> tuple[np.ndarray, np.ndarray]:
        """The region as per-column (lows, highs); unnamed columns are (-inf, inf)."""
        ncols = len(self.space)
        lo, hi = np.full(ncols, -np.inf), np.full(ncols, np.inf)
        for attr, (low, high) in region.items():
            col = self.space.find(attr, False)
            if col is not None:
                lo[col], hi[col] = low, high
        return lo, hi

    def match_slots(self, region: Region) -> np.ndarray:
        """Matching slots for one publication."""
        self._refresh()
        lo, hi = self.encode(region)
        slots = self.structure.match(self.structure.region_rows(lo, hi), self.table)
        slots = slots[self.table.alive[slots]]
        n = len(self.table)
        if n > self.built:
            out = np.empty(n - self.built, np.int32)
            t = self.table
            k = check_slots(
                self.built, n, t.starts, t.cols, t.lows, t.highs, t.alive,
                np.arange(len(lo) + 1), lo, hi, out,
            )  # fmt: skip
            slots = np.concatenate([slots, out[:k]])
        return slots

    def match(self, region: Region) -> list[str]:
        """Ids of the subscriptions overlapping ``region``, sorted."""
        slots = self.match_slots(region)  # may compact the table: read the ids after
        ids = self.table.ids
        return sorted(ids[s] for s in slots.tolist())

    # -- batches: the sweep ----------------------------------------------------------------

    def _sweep_arrays(self) -> tuple[Layout, np.ndarray]:
        """The sweep's layout ((keys, lows, highs, second-key lows, cells, max lengths,
        slab base and scale), with subscriptions sorted by (class, slab, second-key low)) and
        the slot of each."""
        if self._dense is not None and self._dense_version == self._version:
            return self._dense
        t, ncols = self.table, len(self.space)
        live = np.flatnonzero(t.alive).astype(np.int32)
        rows = np.repeat(np.arange(len(t)), np.diff(t.starts))
        slo = np.full((len(t), ncols), -np.inf)
        shi = np.full((len(t), ncols), np.inf)
        slo[rows, t.cols], shi[rows, t.cols] = t.lows, t.highs
        slo, shi = slo[live], shi[live]
        by_use = np.argsort(-np.isfinite(slo).sum(axis=0), kind="stable")
        k1, k2 = int(by_use[0]), int(by_use[min(1, ncols - 1)])
        len1, len2 = shi[:, k1] - slo[:, k1], shi[:, k2] - slo[:, k2]
        # Length classes within a factor of two on the first key (points, and regions not
        # naming it, get their own), split by whether the second key is named.
        exponent = np.frexp(np.where(np.isfinite(len1) & (len1 > 0), len1, 1.0))[1]
        cls = np.where(np.isfinite(len1), np.where(len1 > 0, exponent, -4096), 1 << 20)
        cls = 2 * cls + ~np.isfinite(len2)
        ranks, cls = np.unique(cls, return_inverse=True)
        nclasses = len(ranks)
        low1 = slo[:, k1]
        finite = low1[np.isfinite(low1)]
        base, span = (float(finite.min()), float(np.ptp(finite))) if len(finite) else (0.0, 0.0)
        sides = len1[np.isfinite(len1) & (len1 > 0)]
        width = float(np.median(sides)) if len(sides) else span
        nslabs = int(min(4096, max(1, span / width))) if span > 0 and width > 0 else 1
        inv = nslabs / span if span > 0 else 0.0
        slab = slabs_of(low1, base, inv, nslabs)
        order = np.lexsort((slo[:, k2], slab, cls))
        counts = np.bincount(cls[order] * nslabs + slab[order], minlength=nclasses * nslabs)
        full = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cells = full[np.arange(nclasses)[:, None] * nslabs + np.arange(nslabs + 1)[None, :]]
        maxlen = np.zeros((nclasses, 2))
        np.maximum.at(maxlen[:, 0], cls, len1)
        np.maximum.at(maxlen[:, 1], cls, len2)
        layout = (
            np.array([k1, k2], np.int64),
            np.ascontiguousarray(slo[order]),
            np.ascontiguousarray(shi[order]),
            np.ascontiguousarray(slo[order, k2]),
            np.ascontiguousarray(cells),
            maxlen,
            np.array([base, inv]),
        )
        self._dense = (layout, live[order])
        self._dense_version = self._version
        return self._dense

    def match_batch_slots(self, regions: Sequence[Region]) -> tuple[np.ndarray, np.ndarray]:
        """Every overlap of a batch: CSR (offsets per publication, slots)."""
        layout, slots = self._sweep_arrays()
        ncols = layout[1].shape[1]
        plo = np.full((len(regions), ncols), -np.inf)
        phi = np.full((len(regions), ncols), np.inf)
        column = {a: c for c, (a, is_string) in enumerate(self.space.columns()) if not is_string}
        at: list[int] = []
        cols: list[int] = []
        lows: list[float] = []
        highs: list[float] = []
        for i, region in enumerate(regions):  # one pass of plain Python, then one scatter
            for attr, (low, high) in region.items():
                col = column.get(attr)
                if col is not None:
                    at.append(i)
                    cols.append(col)
                    lows.append(low)
                    highs.append(high)
        plo[at, cols], phi[at, cols] = lows, highs
        parts = max(1, min(numba.get_num_threads(), len(regions)))
        capacity = max(self.min_capacity, self._pairs_per_publication * len(regions) // parts * 2)
        while True:
            counts, out, used, over = sweep_pairs(layout, plo, phi, parts, capacity)
            if not over:
                break
            capacity *= 4
        rows = np.concatenate([out[t * capacity : t * capacity + used[t]] for t in range(parts)])
        self._pairs_per_publication = max(1, len(rows) // max(1, len(regions)))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return offsets, slots[rows]

    def match_batch(self, regions: Sequence[Region]) -> list[list[str]]:
        """:meth:`match` for several publications at once (the sweep)."""
        if not regions:
            return []
        if not len(self):
            return [[] for _ in regions]
        offsets, slots = self.match_batch_slots(regions)
        ids = self.table.ids
        return [
            sorted(ids[s] for s in slots[offsets[i] : offsets[i + 1]].tolist())
            for i in range(len(regions))
        ]

    def match_columns(self, regions: Sequence[Region]) -> MatchColumns:
        """:meth:`match_batch` as columns (slots into the table's ids, every count 1)."""
        if not regions or not len(self):
            return MatchColumns.empty(len(regions))
        offsets, slots = self.match_batch_slots(regions)
        event = np.repeat(np.arange(len(regions), dtype=np.int64), np.diff(offsets))
        order = np.lexsort((self._id_rank()[slots], event))
        slots = slots[order].astype(np.int64)
        return MatchColumns(
            len(regions), event, slots, self.table.ids, np.ones(len(slots), np.int64)
        )

    def _id_rank(self) -> np.ndarray:
        """Each slot's position in subscription-id order (for sorting matches by id)."""
        if self._rank_version != self._version or len(self._rank) != len(self.table):
            order = id_order(self.table.ids)
            n = len(self.table)
            rank = np.arange(n, dtype=np.int64)
            if order is not None:
                rank[order] = np.arange(n, dtype=np.int64)
            self._rank, self._rank_version = rank, self._version
        return self._rank
