"""Compiled kernels building the cell bitsets (:mod:`semps.matcher.content.cells`); the
layout is described in :mod:`semps.matcher.content._cell_kernels`."""

from __future__ import annotations

import numpy as np

from semps.matcher.content._cell_kernels import bucket_in
from semps.matcher.content._kernels import U1
from semps.matcher.kernels import jit


@jit
def column_samples(
    cols: np.ndarray, lows: np.ndarray, highs: np.ndarray, ncols: int, per_column: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: how many finite bounds it has, and the finite bounds of every
    ``stride``-th predicate on it (about ``per_column`` bounds), sorted:
    ``sample[soff[c]:soff[c + 1]]``."""
    count = np.zeros(ncols, np.int64)
    preds = np.zeros(ncols, np.int64)
    for p in range(cols.shape[0]):
        c = cols[p]
        preds[c] += 1
        count[c] += np.isfinite(lows[p]) + np.isfinite(highs[p])
    stride = np.maximum(1, (2 * preds + per_column - 1) // max(1, per_column))
    taken = np.zeros(ncols, np.int64)
    seen = np.zeros(ncols, np.int64)
    for p in range(cols.shape[0]):
        c = cols[p]
        if seen[c] % stride[c] == 0:
            taken[c] += np.isfinite(lows[p]) + np.isfinite(highs[p])
        seen[c] += 1
    soff = np.zeros(ncols + 1, np.int64)
    for c in range(ncols):
        soff[c + 1] = soff[c] + taken[c]
    sample = np.empty(soff[ncols])
    fill = soff[:-1].copy()
    seen[:] = 0
    for p in range(cols.shape[0]):
        c = cols[p]
        if seen[c] % stride[c] == 0:
            for x in (lows[p], highs[p]):
                if np.isfinite(x):
                    sample[fill[c]] = x
                    fill[c] += 1
        seen[c] += 1
    for c in range(ncols):
        sample[soff[c] : soff[c + 1]] = np.sort(sample[soff[c] : soff[c + 1]])
    return count, soff, sample


@jit
def column_edges(sample: np.ndarray, nbuckets: int) -> np.ndarray:
    """Bucket edges from a sorted sample: about ``nbuckets`` equal-count buckets, and a
    bucket of its own (``[u, nextafter(u))``) for each value ``u`` filling a bucket or more
    of the sample, so that one common value (an equality) never shares its bucket."""
    n = sample.shape[0]
    if n == 0:
        return np.empty(0)
    step = max(1.0, n / max(1, nbuckets))
    out = np.empty(2 * nbuckets + 4)
    k = 0
    out[k] = sample[0]
    k += 1
    i = 0
    nxt = step
    while i < n:
        j = i
        while j < n and sample[j] == sample[i]:
            j += 1
        u = sample[i]
        if j - i >= step:  # heavy: [u, nextafter(u)) alone
            if out[k - 1] != u:
                out[k] = u
                k += 1
            out[k] = np.nextafter(u, np.inf)
            k += 1
            nxt = j + step
        elif i >= nxt and out[k - 1] < u:
            out[k] = u
            k += 1
            nxt = i + step
        if k >= out.shape[0] - 2:
            break
        i = j
    return out[:k].copy()


#: Grid points per edge in :func:`bound_buckets`.
GRID = 4


@jit
def _bucket_grid(
    eoff: np.ndarray, edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column, equal steps over its edges (``base``, ``step``; 0: none) and the local
    bucket of each step's point (``at[goff[c]:goff[c + 1]]``)."""
    ncols = eoff.shape[0] - 1
    goff = np.zeros(ncols + 1, np.int64)
    for c in range(ncols):
        goff[c + 1] = goff[c] + GRID * (eoff[c + 1] - eoff[c]) + 2
    at = np.empty(goff[ncols], np.int64)
    base = np.zeros(ncols)
    step = np.zeros(ncols)
    for c in range(ncols):
        e0, e1 = eoff[c], eoff[c + 1]
        n = goff[c + 1] - goff[c] - 1
        if e1 > e0:
            base[c] = edges[e0]
            width = edges[e1 - 1] - edges[e0]
            if width > 0 and np.isfinite(width):
                step[c] = width / (n - 1)
        for i in range(n + 1):
            x = base[c] + i * step[c]
            at[goff[c] + i] = e1 - e0 if step[c] == 0.0 else bucket_in(edges, e0, e1, x)
    return goff, at, base, step


@jit
def bound_buckets(
    cols: np.ndarray,
    bounds: np.ndarray,
    eoff: np.ndarray,
    edges: np.ndarray,
    bbase: np.ndarray,
) -> np.ndarray:
    """The global bucket of every finite bound (-1 for infinite ones). A grid of equal
    steps over each column's edges narrows every search to a few edges."""
    goff, at, base, step = _bucket_grid(eoff, edges)
    out = np.empty(cols.shape[0], np.int64)
    for p in range(cols.shape[0]):
        x = bounds[p]
        if not np.isfinite(x):
            out[p] = -1
            continue
        c = cols[p]
        e0, e1 = eoff[c], eoff[c + 1]
        if step[c] == 0.0 or not x > base[c]:
            out[p] = bbase[c] + bucket_in(edges, e0, e1, x)
            continue
        n = goff[c + 1] - goff[c] - 1
        i = min(int((x - base[c]) / step[c]), n - 1)
        # x lies between the grid points i - 1 and i + 2 whatever the rounding of i; one
        # edge more either side keeps the search right: edges[lo - 1] <= x < edges[hi]
        lo = at[goff[c] + i - 1] if i >= 1 else 0
        hi = at[goff[c] + i + 2] if i + 2 <= n else e1 - e0
        lo, hi = e0 + max(lo - 1, 0), e0 + min(hi + 1, e1 - e0)
        out[p] = bbase[c] + (lo - e0) + bucket_in(edges, lo, hi, x)
    return out


@jit
def single_buckets(
    bounds_lo: np.ndarray,
    bucket_lo: np.ndarray,
    bounds_hi: np.ndarray,
    bucket_hi: np.ndarray,
    lower_edge: np.ndarray,
) -> np.ndarray:
    """Per bucket: does every bound in it equal its lower edge (NaN for bucket 0)?"""
    single = np.ones(lower_edge.shape[0], np.bool_)
    for p in range(bucket_lo.shape[0]):
        g = bucket_lo[p]
        if g >= 0 and bounds_lo[p] != lower_edge[g]:
            single[g] = False
    for p in range(bucket_hi.shape[0]):
        g = bucket_hi[p]
        if g >= 0 and bounds_hi[p] != lower_edge[g]:
            single[g] = False
    return single


@jit
def bucket_cells(
    lo_at: np.ndarray, hi_at: np.ndarray, bbase: np.ndarray, cells: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group each column's buckets into at most ``cells[c]`` cells of about equal bound counts:
    ``cell_of`` (per bucket), ``first`` (per cell, plus the end) and ``cbase``."""
    ncols = bbase.shape[0] - 1
    nb = bbase[ncols]
    cell_of = np.empty(nb, np.int64)
    cbase = np.zeros(ncols + 1, np.int64)
    first = np.empty(nb + 1, np.int64)
    k = 0
    for c in range(ncols):
        g0, g1 = bbase[c], bbase[c + 1]
        total = (lo_at[g1] - lo_at[g0]) + (hi_at[g1] - hi_at[g0])
        per = max(1.0, total / max(1, cells[c]))
        first[k] = g0
        acc = 0
        for g in range(g0, g1):
            if acc >= per and k + 1 - cbase[c] < cells[c]:
                k += 1
                first[k] = g
                acc -= per
                if acc >= per:  # one bucket holds several cells' worth
                    acc = 0
            cell_of[g] = k
            acc += (lo_at[g + 1] - lo_at[g]) + (hi_at[g + 1] - hi_at[g])
        k += 1
        cbase[c + 1] = k
    first[k] = nb
    return cell_of, first[: k + 1].copy(), cbase


@jit
def fail_rows(
    lo_at: np.ndarray,
    lo_slot: np.ndarray,
    hi_at: np.ndarray,
    hi_slot: np.ndarray,
    bbase: np.ndarray,
    cell_of: np.ndarray,
    cbase: np.ndarray,
    frow: np.ndarray,
    con: np.ndarray,
    rows: np.ndarray,
) -> None:
    """Fill the fail rows and the constrained rows (``rows`` zeroed), one column at a time
    from the bucket lists (a column's rows stay in cache). A slot is in the fail set of
    every cell below its low bound's and above its high bound's: a difference row gets a
    bit flipped at each end, then a running XOR makes the rows. Infinite bounds flip
    nothing, and every predicate has a finite bound, so the lists also give the
    constrained rows."""
    ncols = cbase.shape[0] - 1
    nwords = rows.shape[1]
    for c in range(ncols):
        k0, k1 = cbase[c], cbase[c + 1]
        g0, g1 = bbase[c], bbase[c + 1]
        if con[c] >= 0:
            crow = rows[con[c]]
            for i in range(lo_at[g0], lo_at[g1]):
                s = lo_slot[i]
                crow[s >> 6] |= U1 << np.uint64(s & 63)
            for i in range(hi_at[g0], hi_at[g1]):
                s = hi_slot[i]
                crow[s >> 6] |= U1 << np.uint64(s & 63)
        if frow[k0] < 0:
            continue
        for g in range(g0, g1):
            k = cell_of[g]
            if k > k0:  # lows in cell k: in the fail rows of cells k0..k-1
                for i in range(lo_at[g], lo_at[g + 1]):
                    s = lo_slot[i]
                    bit = U1 << np.uint64(s & 63)
                    rows[frow[k0], s >> 6] ^= bit
                    rows[frow[k], s >> 6] ^= bit
            if k + 1 < k1:  # highs in cell k: in those of k+1..k1-1
                for i in range(hi_at[g], hi_at[g + 1]):
                    s = hi_slot[i]
                    rows[frow[k + 1], s >> 6] ^= U1 << np.uint64(s & 63)
        for k in range(k0 + 1, k1):
            prev = rows[frow[k - 1]]
            row = rows[frow[k]]
            for w in range(nwords):
                row[w] ^= prev[w]
