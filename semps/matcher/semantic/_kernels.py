"""Compiled (numba) loops of the semantic matcher's counter filtering."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit
from semps.matcher.semantic._join_kernels import warm as warm_join
from semps.matcher.semantic.shapeslots import warm as warm_slots

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ByteArray = npt.NDArray[np.uint8]


@jit
def complete_slots(candidates: IntArray, others: IntArray, hit: BoolArray) -> IntArray:
    """The candidates whose other containers are all hit: row ``others[slot]`` lists a
    slot's container numbers besides its anchor, padded at the end with 0."""
    out = np.empty(len(candidates), dtype=np.int64)
    n = 0
    for i in range(len(candidates)):
        if all_hit(others[candidates[i]], hit):
            out[n] = candidates[i]
            n += 1
    return out[:n]


@jit
def all_hit(containers: npt.NDArray[np.integer], hit: BoolArray) -> bool:
    """Whether every container number before the first 0 of ``containers`` is hit."""
    for cid in containers:
        if cid == 0:
            return True
        if not hit[cid]:
            return False
    return True


@jit
def candidate_shapes(
    rows: npt.NDArray[np.int32],
    hit: BoolArray,
    shape_fam: IntArray,
    fam_count: IntArray,
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Counter filtering's last step and the grouping of its survivors, in one pass over
    the candidates' ``rows`` (a shape's representative slot, the shape, the numbers of its
    containers besides the anchor, padded with 0): the shapes whose containers are all
    hit (in order of appearance) with their representatives, and their positions grouped
    by family: one run per family between ``bounds`` (in order of first appearance), the
    shapes of no family ``alone``. ``fam_count`` (by
    family, two entries each) is all 0, and left so."""
    n = rows.shape[0]
    shapes = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if all_hit(rows[i, 2:], hit):
            shapes[k] = rows[i, 1]
            first[k] = rows[i, 0]
            k += 1
    for j in range(k):
        fam = shape_fam[shapes[j]]
        if fam >= 0:
            fam_count[2 * fam] += 1
    grouped = np.empty(k, dtype=np.int64)
    bounds = np.empty(k + 1, dtype=np.int64)
    alone = np.empty(k, dtype=np.int64)
    n_bounds, n_grouped, n_alone = 0, 0, 0
    for j in range(k):  # each family's run starts where its first shape comes
        fam = shape_fam[shapes[j]]
        if fam >= 0 and fam_count[2 * fam + 1] == 0:
            bounds[n_bounds] = n_grouped
            n_bounds += 1
            fam_count[2 * fam + 1] = n_grouped + 1  # its cursor, plus one
            n_grouped += fam_count[2 * fam]
    for j in range(k):
        fam = shape_fam[shapes[j]]
        if fam >= 0:
            grouped[fam_count[2 * fam + 1] - 1] = j
            fam_count[2 * fam + 1] += 1
        else:
            alone[n_alone] = j
            n_alone += 1
    for j in range(k):
        fam = shape_fam[shapes[j]]
        if fam >= 0:
            fam_count[2 * fam] = 0
            fam_count[2 * fam + 1] = 0
    bounds[n_bounds] = n_grouped
    return shapes[:k], first[:k], grouped[:n_grouped], bounds[: n_bounds + 1], alone[:n_alone]


@jit
def write_counts(at: IntArray, counts: IntArray, blob: ByteArray, starts: IntArray) -> ByteArray:
    """The tail of an output line (``results.result_line``) from its matches in order:
    ``id, id, ...], "solutions": {id: count, ...}}``, the id of match ``i`` read as JSON
    text from ``blob[starts[at[i]]:starts[at[i] + 1]]``."""
    size = 0
    for i in range(len(at)):
        size += 2 * (starts[at[i] + 1] - starts[at[i]]) + 26
    out = np.empty(size + 32, dtype=np.uint8)
    n = 0
    for i in range(len(at)):
        if i:
            n = _put(out, n, _SEP)
        n = _put(out, n, blob[starts[at[i]] : starts[at[i] + 1]])
    n = _put(out, n, _MIDDLE)
    digits = np.empty(20, dtype=np.uint8)
    for i in range(len(at)):
        if i:
            n = _put(out, n, _SEP)
        n = _put(out, n, blob[starts[at[i]] : starts[at[i] + 1]])
        n = _put(out, n, _COLON)
        c = counts[i]
        k = 0
        while True:
            digits[k] = 48 + c % 10
            c //= 10
            k += 1
            if c == 0:
                break
        for j in range(k - 1, -1, -1):
            out[n] = digits[j]
            n += 1
    n = _put(out, n, _END)
    return out[:n]


@jit
def write_shape_counts(
    shapes: IntArray,
    counts: IntArray,
    start: IntArray,
    size: IntArray,
    flat: IntArray,
    ranks: IntArray,
    blob: ByteArray,
    starts: IntArray,
) -> ByteArray:
    """:func:`write_counts` of the slots of the ``shapes`` whose count is not 0 (each
    slot with its shape's count; the slots of a shape from its block of ``flat``, as
    ``shapeslots.gather`` reads them), in the order of their ids' ``ranks``."""
    total = 0
    for i in range(len(shapes)):
        if counts[i] != 0:
            total += size[shapes[i]]
    at = np.empty(total, dtype=np.int64)
    of = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(len(shapes)):
        c = counts[i]
        if c != 0:
            b = start[shapes[i]]
            for j in range(size[shapes[i]]):
                at[k] = ranks[flat[b + j]]
                of[k] = c
                k += 1
    order = np.argsort(at)
    return write_counts(at[order], of[order], blob, starts)


@jit
def _put(out: ByteArray, n: int, text: ByteArray) -> int:
    for j in range(len(text)):
        out[n + j] = text[j]
    return n + len(text)


_SEP = np.frombuffer(b", ", dtype=np.uint8)
_MIDDLE = np.frombuffer(b'], "solutions": {', dtype=np.uint8)
_COLON = np.frombuffer(b": ", dtype=np.uint8)
_END = np.frombuffer(b"}}", dtype=np.uint8)


def warm() -> None:
    """Compile (or load from the cache) every kernel now: a process forked afterwards
    inherits them instead of loading each on its first event."""
    none = np.zeros(0, dtype=np.int64)
    complete_slots(none, np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.bool_))
    rows = np.zeros((0, 6), dtype=np.int32)
    candidate_shapes(rows, np.ones(1, dtype=np.bool_), none, none)
    blob = np.frombuffer(b"", dtype=np.uint8)  # read-only, as id_text gives it
    write_counts(none, none, blob, np.zeros(1, dtype=np.int64))
    write_shape_counts(none, none, none, none, none, none, blob, np.zeros(1, dtype=np.int64))
    warm_join()
    warm_slots()
