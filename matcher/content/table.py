"""The slots table: every indexed unit's intervals per column, in flat NumPy arrays.

A *unit* is what an index stores: a subscription, or (predicate table with interfaces) an
aggregate of several. Each unit gets the next *slot*; removing a unit only clears its
``alive`` flag, and :meth:`SlotTable.compact` drops dead slots and renumbers the rest (the
indexes rebuild their structures over the compacted table).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Grow", "SlotTable"]


class Grow:
    """A NumPy array with amortised O(1) appends (capacity doubles).

    Example:
        >>> g = Grow(np.int32)
        >>> g.extend(np.arange(3)); g.append(7); g.view().tolist()
        [0, 1, 2, 7]
    """

    def __init__(self, dtype: type | np.dtype, capacity: int = 64) -> None:
        self._data = np.empty(max(1, capacity), dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        if need > self._data.shape[0]:
            grown = np.empty(max(need, 2 * self._data.shape[0]), self._data.dtype)
            grown[: self._n] = self._data[: self._n]
            self._data = grown

    def append(self, value: object) -> None:
        self._reserve(1)
        self._data[self._n] = value
        self._n += 1

    def extend(self, values: np.ndarray) -> None:
        self._reserve(len(values))
        self._data[self._n : self._n + len(values)] = values
        self._n += len(values)

    def view(self) -> np.ndarray:
        """The used part (a view: valid until the next append)."""
        return self._data[: self._n]

    def replace(self, values: np.ndarray) -> None:
        """Replace the whole content."""
        self._data = np.array(values, dtype=self._data.dtype, copy=True)
        if self._data.shape[0] == 0:
            self._data = np.empty(1, self._data.dtype)
        self._n = len(values)


class SlotTable:
    """Units by slot: ids, live flags and their predicates (CSR over slots).

    Example:
        >>> t = SlotTable()
        >>> t.append("s1", np.array([0], np.int32), np.array([0.1]), np.array([0.6]))
        0
        >>> t.append("s2", np.array([1], np.int32), np.array([2.0]), np.array([np.inf]))
        1
        >>> t.kill("s1")
        0
        >>> t.compact().tolist(), t.ids, t.cols.tolist()
        ([-1, 0], ['s2'], [1])
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.slot_of: dict[str, int] = {}
        self._alive = Grow(np.bool_)
        self._starts = Grow(np.int64)
        self._starts.append(0)
        self._cols = Grow(np.int32)
        self._lows = Grow(np.float64)
        self._highs = Grow(np.float64)
        self.dead = 0

    def __len__(self) -> int:
        """Slots, dead ones included."""
        return len(self.ids)

    @property
    def live(self) -> int:
        return len(self.ids) - self.dead

    @property
    def alive(self) -> np.ndarray:
        return self._alive.view()

    @property
    def starts(self) -> np.ndarray:
        return self._starts.view()

    @property
    def cols(self) -> np.ndarray:
        return self._cols.view()

    @property
    def lows(self) -> np.ndarray:
        return self._lows.view()

    @property
    def highs(self) -> np.ndarray:
        return self._highs.view()

    def append(self, uid: str, cols: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> int:
        """Store a new unit (its id must not be live) and return its slot."""
        if uid in self.slot_of:
            msg = f"unit {uid!r} is already stored"
            raise ValueError(msg)
        slot = len(self.ids)
        self.ids.append(uid)
        self.slot_of[uid] = slot
        self._alive.append(True)
        self._cols.extend(cols)
        self._lows.extend(lows)
        self._highs.extend(highs)
        self._starts.append(len(self._cols))
        return slot

    def extend(
        self,
        uids: list[str],
        starts: np.ndarray,
        cols: np.ndarray,
        lows: np.ndarray,
        highs: np.ndarray,
    ) -> None:
        """Store many units at once (CSR ``starts`` from 0, one per unit plus one)."""
        clash = next((u for u in uids if u in self.slot_of), None)
        if clash is not None or len(set(uids)) != len(uids):
            msg = f"unit {clash!r} is stored twice"
            raise ValueError(msg)
        first = len(self.ids)
        base = len(self._cols)
        self.ids.extend(uids)
        self.slot_of.update(zip(uids, range(first, first + len(uids)), strict=True))
        self._alive.extend(np.ones(len(uids), np.bool_))
        self._cols.extend(cols)
        self._lows.extend(lows)
        self._highs.extend(highs)
        self._starts.extend(np.asarray(starts[1:], np.int64) + base)

    def kill(self, uid: str) -> int:
        """Mark a unit dead (KeyError when unknown); returns its slot."""
        slot = self.slot_of.pop(uid)
        self._alive.view()[slot] = False
        self.dead += 1
        return slot

    def predicates(self, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, lows, highs) of one slot."""
        a, b = self.starts[slot], self.starts[slot + 1]
        return self.cols[a:b], self.lows[a:b], self.highs[a:b]

    def compact(self) -> np.ndarray:
        """Drop dead slots; returns old slot -> new slot (-1 for dropped ones)."""
        alive = self.alive.copy()
        mapping = np.full(len(self.ids), -1, np.int64)
        mapping[alive] = np.arange(int(alive.sum()))
        if self.dead == 0:
            return mapping
        starts = self.starts
        counts = np.diff(starts)[alive]
        keep = np.repeat(alive, np.diff(starts))
        self._cols.replace(self.cols[keep])
        self._lows.replace(self.lows[keep])
        self._highs.replace(self.highs[keep])
        self._starts.replace(np.concatenate([[0], np.cumsum(counts)]))
        self.ids = [u for u, a in zip(self.ids, alive.tolist(), strict=True) if a]
        self.slot_of = {u: i for i, u in enumerate(self.ids)}
        self._alive.replace(np.ones(len(self.ids), np.bool_))
        self.dead = 0
        return mapping
