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
    write: bool,
) -> int:
    """Matches of publication ``p``: per length class, the subscriptions whose key-attribute
    low lies in ``[p.low - maxlen, p.high]`` are the only ones that can overlap there; each
    is checked on every attribute. The last class holds those not naming the key."""
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
                if write:
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
) -> tuple[np.ndarray, np.ndarray]:
    """Every (publication, subscription) overlap of a batch, as CSR (offsets, rows).

    ``slo``/``shi``: subscription rows sorted by (length class, key low); publications in
    ``plo``/``phi``. Publications are split between threads (count, then fill).
    """
    npub = plo.shape[0]
    counts = np.zeros(npub + 1, np.int64)
    dummy = np.zeros(0, np.int32)
    for p in nb.prange(npub):
        counts[p + 1] = _sweep_one(
            p, key, slo, shi, class_start, class_maxlen, plo, phi, dummy, 0, False
        )
    for p in range(npub):
        counts[p + 1] += counts[p]
    rows = np.empty(counts[npub], np.int32)
    for p in nb.prange(npub):
        _sweep_one(p, key, slo, shi, class_start, class_maxlen, plo, phi, rows, counts[p], True)
    return counts, rows
