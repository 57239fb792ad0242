"""Compiled kernels matching and updating the cell bitsets (:mod:`semps.matcher.content.cells`;
:mod:`semps.matcher.content._cell_build_kernels` builds them).

Every array is flat, the columns one after another:

- ``edges[eoff[c]:eoff[c + 1]]``: column ``c``'s bucket edges, ascending and distinct; the
  bucket of a value ``v`` is the number of edges ``<= v``, so column ``c`` has
  ``eoff[c + 1] - eoff[c] + 1`` buckets, numbered globally from ``bbase[c]``.
- ``cell_of[g]``: the (global) cell of bucket ``g``; cell ``k`` is the buckets
  ``first[k]:first[k + 1]``, and column ``c``'s cells are ``cbase[c]:cbase[c + 1]``.
- ``frow[k]``: the row of ``rows`` holding cell ``k``'s *fail set* (the slots whose interval
  on the column misses the whole cell), or -1; ``con[c]``: the row of the slots constraining
  column ``c``, or -1.
- ``lo_slot[lo_at[g]:lo_at[g + 1]]``: the slots whose finite low bound lies in bucket ``g``;
  ``hi_slot``/``hi_at`` the same for high bounds. Infinite bounds are in no list (they never
  fail).
- ``single[g]``: every bound in bucket ``g`` equals the bucket's lower edge.

Rows are bitsets over slots, 64 to a word.
"""

from __future__ import annotations

import numpy as np

from semps.matcher.content._kernels import U1, _ctz
from semps.matcher.kernels import jit

#: The structure's arrays, in this order (see the module doc): eoff, edges, bbase, cell_of,
#: first, cbase, frow, con, lo_at, lo_slot, hi_at, hi_slot, single, rows.
Cells = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
]  # fmt: skip


