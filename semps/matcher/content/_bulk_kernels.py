"""Compiled helpers of the bulk loading path (:mod:`semps.matcher.content.bulk`)."""

from __future__ import annotations

import numpy as np

from semps.matcher.kernels import jit


@jit
def rows_with_repeats(starts: np.ndarray, attr: np.ndarray, nattrs: int) -> np.ndarray:
    """Per CSR row, does some attribute occur twice?"""
    n = starts.shape[0] - 1
    out = np.zeros(n, np.bool_)
    stamp = np.full(max(nattrs, 1), -1, np.int64)
    for r in range(n):
        for j in range(starts[r], starts[r + 1]):
            a = attr[j]
            if stamp[a] == r:
                out[r] = True
            stamp[a] = r
    return out


@jit
def sort_rows(starts: np.ndarray, cols: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> None:
    """Sort each CSR row's (column, low, high) by column, in place (rows are short)."""
    n = starts.shape[0] - 1
    for r in range(n):
        a, b = starts[r], starts[r + 1]
        for i in range(a + 1, b):
            c, lo, hi = cols[i], lows[i], highs[i]
            j = i - 1
            while j >= a and cols[j] > c:
                cols[j + 1], lows[j + 1], highs[j + 1] = cols[j], lows[j], highs[j]
                j -= 1
            cols[j + 1], lows[j + 1], highs[j + 1] = c, lo, hi
