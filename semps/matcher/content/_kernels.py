"""Compiled kernels (numba) of the content matchers; the modules above hold the structures.

Conventions shared by every kernel:

- Subscriptions (or aggregates) are *slots* ``0..n-1``. Slot ``s`` holds the predicates
  ``starts[s]:starts[s+1]`` of the arrays ``cols`` (column), ``lows`` and ``highs`` (closed
  interval, ``-inf``/``inf`` when open): at most one per column, sorted by column.
- An encoded event gives, per column ``c``, its values ``ev_vals[ev_start[c]:ev_start[c+1]]``
  (none: the attribute is missing). A constraint holds when some value lies in its interval.
- Bucket lists (REIN/HCEM) are CSR arrays: entries of column ``c`` and bucket ``j`` are
  ``off[c*b + j]:off[c*b + j + 1]``, each with its slot (``sid``) and bound (``val``).
"""

from __future__ import annotations

import numpy as np

from semps.matcher.kernels import jit

#: One REIN bucket list (``off``, ``sid``, ``val``; see above).
BucketList = tuple[np.ndarray, np.ndarray, np.ndarray]

U1 = np.uint64(1)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_TABLE = np.array(
    [
        0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
        62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
        63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
        46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
    ],
    dtype=np.int64,
)  # fmt: skip


@jit
def bucket_of(v: float, lo: float, scale: float, b: int) -> int:
    """The bucket of ``v``: monotone in ``v`` and clamped to ``0..b-1``.

    Exactness never depends on the domain ``lo``/``scale``: a bound in a higher bucket than
    a value is greater than it, whatever the domain, because the function is monotone.
    """
    x = (v - lo) * scale
    if not x > 0.0:  # also NaN (0 * inf)
        return 0
    if x >= b:
        return b - 1
    return int(x)


@jit
def _ctz(word: np.uint64) -> int:
    return int(_DEBRUIJN_TABLE[((word & (~word + U1)) * _DEBRUIJN) >> np.uint64(58)])


