"""Compiled kernels of symmetric (region) matching."""

from __future__ import annotations

import numba as nb
import numpy as np

from semps.matcher.content._kernels import jit, pjit

__all__ = ["check_regions", "sweep_pairs"]

_EPS = 4 * np.finfo(np.float64).eps


@jit
def check_regions(
    s0: int,
    s1: int,
    starts: np.ndarray,
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    alive: np.ndarray,
    plo: np.ndarray,
    phi: np.ndarray,
    out: np.ndarray,
) -> int:
    """Live slots of ``s0..s1`` overlapping the region ``plo``/``phi`` (±inf: unbounded)."""
    n = 0
    for s in range(s0, s1):
        if not alive[s]:
            continue
        ok = True
        for p in range(starts[s], starts[s + 1]):
            c = cols[p]
            if lows[p] > phi[c] or highs[p] < plo[c]:
                ok = False
                break
        if ok:
            out[n] = s
            n += 1
    return n


@jit
def _first_at_least(a: np.ndarray, lo: int, hi: int, x: float) -> int:
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _sweep_one(
    p: int,
    key: int,
    slo: np.ndarray,
    shi: np.ndarray,
    class_start: np.ndarray,
    class_maxlen: np.ndarray,
    plo: np.ndarray,
    phi: np.ndarray,
    out: np.ndarray,
    at: int,
    end: int,
) -> int:
    """Matches of publication ``p`` written to ``out[at:end]`` (-1 when they do not fit):
    per length class, the subscriptions whose key-attribute low lies in
    ``[p.low - maxlen, p.high]`` are the only ones that can overlap there; each is checked
    on every attribute. The last class holds those not naming the key."""
    nclasses = class_maxlen.shape[0]
    ncols = slo.shape[1]
    lo_k = plo[p, key]
    hi_k = phi[p, key]
    n = 0
    for cl in range(nclasses + 1):
        a = class_start[cl]
        b = class_start[cl + 1]
        if cl < nclasses:
            m = class_maxlen[cl]
            window = lo_k - m - _EPS * (abs(lo_k) + m)
            a = _first_at_least(slo[:, key], a, b, window)
        for s in range(a, b):
            if cl < nclasses and slo[s, key] > hi_k:
                break
            ok = True
            for c in range(ncols):
                if slo[s, c] > phi[p, c] or shi[s, c] < plo[p, c]:
                    ok = False
                    break
            if ok:
                if at + n >= end:
                    return -1
                out[at + n] = s
                n += 1
    return n


@pjit
def sweep_pairs(
    key: int,
    slo: np.ndarray,
    shi: np.ndarray,
    class_start: np.ndarray,
    class_maxlen: np.ndarray,
    plo: np.ndarray,
    phi: np.ndarray,
    parts: int,
    capacity: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Every (publication, subscription) overlap of a batch, in one pass.

    Publications are cut into ``parts`` contiguous ranges, one per thread; each writes its
    matches into its own ``capacity``-sized region. Returns (matches per publication, the
    regions, the used length of each, overflowed?) - on overflow the caller retries with a
    larger capacity.
    """
    npub = plo.shape[0]
    counts = np.zeros(npub, np.int64)
    out = np.empty(parts * capacity, np.int32)
    used = np.zeros(parts, np.int64)
    over = np.zeros(parts, np.bool_)
    per = (npub + parts - 1) // parts
    for t in nb.prange(parts):
        at = t * capacity
        end = at + capacity
        for p in range(t * per, min(npub, (t + 1) * per)):
            n = _sweep_one(p, key, slo, shi, class_start, class_maxlen, plo, phi, out, at, end)
            if n < 0:
                over[t] = True
                break
            counts[p] = n
            at += n
        used[t] = at - t * capacity
    return counts, out, used, over.any()