@jit
def bucket_in(edges: np.ndarray, e0: int, e1: int, v: float) -> int:
    """The local bucket of ``v`` among ``edges[e0:e1]``: how many are ``<= v``."""
    lo, hi = e0, e1
    while lo < hi:
        mid = (lo + hi) >> 1
        if edges[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo - e0


# -- updates -----------------------------------------------------------------------------------


@jit
def mark_slots(
    s0: int,
    s1: int,
    starts: np.ndarray,
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    alive: np.ndarray,
    ncols: int,
    cells: Cells,
    dead: np.ndarray,
) -> None:
    """Enter slots ``s0..s1`` (added after the build) into the fail and constrained rows
    and the dead set; their bounds are in no bucket list, so they are always checked."""
    eoff, edges, bbase, cell_of, first, cbase, frow, con = cells[:8]
    rows = cells[13]
    for s in range(s0, s1):
        w = s >> 6
        bit = U1 << np.uint64(s & 63)
        if not alive[s]:
            dead[w] |= bit
            continue
        for p in range(starts[s], starts[s + 1]):
            c = cols[p]
            if c >= ncols:
                continue
            if con[c] >= 0:
                rows[con[c], w] |= bit
            k0, k1 = cbase[c], cbase[c + 1]
            if frow[k0] < 0:
                continue
            e0, e1 = eoff[c], eoff[c + 1]
            cl = k0
            if np.isfinite(lows[p]):
                cl = cell_of[bbase[c] + bucket_in(edges, e0, e1, lows[p])]
            ch = k1 - 1
            if np.isfinite(highs[p]):
                ch = cell_of[bbase[c] + bucket_in(edges, e0, e1, highs[p])]
            for k in range(k0, cl):
                rows[frow[k], w] |= bit
            for k in range(ch + 1, k1):
                rows[frow[k], w] |= bit


# -- matching ----------------------------------------------------------------------------------


@jit
def _or_row(acc: np.ndarray, row: np.ndarray, nw: int) -> None:
    for w in range(nw):
        acc[w] |= row[w]


@jit
def _set_slots(bits: np.ndarray, slots: np.ndarray, i0: int, i1: int) -> None:
    for i in range(i0, i1):
        s = slots[i]
        bits[s >> 6] |= U1 << np.uint64(s & 63)


@jit
def _value_fails(c: int, v: float, cells: Cells, out: np.ndarray, unc: np.ndarray) -> None:
    """Set in ``out`` the slots of the bucket lists that ``v`` certainly fails in its cell
    (the cell's fail row is not included), and in ``unc`` those of its own bucket that it
    may fail (their bounds are not stored: those slots are checked against the table)."""
    eoff, edges, bbase, cell_of, first = cells[:5]
    lo_at, lo_slot, hi_at, hi_slot, single = cells[8:13]
    q = bucket_in(edges, eoff[c], eoff[c + 1], v)
    g = bbase[c] + q
    k = cell_of[g]
    # lows in the buckets above v's (up to the cell's end) exceed v; highs below are under it
    _set_slots(out, lo_slot, lo_at[g + 1], lo_at[first[k + 1]])
    _set_slots(out, hi_slot, hi_at[first[k]], hi_at[g])
    if single[g] and q > 0:  # every bound here is the lower edge u <= v: lows hold
        if v > edges[eoff[c] + q - 1]:  # and highs fail unless v == u
            _set_slots(out, hi_slot, hi_at[g], hi_at[g + 1])
    else:
        _set_slots(unc, lo_slot, lo_at[g], lo_at[g + 1])
        _set_slots(unc, hi_slot, hi_at[g], hi_at[g + 1])


@jit
def _several_values(
    c: int,
    ev_vals: np.ndarray,
    q0: int,
    q1: int,
    cells: Cells,
    acc: np.ndarray,
    unc: np.ndarray,
    tmp: np.ndarray,
    one: np.ndarray,
    nw: int,
) -> None:
    """A column with several values fails the slots every value fails: per value its exact
    fail set (cell row and lists) into ``one``, AND-ed into ``tmp``, OR-ed into ``acc``."""
    bbase, cell_of, frow = cells[2], cells[3], cells[6]
    eoff, edges, rows = cells[0], cells[1], cells[13]
    tmp[:nw] = ~np.uint64(0)
    for i in range(q0, q1):
        v = ev_vals[i]
        k = cell_of[bbase[c] + bucket_in(edges, eoff[c], eoff[c + 1], v)]
        if frow[k] >= 0:
            one[:nw] = rows[frow[k], :nw]
        else:
            one[:nw] = 0
        _value_fails(c, v, cells, one, unc)
        for w in range(nw):
            tmp[w] &= one[w]
    _or_row(acc, tmp, nw)


@jit
def _holds(
    s: int,
    starts: np.ndarray,
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    ev_start: np.ndarray,
    ev_vals: np.ndarray,
) -> bool:
    """Does the event satisfy every predicate of slot ``s``?"""
    ncols_ev = ev_start.shape[0] - 1
    for p in range(starts[s], starts[s + 1]):
        c = cols[p]
        if c >= ncols_ev:
            return False
        hit = False
        for q in range(ev_start[c], ev_start[c + 1]):
            if lows[p] <= ev_vals[q] <= highs[p]:
                hit = True
                break
        if not hit:
            return False
    return True


@jit
def dense_event(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An event given as one value per column (NaN: missing) as ``(ev_start, ev_vals)``."""
    ncols = values.shape[0]
    start = np.zeros(ncols + 1, np.int64)
    for c in range(ncols):
        start[c + 1] = start[c] + (values[c] == values[c])
    vals = np.empty(start[ncols])
    for c in range(ncols):
        if values[c] == values[c]:
            vals[start[c]] = values[c]
    return start, vals


@jit
def _or_rows(acc: np.ndarray, rows: np.ndarray, picked: np.ndarray, count: int, nw: int) -> None:
    """OR the rows ``picked[:count]`` into ``acc``, four to a pass: the rows stream from
    memory while ``acc`` is read and written once per four rows, not once per row."""
    i = 0
    while i + 4 <= count:
        a, b, c, d = rows[picked[i]], rows[picked[i + 1]], rows[picked[i + 2]], rows[picked[i + 3]]
        for w in range(nw):
            acc[w] |= a[w] | b[w] | c[w] | d[w]
        i += 4
    if count - i == 3:
        a, b, c = rows[picked[i]], rows[picked[i + 1]], rows[picked[i + 2]]
        for w in range(nw):
            acc[w] |= a[w] | b[w] | c[w]
    elif count - i == 2:
        a, b = rows[picked[i]], rows[picked[i + 1]]
        for w in range(nw):
            acc[w] |= a[w] | b[w]
    elif count - i == 1:
        _or_row(acc, rows[picked[i]], nw)


@jit
def cell_match(
    ev_start: np.ndarray,
    ev_vals: np.ndarray,
    ncols: int,
    built: int,
    nslots: int,
    starts: np.ndarray,
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    cells: Cells,
    dead: np.ndarray,
    scratch: np.ndarray,
    out: np.ndarray,
) -> int:
    """Write the live slots ``0..nslots-1`` the event matches to ``out``, ascending; return
    their count. ``scratch`` holds four rows (fails, uncertain, two for several values).

    First the lists of each value's cell set the slots failing there, exactly, without a
    comparison (random bits of ``acc``, while it is small enough to stay in cache); then
    every column's cell row is OR-ed in, four rows a pass (streams of 64 slots a word); the
    slots of the value's own bucket, and those added since the build, are checked against
    their predicates, only when nothing else failed them."""
    con, frow, bbase, cell_of = cells[7], cells[6], cells[2], cells[3]
    eoff, edges, rows = cells[0], cells[1], cells[13]
    lo_at, lo_slot, hi_at, hi_slot = cells[8], cells[9], cells[10], cells[11]
    nw = (nslots + 63) >> 6
    acc, unc, tmp, one = scratch[0], scratch[1], scratch[2], scratch[3]
    acc[:nw] = 0
    unc[:nw] = 0
    picked = np.empty(ncols, np.int64)
    count = 0
    ncols_ev = ev_start.shape[0] - 1
    for c in range(ncols):
        nv = ev_start[c + 1] - ev_start[c] if c < ncols_ev else 0
        if nv == 1:
            v = ev_vals[ev_start[c]]
            k = cell_of[bbase[c] + bucket_in(edges, eoff[c], eoff[c + 1], v)]
            if frow[k] >= 0:
                picked[count] = frow[k]
                count += 1
            _value_fails(c, v, cells, acc, unc)
        elif nv == 0:
            if con[c] >= 0:
                picked[count] = con[c]
                count += 1
            else:  # a list-only column the event lacks: all fail
                g0, g1 = bbase[c], bbase[c + 1]
                _set_slots(acc, lo_slot, lo_at[g0], lo_at[g1])
                _set_slots(acc, hi_slot, hi_at[g0], hi_at[g1])
        else:
            _several_values(c, ev_vals, ev_start[c], ev_start[c + 1], cells, acc, unc, tmp, one, nw)
    _or_rows(acc, rows, picked, count, nw)
    n = 0
    for w in range(nw):
        z = ~(acc[w] | dead[w])
        if w == nw - 1 and nslots & 63:
            z &= (U1 << np.uint64(nslots & 63)) - U1
        check = unc[w]
        while z:
            b = _ctz(z)
            z &= z - U1
            s = (w << 6) + b
            if (s >= built or (check >> np.uint64(b)) & U1) and not _holds(
                s, starts, cols, lows, highs, ev_start, ev_vals
            ):
                continue
            out[n] = s
            n += 1
    return n