@jit
def column_domains(
    cols: np.ndarray, lows: np.ndarray, highs: np.ndarray, ncols: int, b: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the low end and the scale mapping finite bounds onto ``b`` buckets."""
    dlo = np.full(ncols, np.inf)
    dhi = np.full(ncols, -np.inf)
    for p in range(cols.shape[0]):
        c = cols[p]
        for x in (lows[p], highs[p]):
            if np.isfinite(x):
                dlo[c] = min(dlo[c], x)
                dhi[c] = max(dhi[c], x)
    scale = np.zeros(ncols)
    for c in range(ncols):
        if dlo[c] > dhi[c]:
            dlo[c] = 0.0
            dhi[c] = 0.0
        if dhi[c] > dlo[c]:
            scale[c] = b / (dhi[c] - dlo[c])
    return dlo, scale


@jit
def group_by_key(keys: np.ndarray, nkeys: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by their ``keys`` (``0..nkeys-1``; a negative key: left out), in
    their order within each group (a counting sort): the groups' offsets, and the values."""
    off = np.zeros(nkeys + 1, np.int64)
    for t in range(keys.shape[0]):
        if keys[t] >= 0:
            off[keys[t] + 1] += 1
    for k in range(nkeys):
        off[k + 1] += off[k]
    fill = off[:-1].copy()
    out = np.empty(off[nkeys], values.dtype)
    for t in range(keys.shape[0]):
        k = keys[t]
        if k >= 0:
            out[fill[k]] = values[t]
            fill[k] += 1
    return off, out


# -- REIN bucket lists -------------------------------------------------------------------------


@jit
def build_bucket_list(
    starts: np.ndarray,
    cols: np.ndarray,
    bounds: np.ndarray,
    ncols: int,
    b: int,
    dlo: np.ndarray,
    scale: np.ndarray,
    block: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One bucket list per column (L_low from the lows, L_high from the highs), cut into
    slot blocks: the entries of block ``k``, column ``c``, bucket ``j`` are
    ``off[(k*ncols + c)*b + j] : ...+1``, slots ascending. Matching walks one block of slots
    at a time, so the marks it writes stay in cache."""
    nslots = starts.shape[0] - 1
    nblocks = (nslots + block - 1) // block
    npred = cols.shape[0]
    key = np.empty(npred, np.int64)
    off = np.zeros(nblocks * ncols * b + 1, np.int64)
    for s in range(nslots):
        k0 = (s // block) * ncols
        for p in range(starts[s], starts[s + 1]):
            c = cols[p]
            k = (k0 + c) * b + bucket_of(bounds[p], dlo[c], scale[c], b)
            key[p] = k
            off[k + 1] += 1
    for k in range(nblocks * ncols * b):
        off[k + 1] += off[k]
    fill = off[:-1].copy()
    sid = np.empty(npred, np.int32)
    val = np.empty(npred, np.float64)
    for s in range(nslots):
        for p in range(starts[s], starts[s + 1]):
            k = key[p]
            i = fill[k]
            fill[k] = i + 1
            sid[i] = s
            val[i] = bounds[p]
    return off, sid, val


@jit
def _rein_value(
    base: int,
    j: int,
    v: float,
    b: int,
    low: BucketList,
    high: BucketList,
    arr: np.ndarray,
    add: bool,
) -> None:
    """Negative search for one value in bucket ``j`` of one block's lists (at ``base``):
    set (or count, ``add``) every slot it fails."""
    low_off, low_sid, low_val = low
    high_off, high_sid, high_val = high
    # L_low: every low in a higher bucket exceeds v; the value's own bucket is compared.
    for i in range(low_off[base + j + 1], low_off[base + b]):
        arr[low_sid[i]] = arr[low_sid[i]] + 1 if add else 1
    for i in range(low_off[base + j], low_off[base + j + 1]):
        if low_val[i] > v:
            arr[low_sid[i]] = arr[low_sid[i]] + 1 if add else 1
    # L_high, mirrored: every high in a lower bucket is below v.
    for i in range(high_off[base], high_off[base + j]):
        arr[high_sid[i]] = arr[high_sid[i]] + 1 if add else 1
    for i in range(high_off[base + j], high_off[base + j + 1]):
        if high_val[i] < v:
            arr[high_sid[i]] = arr[high_sid[i]] + 1 if add else 1


@jit
def rein_match(
    ev_start: np.ndarray,
    ev_vals: np.ndarray,
    ncols: int,
    b: int,
    block: int,
    dlo: np.ndarray,
    scale: np.ndarray,
    low: BucketList,
    high: BucketList,
    alive: np.ndarray,
    marks: np.ndarray,
    fails: np.ndarray,
    out: np.ndarray,
) -> int:
    """REIN for one event: mark unmatched slots in ``marks``, then write the live unmarked
    ones to ``out`` (ascending); returns their count. Slot blocks are visited in turn, so
    the marks being written stay in cache.

    A missing attribute fails every slot that constrains it. For an attribute with several
    values, ``fails`` counts per slot the values it rejects; rejected by all means unmatched.
    """
    low_off, low_sid, _ = low
    nslots = marks.shape[0]
    ncols_ev = ev_start.shape[0] - 1
    nblocks = (low_off.shape[0] - 1) // (ncols * b) if ncols > 0 else 0
    buckets = np.empty(ncols, np.int64)
    for c in range(ncols):
        nv = ev_start[c + 1] - ev_start[c] if c < ncols_ev else 0
        buckets[c] = bucket_of(ev_vals[ev_start[c]], dlo[c], scale[c], b) if nv == 1 else -1
    found = np.zeros(nblocks, np.int64)
    for blk in range(nblocks):
        s0 = blk * block
        s1 = min(nslots, s0 + block)
        marks[s0:s1] = 0
        for c in range(ncols):
            base = (blk * ncols + c) * b
            a0 = low_off[base]
            a1 = low_off[base + b]
            if a0 == a1:
                continue
            nv = ev_start[c + 1] - ev_start[c] if c < ncols_ev else 0
            if nv == 0:
                for i in range(a0, a1):
                    marks[low_sid[i]] = 1
            elif nv == 1:
                _rein_value(base, buckets[c], ev_vals[ev_start[c]], b, low, high, marks, False)
            else:
                for q in range(ev_start[c], ev_start[c + 1]):
                    v = ev_vals[q]
                    j = bucket_of(v, dlo[c], scale[c], b)
                    _rein_value(base, j, v, b, low, high, fails, True)
                for i in range(a0, a1):  # every slot constraining c has one low entry
                    s = low_sid[i]
                    if fails[s] == nv:
                        marks[s] = 1
                    fails[s] = 0
        n = 0
        for s in range(s0, s1):
            if marks[s] == 0 and alive[s]:
                out[s0 + n] = s
                n += 1
        found[blk] = n
    n = 0
    for blk in range(nblocks):
        s0 = blk * block
        for i in range(found[blk]):
            out[n] = out[s0 + i]
            n += 1
    return n
