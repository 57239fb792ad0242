"""Answer lines assembled as bytes by a compiled kernel, from a batch's columns.

:func:`semps.cli.jsonl.write_columns` builds a Python string per event from a list of id
strings per match. Here every subscription id is JSON-quoted once, into one byte buffer
with offsets, and a batch's lines are copied together from it by slot: no Python object
per match. Short ids (most) are sized and copied from fixed-width rows (length, then
bytes): the row the sizing pass reads is in cache when the copy reads it again, so a match
costs one memory miss, not one for a length and another for the bytes (an event alone
writes in half the time); events are sized and written in parallel. The bytes are
exactly those of ``write_columns`` (``{"event": "e1", "matches": ["s1", "s2"]}``, ASCII,
``json.dumps`` escapes).
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from typing import IO

import numpy as np
from numba import prange

from semps.matcher.kernels import jit, pjit
from semps.matcher.results import MatchColumns

__all__ = ["LineWriter"]

_HEAD = np.frombuffer(b'{"event": ', np.uint8)
_MID = np.frombuffer(b', "matches": [', np.uint8)
_SEP = np.frombuffer(b", ", np.uint8)
_TAIL = np.frombuffer(b"]}\n", np.uint8)

#: Quoted ids shorter than this many bytes get a fixed-width row; longer ones are marked
#: ``_LONG`` there and copied from the buffer.
_ROW = 32
_LONG = 255


class LineWriter:
    """Writes ``{"event", "matches"}`` lines of column batches to a text stream (through
    its byte buffer when it has one). Quoted ids are kept while the id list only grows."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self._source: Sequence[str] | np.ndarray | None = None
        self._count = 0
        self._blob = np.zeros(0, np.uint8)
        self._offsets = np.zeros(1, np.int64)
        self._lengths = np.zeros(0, np.int32)
        self._rows = np.zeros((0, _ROW), np.uint8)

    def _quoted(self, ids: Sequence[str] | np.ndarray) -> None:
        if ids is not self._source or len(ids) < self._count:
            self._source, self._count = ids, 0
            self._blob, self._offsets = np.zeros(0, np.uint8), np.zeros(1, np.int64)
        if len(ids) == self._count:
            return
        more = list(map(encode_basestring_ascii, list(ids[self._count :])))
        blob = "".join(more).encode("ascii")
        lengths = np.fromiter(map(len, more), np.int64, count=len(more))
        offsets = self._offsets[-1] + np.cumsum(lengths)
        self._blob = np.concatenate([self._blob, np.frombuffer(blob, np.uint8)])
        self._offsets = np.concatenate([self._offsets, offsets])
        self._lengths = np.diff(self._offsets).astype(np.int32)
        width = min(_ROW, 1 + int(self._lengths.max(initial=0)))
        self._rows = _fixed_rows(self._blob, self._offsets, width)
        self._count = len(ids)

    def write(self, event_ids: Sequence[str], columns: MatchColumns) -> None:
        """One line per event of the batch, in batch order."""
        self._quoted(columns.ids)
        quoted = [encode_basestring_ascii(e) for e in event_ids]
        ev_blob = np.frombuffer("".join(quoted).encode("ascii"), np.uint8)
        ev_off = np.zeros(len(quoted) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, quoted), np.int64, count=len(quoted)), out=ev_off[1:])
        offsets = np.zeros(len(event_ids) + 1, np.int64)
        np.cumsum(np.bincount(columns.event, minlength=len(event_ids)), out=offsets[1:])
        data = _lines(
            self._blob, self._offsets, self._lengths, self._rows, ev_blob, ev_off, offsets,
            np.asarray(columns.subscription, np.int64), _HEAD, _MID, _SEP, _TAIL,
        )  # fmt: skip
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None:
            self.out.flush()
            buffer.write(data.tobytes())
            buffer.flush()
        else:
            self.out.write(data.tobytes().decode("ascii"))
            self.out.flush()


@jit
def _put(out: np.ndarray, at: int, src: np.ndarray, a: int, b: int) -> int:
    for i in range(a, b):
        out[at] = src[i]
        at += 1
    return at


@jit
def _fixed_rows(blob: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """Per id, a row of ``width`` bytes: its length, then its bytes (``_LONG`` when it
    does not fit)."""
    n = offsets.shape[0] - 1
    rows = np.zeros((n, width), np.uint8)
    for s in range(n):
        a, b = offsets[s], offsets[s + 1]
        if b - a < width:
            rows[s, 0] = b - a
            rows[s, 1 : 1 + b - a] = blob[a:b]
        else:
            rows[s, 0] = _LONG
    return rows


@pjit
def _lines(
    blob: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    fixed: np.ndarray,
    ev_blob: np.ndarray,
    ev_off: np.ndarray,
    rows: np.ndarray,
    slots: np.ndarray,
    head: np.ndarray,
    mid: np.ndarray,
    sep: np.ndarray,
    tail: np.ndarray,
) -> np.ndarray:
    """The lines' bytes: event ``e``'s matches are ``slots[rows[e]:rows[e + 1]]``, the
    ids quoted as a buffer with offsets, lengths (read for long ids only) and fixed-width
    rows. Events are sized,
    then written, in parallel (numba's threads): each line at its own offset."""
    nev = rows.shape[0] - 1
    start = np.zeros(nev + 1, np.int64)
    frame = head.shape[0] + mid.shape[0] + tail.shape[0]
    for e in prange(nev):
        k = rows[e + 1] - rows[e]
        size = frame + ev_off[e + 1] - ev_off[e] + max(k - 1, 0) * sep.shape[0]
        for j in range(rows[e], rows[e + 1]):
            s = slots[j]
            length = int(fixed[s, 0])
            size += length if length != _LONG else lengths[s]
        start[e + 1] = size
    for e in range(nev):
        start[e + 1] += start[e]
    out = np.empty(start[nev], np.uint8)
    for e in prange(nev):
        at = _put(out, start[e], head, 0, head.shape[0])
        at = _put(out, at, ev_blob, ev_off[e], ev_off[e + 1])
        at = _put(out, at, mid, 0, mid.shape[0])
        for j in range(rows[e], rows[e + 1]):
            if j > rows[e]:
                at = _put(out, at, sep, 0, sep.shape[0])
            s = slots[j]
            length = int(fixed[s, 0])
            if length == _LONG:
                at = _put(out, at, blob, offsets[s], offsets[s + 1])
            else:
                for i in range(length):
                    out[at + i] = fixed[s, 1 + i]
                at += length
        _put(out, at, tail, 0, tail.shape[0])
    return out
