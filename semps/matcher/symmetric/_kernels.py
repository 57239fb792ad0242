"""Compiled kernels of symmetric (region) matching."""

from __future__ import annotations

import numba as nb
import numpy as np

from semps.matcher.kernels import jit, pjit, search_sorted

__all__ = ["Layout", "slab_of", "slabs_of", "sweep_pairs"]

_EPS = 4 * np.finfo(np.float64).eps

#: The sweep's layout of the subscriptions (see :func:`_sweep_one`): key attributes, lows,
#: highs, second-key lows, cells, max lengths per class, slab base and scale.
Layout = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@jit
def slab_of(x: float, base: float, inv: float, nslabs: int) -> int:
    """The slab of a key-attribute low: monotone in ``x``, clamped to ``0..nslabs-1``."""
    y = (x - base) * inv
    if not y > 0.0:  # also NaN
        return 0
    if y >= nslabs:
        return nslabs - 1
    return int(y)


@jit
def slabs_of(values: np.ndarray, base: float, inv: float, nslabs: int) -> np.ndarray:
    """:func:`slab_of` for many values (the same code, so builds and queries agree)."""
    out = np.empty(values.shape[0], np.int64)
    for i in range(values.shape[0]):
        out[i] = slab_of(values[i], base, inv, nslabs)
    return out


@jit
def _window(low: float, maxlen: float) -> float:
    """The smallest low a region of length <= ``maxlen`` overlapping ``[low, ...]`` can
    have, widened by a few ulps against rounding in the stored lengths."""
    return low - maxlen - _EPS * (abs(low) + maxlen)


@jit
def _sweep_one(
    p: int,
    layout: Layout,
    plo: np.ndarray,
    phi: np.ndarray,
    out: np.ndarray,
    at: int,
    end: int,
) -> int:
    """Matches of publication ``p`` written to ``out[at:end]`` (-1 when they do not fit).

    Subscriptions are grouped by length class, then by slab of their low on the first key
    attribute, and sorted inside a slab by their low on the second. In a class whose
    lengths are at most ``maxlen``, a subscription overlapping ``p`` has its first-key low
    in ``[p.low - maxlen, p.high]`` (a run of slabs) and its second-key low in
    ``[p.low2 - maxlen2, p.high2]`` (a binary-searched run inside each slab); each such
    candidate is checked on every attribute.
    """
    keys, slo, shi, low2, cells, maxlen, slabs = layout
    k1 = keys[0]
    k2 = keys[1]
    base = slabs[0]
    inv = slabs[1]
    nslabs = cells.shape[1] - 1
    ncols = slo.shape[1]
    n = 0
    for cl in range(cells.shape[0]):
        first = slab_of(_window(plo[p, k1], maxlen[cl, 0]), base, inv, nslabs)
        last = slab_of(phi[p, k1], base, inv, nslabs)
        w2 = _window(plo[p, k2], maxlen[cl, 1])
        hi2 = phi[p, k2]
        for sl in range(first, last + 1):
            start = search_sorted(low2, cells[cl, sl], cells[cl, sl + 1], w2, False)
            for s in range(start, cells[cl, sl + 1]):
                if low2[s] > hi2:
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
    layout: Layout,
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
            n = _sweep_one(p, layout, plo, phi, out, at, end)
            if n < 0:
                over[t] = True
                break
            counts[p] = n
            at += n
        used[t] = at - t * capacity
    return counts, out, used, bool(over.any())
