"""Compiled kernels (numba) of the predicate table; conventions as in
:mod:`semps.matcher.content._kernels`."""

from __future__ import annotations

import numpy as np

from semps.matcher.kernels import jit, search_sorted

# -- the predicate table ----------------------------------------------------------------------

#: How a row is tested for one event (``mode`` array of :func:`table_match`).
ROW_NONE, ROW_ALL, ROW_PREFIX, ROW_RANGE, ROW_GIVEN, ROW_VALUES = 0, 1, 2, 3, 4, 5

#: A slot table's units (CSR ``starts``, ``cols``, ``lows``, ``highs``).
Units = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@jit
def _holds_any(
    slot: int, col: int, units: Units, ev_start: np.ndarray, ev_vals: np.ndarray
) -> bool:
    """Does one of the event's values on ``col`` lie in ``slot``'s interval on ``col``?"""
    starts, cols, lows, highs = units
    for p in range(starts[slot], starts[slot + 1]):
        if cols[p] == col:
            for q in range(ev_start[col], ev_start[col + 1]):
                if lows[p] <= ev_vals[q] and ev_vals[q] <= highs[p]:
                    return True
            return False
    return False


@jit
def table_match(
    row_start: np.ndarray,
    keys: np.ndarray,
    nxt: np.ndarray,
    owner: np.ndarray,
    heads: np.ndarray,
    heads_off: np.ndarray,
    mode: np.ndarray,
    qa: np.ndarray,
    qb: np.ndarray,
    units: Units,
    ev_start: np.ndarray,
    ev_vals: np.ndarray,
    bucket: np.ndarray,
    bcount: np.ndarray,
    out: np.ndarray,
) -> int:
    """Match the predicate table row by row and return the matched slot count.

    Each row is sorted so that the predicates an event satisfies are one run
    ``[lo, hi)`` found by binary search (``mode``/``qa``/``qb`` say how). The match bucket
    ``bucket`` holds, per row, the predicates reached by a chain whose earlier predicates all
    held; the initial bucket is the static list of every chain's first predicate (``heads``,
    sorted, so the satisfied heads are again one run). Comparing a reached predicate's index
    with the run's ends is the intersection ``Pi_match ∩ Bi``; a reached last predicate is a
    match, any other passes its successor into its row's bucket. Rows whose column has
    several event values (``ROW_VALUES``) check the slot's interval against the values.
    """
    n = 0
    nrows = row_start.shape[0] - 1
    for r in range(nrows):
        rs = row_start[r]
        re = row_start[r + 1]
        if rs == re:
            continue
        m = mode[r]
        lo = rs
        hi = rs
        if m == ROW_ALL:
            hi = re
        elif m == ROW_PREFIX:
            hi = search_sorted(keys, rs, re, qa[r], True)
        elif m == ROW_RANGE:
            lo = search_sorted(keys, rs, re, qa[r], False)
            hi = search_sorted(keys, rs, re, qb[r], True)
        elif m == ROW_GIVEN:
            lo = rs + int(qa[r])
            hi = rs + int(qb[r])
        h0 = heads_off[r]
        h1 = heads_off[r + 1]
        nb_ = bcount[r]
        bcount[r] = 0
        values = m == ROW_VALUES
        if values:  # every reached predicate, checked against the values
            k0, k1 = h0, h1
        elif lo < hi:  # the reached predicates in [lo, hi)
            k0 = search_sorted(heads, h0, h1, lo, False)
            k1 = search_sorted(heads, k0, h1, hi, False)
        else:
            continue
        for k in range(k0, k1 + nb_):
            if k < k1:
                g = heads[k]
            else:
                g = bucket[rs + k - k1]
                if not values and (g < lo or g >= hi):
                    continue
            if values and not _holds_any(owner[g], r // 3, units, ev_start, ev_vals):
                continue
            nx = nxt[g]
            if nx < 0:
                out[n] = owner[g]
                n += 1
            else:
                rr = _row_of(row_start, r, nx)
                bucket[row_start[rr] + bcount[rr]] = nx
                bcount[rr] += 1
    return n


@jit
def _row_of(row_start: np.ndarray, after: int, g: int) -> int:
    """The row holding table position ``g`` (a row below ``after``): a binary search over
    the few row offsets, cheaper than reading a stored row number from memory."""
    lo = after + 1
    hi = row_start.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if row_start[mid] <= g:
            lo = mid
        else:
            hi = mid
    return lo


@jit
def table_nodes(
    starts: np.ndarray, cols: np.ndarray, lows: np.ndarray, highs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The predicates of the table in chain order: (row, key, owner slot, first-of-chain).

    A closed interval ``[lo, hi]`` on column ``c`` is an equality predicate (row ``3c+2``,
    key ``lo``) when ``lo == hi``, else a lower-bound ``c >= lo`` (row ``3c``, key ``lo``)
    and/or an upper-bound ``c <= hi`` (row ``3c+1``, key ``-hi``: sorted ascending, so the
    row reads highs in descending order as in the seed). ``(-inf, inf)`` (an aggregate's
    hull can be that) is the lower bound ``c >= -inf``: "has a value".
    """
    nslots = starts.shape[0] - 1
    total = 0
    for p in range(cols.shape[0]):
        if lows[p] == highs[p]:
            total += 1
        else:
            total += int(lows[p] > -np.inf or highs[p] == np.inf) + int(highs[p] < np.inf)
    row = np.empty(total, np.int32)
    key = np.empty(total, np.float64)
    own = np.empty(total, np.int32)
    first = np.zeros(total, np.bool_)
    t = 0
    for s in range(nslots):
        t_first = t
        for p in range(starts[s], starts[s + 1]):
            c = cols[p]
            if lows[p] == highs[p]:
                row[t] = 3 * c + 2
                key[t] = lows[p]
                own[t] = s
                t += 1
                continue
            if lows[p] > -np.inf or highs[p] == np.inf:  # (-inf, inf): "has a value"
                row[t] = 3 * c
                key[t] = lows[p]
                own[t] = s
                t += 1
            if highs[p] < np.inf:
                row[t] = 3 * c + 1
                key[t] = -highs[p]
                own[t] = s
                t += 1
        if t > t_first:
            first[t_first] = True
    return row, key, own, first


@jit
def link_chains(
    perm: np.ndarray, own: np.ndarray, first: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Place the predicates (``perm``: table position -> chain-order index) and link each to
    its successor in its subscription's chain: (next position or -1, owner, sorted heads)."""
    total = perm.shape[0]
    pos = np.empty(total, np.int32)
    for g in range(total):
        pos[perm[g]] = g
    nxt = np.full(total, -1, np.int32)
    owner = np.empty(total, np.int32)
    nheads = 0
    for t in range(total):
        g = pos[t]
        owner[g] = own[t]
        if first[t]:
            nheads += 1
        if t + 1 < total and not first[t + 1] and own[t + 1] == own[t]:
            nxt[g] = pos[t + 1]
    heads = np.empty(nheads, np.int32)
    k = 0
    for g in range(total):
        if first[perm[g]]:
            heads[k] = g
            k += 1
    return nxt, owner, heads
