"""By shape, the slots of the subscriptions that have it, kept in one flat array.

Subscriptions that differ only in their id share a shape (:class:`.index.SubscriptionIndex`):
matching finds shapes, and each matching shape's slots are then listed. Kept as a Python
list per shape, that listing read one list and one integer object per slot, scattered in
memory: at 0.1% selectivity over 100k subscriptions (127 matches an event) it cost 38 us
an event, mostly cache misses. Here a shape's slots are one block of a flat array (room for
twice as many when full, moved to the end; the array compacted when half of it is unused
room), and the listing is one compiled pass (:func:`gather`).

    >>> slots = ShapeSlots()
    >>> slots.add(0, 10), slots.add(0, 11), slots.add(1, 12)
    (True, False, True)
    >>> found, sizes = slots.of(np.array([1, 0]))
    >>> found.tolist(), sizes.tolist()
    ([12, 10, 11], [1, 2])
    >>> slots.remove(0, 10)  # its representative: 11 takes its place
    11
    >>> slots.first(0), slots.size_of(0)
    (11, 1)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from semps.matcher.kernels import jit

IntArray = npt.NDArray[np.int64]

#: Unused room (in slots) below which the flat array is never compacted.
_MIN_COMPACT = 4096


class ShapeSlots:
    """The slots of each shape, in insertion order but for removals (the last slot of the
    shape takes a removed one's place); a shape's first slot is its representative."""

    def __init__(self) -> None:
        self.flat = np.zeros(64, dtype=np.int64)
        self.start = np.zeros(16, dtype=np.int64)  # by shape: its block in ``flat``
        self.size = np.zeros(16, dtype=np.int64)  # by shape: its slots
        self.room = np.zeros(16, dtype=np.int64)  # by shape: its block's length
        self.pos = np.zeros(16, dtype=np.int64)  # by slot: its place in its shape's block
        self._end = 0  # ``flat[:_end]`` is blocks
        self._unused = 0  # room in blocks left behind or emptied

    def add(self, shape: int, slot: int) -> bool:
        """List ``slot`` under ``shape``; whether it is the shape's first."""
        if shape >= len(self.size):
            self._grow_shapes(shape + 1)
        if slot >= len(self.pos):
            self.pos = np.resize(self.pos, max(2 * len(self.pos), slot + 1))
        size = int(self.size[shape])
        if size == self.room[shape]:
            self._move(shape, max(1, 2 * size))
        start = int(self.start[shape])
        self.flat[start + size] = slot
        self.pos[slot] = size
        self.size[shape] = size + 1
        return size == 0

    def remove(self, shape: int, slot: int) -> int | None:
        """Unlist ``slot`` (listed under ``shape``). When it was the representative, the
        new one (``-1`` when the shape has no slot left); else ``None``."""
        start, size = int(self.start[shape]), int(self.size[shape]) - 1
        pos = int(self.pos[slot])
        last = int(self.flat[start + size])
        if last != slot:  # the last slot takes its place
            self.flat[start + pos] = last
            self.pos[last] = pos
        self.size[shape] = size
        if size == 0:
            self._unused += int(self.room[shape])
            self.room[shape] = 0
        if pos != 0:
            return None
        return int(self.flat[start]) if size else -1

    def first(self, shape: int) -> int:
        """The shape's representative (it must have a slot)."""
        return int(self.flat[self.start[shape]])

    def size_of(self, shape: int) -> int:
        return int(self.size[shape])

    def of(self, shapes: IntArray) -> tuple[IntArray, IntArray]:
        """The slots of the ``shapes`` one shape after another, and how many each has."""
        return gather(shapes, self.start, self.size, self.flat)

    def _grow_shapes(self, need: int) -> None:
        cap = max(need, 2 * len(self.size))
        for name in ("start", "size", "room"):
            grown = np.zeros(cap, dtype=np.int64)
            old = getattr(self, name)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def _move(self, shape: int, room: int) -> None:
        """Give the shape a block of ``room`` at the end (compacting first when half of
        the array is unused)."""
        if self._unused > max(_MIN_COMPACT, self._end // 2):
            self._compact()
        old_start, size = int(self.start[shape]), int(self.size[shape])
        self._unused += int(self.room[shape])
        if self._end + room > len(self.flat):
            self.flat = np.resize(self.flat, max(2 * len(self.flat), self._end + room))
        start = self._end
        self.flat[start : start + size] = self.flat[old_start : old_start + size]
        self.start[shape], self.room[shape] = start, room
        self._end += room

    def _compact(self) -> None:
        """Every shape's block moved to the front, with the room it has, in shape order."""
        alive = np.flatnonzero(self.room)
        rooms = self.room[alive]
        starts = np.zeros(len(alive), dtype=np.int64)
        np.cumsum(rooms[:-1], out=starts[1:])
        end = int(rooms.sum())
        sizes = self.size[alive]
        held = int(sizes.sum())
        within = np.arange(held) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        source = np.repeat(self.start[alive], sizes) + within
        target = np.repeat(starts, sizes) + within
        flat = np.zeros(max(64, 2 * end), dtype=np.int64)
        flat[target] = self.flat[source]
        self.flat, self._end, self._unused = flat, end, 0
        self.start[alive] = starts


@jit
def gather(
    shapes: IntArray, start: IntArray, size: IntArray, flat: IntArray
) -> tuple[IntArray, IntArray]:
    """The slots of ``shapes`` from their blocks, one shape after another, and the sizes."""
    sizes = np.empty(len(shapes), dtype=np.int64)
    total = 0
    for i in range(len(shapes)):
        sizes[i] = size[shapes[i]]
        total += sizes[i]
    out = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(len(shapes)):
        b = start[shapes[i]]
        for j in range(sizes[i]):
            out[k] = flat[b + j]
            k += 1
    return out, sizes


def warm() -> None:
    """Compile (or load from the cache) :func:`gather` now."""
    none = np.zeros(0, dtype=np.int64)
    gather(none, none, none, none)
