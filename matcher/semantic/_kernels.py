"""Compiled (numba) loops of the semantic matcher's counter filtering."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@jit
def complete_slots(candidates: IntArray, others: IntArray, hit: BoolArray) -> IntArray:
    """The candidates whose other containers are all hit: row ``others[slot]`` lists a
    slot's container numbers besides its anchor, padded at the end with 0."""
    out = np.empty(len(candidates), dtype=np.int64)
    n = 0
    width = others.shape[1]
    for i in range(len(candidates)):
        slot = candidates[i]
        ok = True
        for k in range(width):
            cid = others[slot, k]
            if cid == 0:
                break
            if not hit[cid]:
                ok = False
                break
        if ok:
            out[n] = slot
            n += 1
    return out[:n]


@jit
def unique_shapes(
    slots: IntArray, shape_at: IntArray, marker: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """The distinct shapes of ``slots`` in order of first appearance, the first slot of
    each, and each slot's position among them; ``marker`` (by shape, all -1) is left as
    found. Linear: no sort."""
    n = len(slots)
    uniq = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        shape = shape_at[slots[i]]
        at = marker[shape]
        if at < 0:
            at = k
            marker[shape] = k
            uniq[k] = shape
            first[k] = slots[i]
            k += 1
        inverse[i] = at
    for j in range(k):
        marker[uniq[j]] = -1
    return uniq[:k], first[:k], inverse


def warm() -> None:
    """Compile (or load from the cache) every kernel now: a process forked afterwards
    inherits them instead of loading each on its first event."""
    none = np.zeros(0, dtype=np.int64)
    complete_slots(none, np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.bool_))
    unique_shapes(none, none, none)
