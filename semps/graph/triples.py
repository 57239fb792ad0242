"""The materialised closure in memory: per predicate, sorted arrays of term ids plus a small
overlay of recent changes.

Each predicate's triples are a :class:`Segment`: its ``(subject, object)`` pairs packed into
one ``int64`` key each (``subject << 32 | object``), sorted (``so``), the same pairs keyed
the other way (``os``, for lookups by object), and whether each is asserted (a flag beside
``so``). That is 17 bytes a triple, shared copy-on-write by forked worker processes (NumPy
arrays are not touched by reference counting). Edits go to an overlay (dictionaries of what
was added and a set of what was removed) that lookups merge in; once the overlay grows past
a fraction of the base, :meth:`Segment.compact` merges it into new arrays.

Term ids must be below 2**31 (keys stay positive).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from semps.ontology.hierarchy import discard

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MASK = (1 << 32) - 1
_EMPTY = np.zeros(0, dtype=np.int64)
_NO_FLAGS = np.zeros(0, dtype=np.bool_)
#: The overlay is merged into the arrays once it holds more than this many triples and
#: more than a sixteenth of the base.
COMPACT_AT = 4096
#: A change of at least this many triples, and at least 1/MERGE_RATIO of the segment, is
#: merged into new arrays rather than added to the overlay key by key: a key costs the
#: overlay 7-11 us of Python, a merge 20-30 ns per triple of the segment (three arrays
#: copied), so a merge is the cheaper from about 1/256 of the segment on.
MERGE_AT = 512
MERGE_RATIO = 256


def keys(first: IntArray, second: IntArray) -> IntArray:
    """Pairs packed as ``first << 32 | second``."""
    return (first.astype(np.int64) << 32) | second.astype(np.int64)


def unique(a: IntArray) -> IntArray:
    """The sorted distinct values of ``a`` (by sorting: NumPy's hashed ``unique`` was a
    third of a bulk load's time)."""
    if len(a) < 2:
        return a
    s = np.sort(a)
    keep = np.empty(len(s), dtype=np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _holds(sorted_keys: IntArray, query: IntArray) -> BoolArray:
    """Which of ``query`` are in ``sorted_keys``."""
    if not len(sorted_keys) or not len(query):
        return np.zeros(len(query), dtype=np.bool_)
    at = np.minimum(sorted_keys.searchsorted(query), len(sorted_keys) - 1)
    found: BoolArray = sorted_keys[at] == query
    return found


def _found(sorted_keys: IntArray, query: IntArray) -> IntArray:
    """The positions in ``sorted_keys`` of those of ``query`` it holds."""
    if not len(sorted_keys) or not len(query):
        return np.zeros(0, dtype=np.int64)
    at: IntArray = np.minimum(sorted_keys.searchsorted(query), len(sorted_keys) - 1)
    found: IntArray = at[sorted_keys[at] == query]
    return found


def swapped(packed: IntArray) -> IntArray:
    """``a << 32 | b`` keys as ``b << 32 | a``."""
    return ((packed & MASK) << 32) | (packed >> 32)


class Segment:
    """One predicate's triples (see the module docstring)."""

    __slots__ = ("asserted", "flags", "minus", "os", "plus_o", "plus_s", "so", "size")

    def __init__(
        self, so: IntArray = _EMPTY, asserted: BoolArray = _NO_FLAGS, os: IntArray | None = None
    ) -> None:
        self.so = so
        self.asserted = asserted
        self.os = os if os is not None else np.sort(swapped(so)) if len(so) else _EMPTY
        self.plus_s: dict[int, set[int]] = {}
        self.plus_o: dict[int, set[int]] = {}
        self.minus: set[int] = set()
        #: Asserted flags of overlay triples, and of base triples whose flag changed.
        self.flags: dict[int, bool] = {}
        self.size = len(so)

    # -- reading -----------------------------------------------------------------------------

    def _base_range(self, packed: IntArray, first: int) -> tuple[int, int]:
        lo = int(packed.searchsorted(first << 32))
        hi = int(packed.searchsorted((first + 1) << 32))
        return lo, hi

    def objects(self, s: int) -> list[int]:
        """The objects of ``s``."""
        return self._ends(self.so, self.plus_s, s, forward=True)

    def subjects(self, o: int) -> list[int]:
        """The subjects with object ``o``."""
        return self._ends(self.os, self.plus_o, o, forward=False)

    def _ends(
        self, packed: IntArray, overlay: dict[int, set[int]], k: int, *, forward: bool
    ) -> list[int]:
        """The other ends of the pairs with ``k`` at one end: its objects (``forward``, from
        ``so`` and ``plus_s``) or its subjects (from ``os`` and ``plus_o``)."""
        found: list[int] = []
        if len(packed):
            lo, hi = self._base_range(packed, k)
            if lo < hi:
                found = (packed[lo:hi] & MASK).tolist()
                if self.minus:
                    minus, first = self.minus, k << 32
                    if forward:
                        found = [o for o in found if first | o not in minus]
                    else:
                        found = [s for s in found if (s << 32) | k not in minus]
        extra = overlay.get(k)
        if extra:
            found.extend(extra)
        return found

    def _in_base(self, key: int) -> int:
        """The key's position in ``so``, or -1."""
        so = self.so
        i = int(so.searchsorted(key))
        return i if i < len(so) and int(so[i]) == key else -1

    def has(self, s: int, o: int) -> bool:
        """Whether ``(s, o)`` is a pair of this predicate."""
        extra = self.plus_s.get(s)
        if extra is not None and o in extra:
            return True
        key = (s << 32) | o
        return key not in self.minus and self._in_base(key) >= 0

    def is_asserted(self, s: int, o: int) -> bool:
        """Whether the pair is asserted (False when it is only inferred, or absent)."""
        key = (s << 32) | o
        flag = self.flags.get(key)
        if flag is not None:
            return flag and self.has(s, o)
        if key in self.minus:
            return False
        i = self._in_base(key)
        return i >= 0 and bool(self.asserted[i])

    def pairs(self) -> Iterator[tuple[int, int]]:
        """Every pair (base order, then the overlay's)."""
        minus = self.minus
        for key in self.so.tolist():
            if key not in minus:
                yield key >> 32, key & MASK
        for s, objects in self.plus_s.items():
            for o in objects:
                yield s, o

    def packed(self) -> tuple[IntArray, BoolArray]:
        """Every pair as sorted ``so`` keys with their asserted flags (the overlay merged in,
        without changing this segment)."""
        if not (self.plus_s or self.minus or self.flags):
            return self.so, self.asserted
        so, asserted = self.so, self.asserted.copy()
        if self.minus:
            keep = ~np.isin(so, np.fromiter(self.minus, np.int64, len(self.minus)))
            so, asserted = so[keep], asserted[keep]
        added = [(s << 32) | o for s, objects in self.plus_s.items() for o in objects]
        flags = self.flags
        if flags:
            for i in np.flatnonzero(np.isin(so, np.fromiter(flags, np.int64, len(flags)))):
                asserted[i] = flags[int(so[i])]
        if added:
            extra = np.asarray(added, dtype=np.int64)
            extra_flags = np.fromiter((flags.get(k, False) for k in added), np.bool_, len(added))
            so = np.concatenate([so, extra])
            asserted = np.concatenate([asserted, extra_flags])
            order = np.argsort(so, kind="stable")
            so, asserted = so[order], asserted[order]
        return so, asserted

    def merged(self) -> tuple[IntArray, BoolArray, IntArray]:
        """:meth:`packed`, and the pairs keyed the other way (``os``), sorted: the overlay
        merged into ``os`` by searching, not by sorting the whole array again."""
        so, asserted = self.packed()
        os = self.os
        if self.minus:
            gone = np.sort(swapped(np.fromiter(self.minus, np.int64, len(self.minus))))
            os = np.delete(os, _found(os, gone))
        if self.plus_s:
            back = [(o << 32) | s for s, objects in self.plus_s.items() for o in objects]
            extra = np.sort(np.asarray(back, dtype=np.int64))
            os = np.insert(os, os.searchsorted(extra), extra)
        return so, asserted, os

    def snapshot(self) -> Segment:
        """A copy that later edits of this segment leave as it is: the arrays are shared
        (never changed in place), the overlay copied (it is at most a sixteenth of the
        base, or :data:`COMPACT_AT` triples)."""
        copy = Segment.__new__(Segment)
        copy.so, copy.os, copy.asserted, copy.size = self.so, self.os, self.asserted, self.size
        copy.plus_s = {s: set(objects) for s, objects in self.plus_s.items()}
        copy.plus_o = {o: set(subjects) for o, subjects in self.plus_o.items()}
        copy.minus, copy.flags = set(self.minus), dict(self.flags)
        return copy

    # -- editing -----------------------------------------------------------------------------

    def add(self, s: int, o: int, asserted: bool) -> bool:
        """Add the pair; False when it was there already (then ``asserted`` only raises its
        flag: an inferred copy of an asserted triple leaves it asserted)."""
        key = (s << 32) | o
        if key in self.minus:
            self.minus.discard(key)
            self.flags[key] = asserted
            self.size += 1
            return True
        extra = self.plus_s.get(s)
        if (extra is not None and o in extra) or self._in_base(key) >= 0:
            if asserted:
                self.flags[key] = True
            return False
        if extra is None:
            self.plus_s[s] = {o}
        else:
            extra.add(o)
        self.plus_o.setdefault(o, set()).add(s)
        self.flags[key] = asserted
        self.size += 1
        return True

    def set_asserted(self, s: int, o: int, asserted: bool) -> None:
        """Change a present pair's flag."""
        self.flags[(s << 32) | o] = asserted

    def remove(self, s: int, o: int) -> bool:
        """Remove the pair; False when it was not there."""
        key = (s << 32) | o
        extra = self.plus_s.get(s)
        if extra is not None and o in extra:
            discard(self.plus_s, s, o)
            discard(self.plus_o, o, s)
            self.flags.pop(key, None)
            self.size -= 1
            return True
        if key in self.minus or self._in_base(key) < 0:
            return False
        self.minus.add(key)
        self.flags.pop(key, None)
        self.size -= 1
        return True

    def apply(
        self, added: IntArray, removed: IntArray, asserted: IntArray, unasserted: IntArray
    ) -> None:
        """Apply a change's sorted keys: removals, additions (inferred), then the asserted
        flags (set for ``asserted``, cleared for ``unasserted`` still present). A change of
        :data:`MERGE_AT` keys and 1/:data:`MERGE_RATIO` of the segment is merged into new
        arrays at once (with the overlay)."""
        n = len(added) + len(removed) + len(asserted) + len(unasserted)
        if n < MERGE_AT or MERGE_RATIO * n < len(self.so):
            for key in removed.tolist():
                self.remove(key >> 32, key & MASK)
            for key in added.tolist():
                self.add(key >> 32, key & MASK, False)
            for key in unasserted.tolist():
                if self.has(key >> 32, key & MASK):
                    self.set_asserted(key >> 32, key & MASK, False)
            for key in asserted.tolist():
                self.add(key >> 32, key & MASK, True)
            return
        so, flags, os = self.merged()  # kept sorted by merging, not sorted again
        flags = flags.copy()  # the arrays are shared with snapshots: never changed in place
        if len(removed):
            at = _found(so, removed)
            so, flags = np.delete(so, at), np.delete(flags, at)
            os = np.delete(os, _found(os, np.sort(swapped(removed))))
        if len(added):
            fresh = added[~_holds(so, added)]
            at = so.searchsorted(fresh)
            so = np.insert(so, at, fresh)
            flags = np.insert(flags, at, np.zeros(len(fresh), dtype=np.bool_))
            back = np.sort(swapped(fresh))
            os = np.insert(os, os.searchsorted(back), back)
        if len(unasserted):
            flags[_found(so, unasserted)] = False
        if len(asserted):
            flags[_found(so, asserted)] = True
        self.__init__(so, flags, os)  # type: ignore[misc]

    @property
    def overlay(self) -> int:
        """Triples in the overlay (added, removed or re-flagged)."""
        return len(self.minus) + len(self.flags)

    def compact(self, force: bool = False) -> bool:
        """Merge the overlay into the arrays when it is large (or ``force``); True if it
        did."""
        if not self.overlay or (
            not force and (self.overlay < COMPACT_AT or 16 * self.overlay < len(self.so))
        ):
            return False
        self.__init__(*self.merged())  # type: ignore[misc]
        return True


class TripleSet:
    """The closure's triples as :class:`Segment` s by predicate id.

    Example:
        >>> t = TripleSet()
        >>> t.add(1, 0, 2, asserted=True), t.add(1, 0, 3, asserted=False)
        (True, True)
        >>> t.objects(1, 0), t.subjects(1, 3), t.is_asserted(1, 0, 3), len(t)
        ([2, 3], [0], False, 2)
    """

    __slots__ = ("segments",)

    def __init__(self) -> None:
        self.segments: dict[int, Segment] = {}

    def __len__(self) -> int:
        return sum(seg.size for seg in self.segments.values())

    def predicates(self) -> list[int]:
        """The predicates with at least one triple."""
        return [p for p, seg in self.segments.items() if seg.size]

    def count(self, p: int) -> int:
        """Triples of predicate ``p``."""
        seg = self.segments.get(p)
        return seg.size if seg is not None else 0

    def objects(self, p: int, s: int) -> list[int]:
        """Objects of ``(s, p, ?)``."""
        seg = self.segments.get(p)
        return seg.objects(s) if seg is not None else []

    def subjects(self, p: int, o: int) -> list[int]:
        """Subjects of ``(?, p, o)``."""
        seg = self.segments.get(p)
        return seg.subjects(o) if seg is not None else []

    def has(self, p: int, s: int, o: int) -> bool:
        """Whether the triple is in the set."""
        seg = self.segments.get(p)
        return seg is not None and seg.has(s, o)

    def is_asserted(self, p: int, s: int, o: int) -> bool:
        """Whether the triple is in the set and asserted."""
        seg = self.segments.get(p)
        return seg is not None and seg.is_asserted(s, o)

    def pairs(self, p: int) -> Iterator[tuple[int, int]]:
        """Every ``(s, o)`` of predicate ``p``."""
        seg = self.segments.get(p)
        return seg.pairs() if seg is not None else iter(())

    def triples(self, asserted_only: bool = False) -> Iterator[tuple[int, int, int]]:
        """Every triple as ids ``(s, p, o)`` (``asserted_only``: the asserted ones)."""
        for p, seg in self.segments.items():
            so, flags = seg.packed()
            if asserted_only:
                so = so[flags]
            for key in so.tolist():
                yield key >> 32, p, key & MASK

    def snapshot(self) -> TripleSet:
        """A copy that later edits leave as it is (:meth:`Segment.snapshot`)."""
        copy = TripleSet()
        copy.segments = {p: seg.snapshot() for p, seg in self.segments.items()}
        return copy

    def segment(self, p: int) -> Segment:
        """Predicate ``p``'s segment (made empty if it has none)."""
        seg = self.segments.get(p)
        if seg is None:
            seg = self.segments[p] = Segment()
        return seg

    def add(self, p: int, s: int, o: int, asserted: bool) -> bool:
        """Add a triple (``asserted`` raises the flag of one already there); True when it
        is new."""
        return self.segment(p).add(s, o, asserted)

    def remove(self, p: int, s: int, o: int) -> bool:
        """Remove a triple; True when it was there."""
        seg = self.segments.get(p)
        return seg is not None and seg.remove(s, o)

    def set_asserted(self, p: int, s: int, o: int, asserted: bool) -> None:
        """Change a present triple's asserted flag."""
        self.segment(p).set_asserted(s, o, asserted)

    def replace(self, p: int, so: IntArray, asserted: BoolArray) -> None:
        """Predicate ``p``'s triples become ``so`` (sorted keys) with their flags."""
        if len(so):
            self.segments[p] = Segment(so, asserted)
        else:
            self.segments.pop(p, None)

    def compact(self, force: bool = False) -> list[int]:
        """Merge large overlays into their arrays; the predicates compacted."""
        return [p for p, seg in self.segments.items() if seg.compact(force)]

    def add_many(self, triples: Iterable[tuple[int, int, int]], asserted: bool) -> int:
        """Add triples with one flag; how many were new."""
        return sum(self.add(p, s, o, asserted) for s, p, o in triples)
