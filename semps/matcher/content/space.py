"""Attributes as numbered columns, strings as numbers: what the compiled indexes see.

Every content index works on numbers only. An attribute used with numbers and an attribute
used with strings are two different *columns*; a string becomes its *code* in its column
(equal strings, equal codes), so string equality is numeric equality on the string column.
An event value whose string no subscription mentions gets code ``-1``, which equals no
constraint; a string where numbers are expected (or the reverse) is simply absent from that
column, and absence fails every constraint there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from semps._types import Value
from semps.matcher.content.constraints import Condition, as_float

__all__ = ["AttributeSpace", "EncodedEvent"]


@dataclass(frozen=True, slots=True)
class EncodedEvent:
    """An event's values per column: ``values[start[c]:start[c+1]]`` (empty: missing).

    Attributes:
        start: ``ncols + 1`` offsets (int64).
        values: the values (float64), deduplicated per column.
    """

    start: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.start.ndim != 1 or self.start.shape[0] < 1:
            msg = "an encoded event needs ncols + 1 offsets"
            raise ValueError(msg)

    @property
    def single_valued(self) -> bool:
        """True when no column has more than one value (HCEM batches need that)."""
        return bool(np.all(np.diff(self.start) <= 1))

    def dense(self, ncols: int) -> np.ndarray:
        """One value per column, NaN where missing (only for single-valued events)."""
        out = np.full(ncols, np.nan)
        have = min(ncols, self.start.shape[0] - 1)
        counts = np.diff(self.start[: have + 1])
        idx = np.flatnonzero(counts)
        out[idx] = self.values[self.start[idx]]
        return out


class AttributeSpace:
    """Column numbers for (attribute, kind) and codes for strings.

    Example:
        >>> space = AttributeSpace()
        >>> space.encode_conditions({"a": (0.1, 0.6), "colour": "red"})
        (array([0, 1], dtype=int32), array([0.1, 0. ]), array([0.6, 0. ]))
        >>> ev = space.encode_view({"colour": ("red", "blue"), "a": (0.3,), "zz": (1,)})
        >>> ev.start.tolist(), ev.values.tolist()
        ([0, 1, 3], [0.3, 0.0, -1.0])
    """

    def __init__(self) -> None:
        self._columns: dict[tuple[str, bool], int] = {}
        self._codes: dict[int, dict[str, int]] = {}

    def __len__(self) -> int:
        return len(self._columns)

    def columns(self) -> list[tuple[str, bool]]:
        """(attribute, is-string) per column, in column order."""
        return list(self._columns)

    def find(self, attr: str, is_string: bool) -> int | None:
        """The column of ``attr`` used with strings or numbers, if any subscription made one."""
        return self._columns.get((attr, is_string))

    def column(self, attr: str, is_string: bool) -> int:
        """The column of ``attr`` used with strings or numbers, created on first use."""
        key = (attr, is_string)
        col = self._columns.get(key)
        if col is None:
            col = self._columns[key] = len(self._columns)
            if is_string:
                self._codes[col] = {}
        return col

    def codes(self, col: int) -> dict[str, int]:
        """String -> code of a string column (a copy)."""
        return dict(self._codes[col])

    def set_codes(self, col: int, codes: dict[str, int]) -> None:
        """Replace a string column's codes (a snapshot being loaded)."""
        self._codes[col] = dict(codes)

    def string_code(self, attr: str, value: str) -> tuple[int, int]:
        """(column, code) of ``attr = value``, creating both as needed."""
        col = self.column(attr, True)
        codes = self._codes[col]
        return col, codes.setdefault(value, len(codes))

    def encode_conditions(
        self, conditions: Mapping[str, Condition]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, lows, highs) sorted by column, creating columns and codes as needed."""
        triples = []
        for attr, cond in conditions.items():
            if isinstance(cond, str):
                col = self.column(attr, True)
                codes = self._codes[col]
                code = float(codes.setdefault(cond, len(codes)))
                triples.append((col, code, code))
            else:
                triples.append((self.column(attr, False), cond[0], cond[1]))
        triples.sort()
        cols = np.array([t[0] for t in triples], dtype=np.int32)
        lows = np.array([t[1] for t in triples], dtype=np.float64)
        highs = np.array([t[2] for t in triples], dtype=np.float64)
        return cols, lows, highs

    def dense_values(self, rows: Sequence[Mapping[str, Value]], ncols: int) -> np.ndarray:
        """Events given as attribute -> one value, as :meth:`encode_view` encodes them: an
        ``ncols x len(rows)`` matrix, NaN where an event has no value in a column (columns
        from ``ncols`` on are dropped).

        Example:
            >>> space = AttributeSpace()
            >>> _ = space.encode_conditions({"a": (0.1, 0.6), "colour": "red"})
            >>> space.dense_values([{"a": 0.3, "colour": "red"}, {"colour": 2, "zz": 1}], 2)
            array([[0.3, nan],
                   [0. , nan]])
        """
        out = np.full((ncols, len(rows)), np.nan)
        columns = self._columns
        for i, row in enumerate(rows):
            for attr, v in row.items():
                if isinstance(v, str):
                    col = columns.get((attr, True))
                    if col is not None and col < ncols:
                        out[col, i] = float(self._codes[col].get(v, -1))
                elif isinstance(v, int | float) and not isinstance(v, bool):
                    col = columns.get((attr, False))
                    if col is not None and col < ncols:
                        out[col, i] = as_float(v)  # NaN stays missing
        return out

    def encode_view(self, view: Mapping[str, Iterable[Value]]) -> EncodedEvent:
        """Encode an attribute view; attributes no subscription uses are dropped."""
        per_col: dict[int, list[float]] = {}
        for attr, values in view.items():
            for v in values:
                if isinstance(v, str):
                    col = self._columns.get((attr, True))
                    if col is not None:
                        x = float(self._codes[col].get(v, -1))
                        _add(per_col, col, x)
                elif isinstance(v, int | float) and not isinstance(v, bool):
                    col = self._columns.get((attr, False))
                    if col is not None:
                        x = as_float(v)
                        if not math.isnan(x):
                            _add(per_col, col, x)
        ncols = len(self._columns)
        counts = np.zeros(ncols + 1, np.int64)
        for col, xs in per_col.items():
            counts[col + 1] = len(xs)
        start = np.cumsum(counts)
        values = np.empty(int(start[-1]), np.float64)
        for col, xs in per_col.items():
            values[start[col] : start[col] + len(xs)] = xs
        return EncodedEvent(start, values)


def _add(per_col: dict[int, list[float]], col: int, x: float) -> None:
    xs = per_col.setdefault(col, [])
    if x not in xs:
        xs.append(x)
