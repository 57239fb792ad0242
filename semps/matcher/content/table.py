"""The slots table: every indexed unit's intervals per column, in flat NumPy arrays.

A *unit* is what an index stores: a subscription, or (predicate table with interfaces) an
aggregate of several. Each unit gets the next *slot*; removing a unit only clears its
``alive`` flag, and :meth:`SlotTable.compact` drops dead slots and renumbers the rest (the
indexes rebuild their structures over the compacted table).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Grow", "SlotTable", "id_order"]


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


class _Used:
    """A read-only attribute ``x`` of :class:`SlotTable`: the used part of its :class:`Grow`
    array ``_x`` (a view: valid until the next append)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = f"_{name}"

    def __get__(self, table: object, owner: type | None = None) -> np.ndarray:
        if table is None:
            raise AttributeError(self._name)
        grow: Grow = getattr(table, self._name)
        return grow.view()


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

    #: Live flag per slot; CSR over slots (``starts``) of the predicates' columns and bounds.
    alive, starts, cols, lows, highs = _Used(), _Used(), _Used(), _Used(), _Used()

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
        *,
        checked: bool = False,
    ) -> None:
        """Store many units at once (CSR ``starts`` from 0, one per unit plus one);
        ``checked``: the caller made sure no id is stored or repeated."""
        if not checked and (
            not self.slot_of.keys().isdisjoint(uids) or len(set(uids)) != len(uids)
        ):
            seen = set(self.slot_of)
            clash = next(u for u in uids if u in seen or seen.add(u))  # type: ignore[func-returns-value]
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

    def restore(
        self,
        ids: list[str],
        starts: np.ndarray,
        cols: np.ndarray,
        lows: np.ndarray,
        highs: np.ndarray,
    ) -> None:
        """Replace the whole content with live units (distinct ids; a checked snapshot)."""
        self.ids = ids
        self.slot_of = dict(zip(ids, range(len(ids)), strict=True))
        self._alive.replace(np.ones(len(ids), np.bool_))
        self._starts.replace(starts)
        self._cols.replace(cols)
        self._lows.replace(lows)
        self._highs.replace(highs)
        self.dead = 0

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

    def sort_by_id(self) -> np.ndarray | None:
        """Renumber the (compacted, all live) slots in subscription-id order, so that
        ascending slots list ids sorted; returns new slot -> old slot, or ``None`` when the
        order did not change.

        Example:
            >>> t = SlotTable()
            >>> for uid in ("s2", "s10", "s1"):
            ...     _ = t.append(uid, np.array([0], np.int32), np.zeros(1), np.ones(1))
            >>> t.sort_by_id().tolist(), t.ids, t.slot_of["s2"]
            ([2, 1, 0], ['s1', 's10', 's2'], 2)
        """
        if self.dead:
            msg = "sort_by_id needs a compacted table"
            raise ValueError(msg)
        order = id_order(self.ids)
        if order is None:
            return None
        starts = self.starts
        counts = np.diff(starts)[order]
        new_starts = np.zeros(len(order) + 1, np.int64)
        np.cumsum(counts, out=new_starts[1:])
        gather = np.repeat(starts[:-1][order] - new_starts[:-1], counts)
        gather += np.arange(len(gather), dtype=np.int64)
        self._cols.replace(self.cols[gather])
        self._lows.replace(self.lows[gather])
        self._highs.replace(self.highs[gather])
        self._starts.replace(new_starts)
        ids = self.ids
        self.ids = [ids[i] for i in order.tolist()]
        self.slot_of = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return order

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


def id_order(ids: list[str]) -> np.ndarray | None:
    """The permutation sorting ``ids`` (Python string order), or ``None`` when sorted.

    Example:
        >>> id_order(["b", "a", "c"]).tolist(), id_order(["a", "b"])
        ([1, 0, 2], None)
    """
    n = len(ids)
    if n < 2:
        return None
    longest = max(map(len, ids))
    # NumPy's fixed-width strings sort by code point like Python, but drop trailing NULs.
    if longest <= 64 and "\x00" not in "".join(ids):
        order = np.argsort(np.array(ids, dtype=f"<U{longest}"), kind="stable")
    else:
        order = np.array(sorted(range(n), key=ids.__getitem__), np.int64)
    order = order.astype(np.int64, copy=False)
    if bool(np.all(order[1:] > order[:-1])):
        return None
    return order
