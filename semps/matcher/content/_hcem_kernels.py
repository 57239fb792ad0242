"""Compiled kernels of HCEM's batch pass (:mod:`semps.matcher.content.hcem`).

A batch of single-valued events is planned once per column: its values sorted, and the
*prefix sets*: for each rank ``r``, the bits of the events whose value has rank below ``r``
(64 events per machine word). A low bound ``x`` fails exactly the prefix set of rank
``#{v < x}``, a high bound ``x`` exactly the complement of the one of rank ``#{v <= x}``
(missing values fail both). REIN's bucket lists give each bound's bucket, and the bucket
gives the rank up to the few values in that bucket, which are compared: each entry of a
list costs one OR per word for the whole batch, and no comparison outcome is left to fix
bit by bit. Slots are visited one block at a time, so the block's bit rows stay in cache,
and the rows left unmarked are read out as (slot, event) pairs before the next block.
"""

from __future__ import annotations

import numpy as np

from semps.matcher.content._kernels import U1, BucketList, _ctz, bucket_of
from semps.matcher.kernels import jit


@jit
def batch_plan(
    ev_val: np.ndarray, b: int, dlo: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The plan of a batch (``ev_val``: ``ncols x nev``, NaN = missing), sized by the
    values present, not by the columns: ``row[c]`` numbers the columns with some value
    (-1: none); column ``k``'s values sorted are ``sv[start[k]:start[k + 1]]``, their
    buckets ``sb[...]`` (non-decreasing), and its prefix sets are the rows
    ``start[k] + k + r`` of ``prefix`` for ranks ``r = 0..count``: the bits of the events
    whose value has rank below ``r``. ``valid``: the bits of every event of the batch."""
    ncols, nev = ev_val.shape
    nwords = (nev + 63) // 64
    row = np.full(ncols, -1, np.int64)
    start = np.zeros(ncols + 1, np.int64)
    k = 0
    for c in range(ncols):
        m = 0
        for e in range(nev):
            if ev_val[c, e] == ev_val[c, e]:  # not NaN
                m += 1
        if m:
            row[c] = k
            start[k + 1] = start[k] + m
            k += 1
    start = start[: k + 1].copy()
    sv = np.empty(start[k])
    sb = np.empty(start[k], np.int64)
    prefix = np.zeros((start[k] + k, nwords), np.uint64)
    valid = np.zeros(nwords, np.uint64)
    for e in range(nev):
        valid[e >> 6] |= U1 << np.uint64(e & 63)
    for c in range(ncols):
        k = row[c]
        if k < 0:
            continue
        present = np.flatnonzero(ev_val[c] == ev_val[c])
        order = present[np.argsort(ev_val[c][present], kind="mergesort")]
        v0 = start[k]
        p0 = v0 + k
        for r in range(order.shape[0]):
            e = order[r]
            sv[v0 + r] = ev_val[c, e]
            sb[v0 + r] = bucket_of(ev_val[c, e], dlo[c], scale[c], b)
            prefix[p0 + r + 1] = prefix[p0 + r]
            prefix[p0 + r + 1, e >> 6] |= U1 << np.uint64(e & 63)
    return row, start, sv, sb, prefix, valid


@jit
def _mark_list(
    base: int,
    c: int,
    b: int,
    s0: int,
    bucket_list: BucketList,
    lower: bool,
    plan: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    acc: np.ndarray,
) -> None:
    """One block's part of one bucket list: OR into each entry's row the events its bound
    fails. An entry of L_low with bound ``x`` fails the events of rank below
    ``#{v < x}``; one of L_high the events from rank ``#{v <= x}`` on, and the missing ones.
    The values in bucket ``j`` have consecutive ranks (the bucket is monotone in the value)
    and every other value is on one side of any bound filed in ``j``, so only they are
    compared."""
    row, start, sv, sb, prefix, valid = plan
    off, sid, val = bucket_list
    nwords = acc.shape[1]
    k = row[c]
    if k < 0:  # no event has the attribute: every bound fails every event
        if not lower:
            for i in range(off[base], off[base + b]):
                acc_row = acc[sid[i] - s0]
                for w in range(nwords):
                    acc_row[w] |= valid[w]
        return
    v0 = start[k]
    m = start[k + 1] - v0
    p0 = v0 + k
    r0 = 0  # the first rank in bucket j
    for j in range(b):
        while r0 < m and sb[v0 + r0] < j:
            r0 += 1
        i0 = off[base + j]
        i1 = off[base + j + 1]
        if i0 == i1:
            continue
        r1 = r0  # past the last rank in bucket j
        while r1 < m and sb[v0 + r1] == j:
            r1 += 1
        for i in range(i0, i1):
            x = val[i]
            r = r0
            # the values are sorted: count, rather than scan with a data-dependent exit
            # (the trip count is the bucket's, the same for all its entries)
            if lower:
                for t in range(r0, r1):
                    r += sv[v0 + t] < x
                if r == 0:
                    continue
                acc_row = acc[sid[i] - s0]
                mask = prefix[p0 + r]
                for w in range(nwords):
                    acc_row[w] |= mask[w]
            else:
                for t in range(r0, r1):
                    r += sv[v0 + t] <= x
                acc_row = acc[sid[i] - s0]
                mask = prefix[p0 + r]
                for w in range(nwords):
                    acc_row[w] |= valid[w] & ~mask[w]


@jit
def block_mark(
    blk: int,
    ncols: int,
    b: int,
    block: int,
    plan: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    low: BucketList,
    high: BucketList,
    acc: np.ndarray,
) -> None:
    """Set in ``acc[slot - blk * block]`` the bits of the batch's events each slot of
    block ``blk`` fails (``acc`` is zeroed first)."""
    s0 = blk * block
    acc[:] = 0
    low_off = low[0]
    for c in range(ncols):
        base = (blk * ncols + c) * b
        if low_off[base] == low_off[base + b]:
            continue
        _mark_list(base, c, b, s0, low, True, plan, acc)
        _mark_list(base, c, b, s0, high, False, plan, acc)


@jit
def block_pairs(
    acc: np.ndarray,
    s0: int,
    s1: int,
    alive: np.ndarray,
    valid: np.ndarray,
    out_slot: np.ndarray,
    out_event: np.ndarray,
    n: int,
) -> int:
    """Append (slot, event) for every unmarked bit of the live slots ``s0..s1`` to the
    buffers from ``n`` on; returns the new count, or -1 when they are too small."""
    nwords = acc.shape[1]
    cap = out_slot.shape[0]
    for s in range(s0, s1):
        if not alive[s]:
            continue
        row = acc[s - s0]
        for w in range(nwords):
            z = ~row[w] & valid[w]
            while z:
                if n == cap:
                    return -1
                out_slot[n] = s
                out_event[n] = (w << 6) + _ctz(z)
                n += 1
                z &= z - U1
    return n
