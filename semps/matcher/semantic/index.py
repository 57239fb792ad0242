"""The subscription index and phase 1, counter filtering.

The index holds the merged subscription graph (:mod:`.containers`: ``HMProp``: property ->
``HMNPN``: node-pair key -> ``SC``, the subscription list of every subscription with that
triple pattern), its shapes' slots (:mod:`.shapeslots`) and families
(:mod:`.shapefamilies`). Insert and delete touch only the subscription's own patterns.

Counter filtering: each subscription's counter is the number of its patterns whose SC is hit
by at least one node pair of the event; a subscription whose counter is below its pattern
count cannot match and is dropped. ``rdf:type`` patterns are indexed like any property and
are hit by PartB's (node, type) pairs, so type constraints filter too.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from semps.matcher.semantic._kernels import candidate_shapes, complete_slots
from semps.matcher.semantic.codes import ANY_PROPERTY
from semps.matcher.semantic.compiled import CompiledSubscription, Pattern
from semps.matcher.semantic.containers import HMNPN, SC, HMProp, anchor_of, hit_containers
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.shapefamilies import ShapeFamilies
from semps.matcher.semantic.shapeslots import ShapeSlots

IntArray = npt.NDArray[np.int64]

#: Containers per slot in the counter table besides the anchor; a subscription with more
#: patterns keeps the rest apart (one wide subscription must not widen every row).
_WIDTH = 8
_NO_SLOTS: IntArray = np.zeros(0, dtype=np.int64)


class CandidateShapes(NamedTuple):
    """Phase 1's survivors by shape (``first_slots``: the representative slot of each;
    :meth:`SubscriptionIndex.slots_of` gives them all), and their positions grouped by
    family (``grouped``, one run per family between ``bounds``) or ``alone``."""

    shapes: IntArray
    first_slots: IntArray
    grouped: IntArray
    bounds: IntArray
    alone: IntArray


class SubscriptionIndex:
    """HMProp -> HMNPN -> SC, plus the per-slot pattern counts."""

    def __init__(self) -> None:
        self.hm_prop: HMProp = {}
        self.subscriptions: dict[str, CompiledSubscription] = {}
        self.slot_of: dict[str, int] = {}
        self.sub_at: list[CompiledSubscription | None] = []
        self.containers_at: list[tuple[SC, ...]] = []
        # Per slot, the numbers of its containers besides the anchor, padded with 0; number
        # 0 is "always hit", so a row is all hit iff the subscription's patterns all are.
        self._others = np.zeros((0, 4), dtype=np.int64)
        self._hit = np.ones(1, dtype=np.bool_)  # by container number; only [0] stays set
        self._free_cids: list[int] = []
        # Containers beyond the table's width (_WIDTH), by slot, for wide subscriptions.
        self._overflow: dict[int, tuple[int, ...]] = {}
        self._next_cid = 1
        # Subscriptions that differ only in their id share a shape, and so a verdict.
        self.shape_at = np.zeros(0, dtype=np.int64)  # by slot
        self.id_at = np.zeros(0, dtype=object)  # subscription ids by slot, for bulk answers
        # Id ranks and JSON texts by slot (:meth:`id_ranks`), until the next change.
        self._order: tuple[IntArray, npt.NDArray[np.uint8], IntArray] | None = None
        self._shapes: dict[tuple[object, ...], int] = {}
        # By shape: its slots. They share their patterns, so the containers hit for one
        # are hit for all: only the first (its representative) is anchored, and phase 1
        # counts shapes, not slots (:meth:`slots_of` gives the slots back).
        self._slots = ShapeSlots()
        self._next_shape = 0
        self._free: list[int] = []
        self._need = np.zeros(0, dtype=np.int64)
        # Shapes that differ only in filter constants form a family (:mod:`.family`).
        self.families = ShapeFamilies()
        self._fam_count = np.zeros(0, dtype=np.int64)  # by family, two each: for the same
        # Subscriptions with an algebra (:mod:`.required`): each alternative of required
        # patterns is an entry ("alias") of an index of their own; one with an empty
        # alternative is a candidate of every event.
        self.algebra: dict[str, CompiledSubscription] = {}
        self._required: SubscriptionIndex | None = None
        self._alias_of: dict[str, str] = {}
        self._always: dict[str, None] = {}
        #: By id: the number of the subscription's shape (its algebra, projection and form;
        #: hashed once here, not per event), so identical ones are evaluated once per event.
        self.algebra_shape: dict[str, int] = {}
        self._algebra_shapes: dict[tuple[object, ...], int] = {}

    def __len__(self) -> int:
        return len(self.subscriptions)

    def insert(self, sub: CompiledSubscription) -> None:
        """Index a subscription (replacing one with the same id); O(patterns)."""
        sid = sub.id
        if sid in self.subscriptions:
            self.delete(sid)
        if sub.algebra is not None:
            self._insert_algebra(sub)
            return
        slot = self._free.pop() if self._free else self._new_slot()
        self.sub_at[slot] = sub
        self.id_at[slot] = sid
        self._order = None
        self._need[slot] = len(sub.patterns)
        self.slot_of[sid] = slot
        self.subscriptions[sid] = sub
        shape = self._shapes.get(key := _shape_key(sub))
        if shape is None:
            shape = self._shapes[key] = self._next_shape
            self._next_shape += 1
            self.families.join(shape, sub)
        first = self._slots.add(shape, slot)
        self.shape_at[slot] = shape
        self._index_patterns(slot, sub.patterns, anchor=first)

    def _new_slot(self) -> int:
        """A slot past the last one (the arrays grown when full)."""
        slot = len(self.sub_at)
        self.sub_at.append(None)
        self.containers_at.append(())
        if slot >= len(self._need):
            self._grow()
        return slot

    def _grow(self) -> None:
        """Room for twice as many slots (amortized: O(1) per insert); new rows are 0."""
        cap = max(16, 2 * len(self._need))
        self._need = np.resize(self._need, cap)
        self.shape_at = np.resize(self.shape_at, cap)
        self.id_at = np.resize(self.id_at, cap)
        grown = np.zeros((cap, self._others.shape[1]), dtype=np.int64)
        grown[: len(self._others)] = self._others
        self._others = grown

    def _index_patterns(self, slot: int, patterns: tuple[Pattern, ...], anchor: bool) -> None:
        """The slot listed in its patterns' containers, anchored in the most selective
        (:func:`~.containers.anchor_of`) if ``anchor`` (its shape's representative), the
        others' numbers in its counter table row (all 0 before: rows start 0 and
        :meth:`delete` zeroes them)."""
        containers = []
        hm_prop = self.hm_prop
        for pattern in patterns:
            hm_npn = hm_prop.get(pattern.prop)
            if hm_npn is None:
                hm_npn = hm_prop[pattern.prop] = HMNPN()
            container = hm_npn.get(pattern.key)
            if container is None:
                container = hm_npn[pattern.key] = SC(self._new_cid())
            container.slots.add(slot)
            containers.append(container)
        self.containers_at[slot] = tuple(containers)
        if len(containers) == 1:
            if anchor:
                containers[0].anchored.add(slot)
            return
        at = anchor_of(patterns)
        if anchor:
            containers[at].anchored.add(slot)
        others = [c.cid for i, c in enumerate(containers) if i != at]
        if len(others) > _WIDTH:  # a wide subscription: the rest is checked in Python
            self._overflow[slot] = tuple(others[_WIDTH:])
            others = others[:_WIDTH]
        if len(others) > self._others.shape[1]:
            wider = np.zeros((len(self._others), len(others)), dtype=np.int64)
            wider[:, : self._others.shape[1]] = self._others
            self._others = wider
        row = self._others[slot]
        for j, cid in enumerate(others):
            row[j] = cid

    def _insert_algebra(self, sub: CompiledSubscription) -> None:
        self.subscriptions[sub.id] = self.algebra[sub.id] = sub
        key = (sub.algebra, sub.projection, sub.distinct, sub.ask)
        self.algebra_shape[sub.id] = self._algebra_shapes.setdefault(key, len(self._algebra_shapes))
        if any(not alt for alt in sub.alternatives):
            self._always[sub.id] = None
            return
        if self._required is None:
            self._required = SubscriptionIndex()
        for k, alt in enumerate(sub.alternatives):
            alias = f"{k}\x1f{sub.id}"
            self._alias_of[alias] = sub.id
            self._required.insert(
                CompiledSubscription(alias, alt, (), (), distinct=False, ask=True)
            )

    def _delete_algebra(self, subscription_id: str) -> CompiledSubscription:
        sub = self.algebra.pop(subscription_id)
        del self.subscriptions[subscription_id]
        del self.algebra_shape[subscription_id]  # its shape's number stays (never reused)
        if self._always.pop(subscription_id, 0) is None:
            return sub
        for k in range(len(sub.alternatives)):
            alias = f"{k}\x1f{subscription_id}"
            del self._alias_of[alias]
            self._required.delete(alias)  # type: ignore[union-attr]
        return sub

    def algebra_candidates(self, pairs: EventPairs) -> list[CompiledSubscription]:
        """Phase 1 for subscriptions with an algebra: those with an alternative whose
        every required pattern is hit by the event, and those requiring nothing; by id."""
        if not self.algebra:
            return []
        found = dict(self._always)
        required = self._required
        if required is not None and required.subscriptions:
            alias_of, at = self._alias_of, required.id_at
            if ANY_PROPERTY in required.hm_prop:
                pairs = pairs.with_any_property()
            for slot in required.counter_slots(pairs, ordered=False).tolist():
                found[alias_of[at[slot]]] = None
        return [self.algebra[i] for i in sorted(found)]

    def delete(self, subscription_id: str) -> CompiledSubscription:
        """Remove a subscription; O(patterns x SC length). Raises KeyError if unknown."""
        if subscription_id in self.algebra:
            return self._delete_algebra(subscription_id)
        sub = self.subscriptions.pop(subscription_id)
        slot = self.slot_of.pop(subscription_id)
        shape = int(self.shape_at[slot])
        successor = self._slots.remove(shape, slot)
        if successor is not None:  # the representative: the next one is anchored instead
            self.containers_at[slot][anchor_of(sub.patterns)].anchored.discard(slot)
            if successor >= 0:
                rep = self.sub_at[successor]
                assert rep is not None, "a live slot"
                self.containers_at[successor][anchor_of(rep.patterns)].anchored.add(successor)
        if not self._slots.size_of(shape):
            del self._shapes[_shape_key(sub)]
            self.families.leave(shape)
        self.containers_at[slot] = ()
        self._others[slot] = 0
        self._overflow.pop(slot, None)
        for pattern in sub.patterns:
            hm_npn = self.hm_prop[pattern.prop]
            container = hm_npn[pattern.key]
            container.slots.discard(slot)
            if not container.slots.items:
                del hm_npn[pattern.key]
                self._free_cids.append(container.cid)
                if not hm_npn:
                    del self.hm_prop[pattern.prop]
        self.sub_at[slot] = None
        self.id_at[slot] = None
        self._order = None
        self._need[slot] = 0
        self._free.append(slot)
        return sub

    def id_ranks(self) -> IntArray:
        """By slot: the rank of its subscription id among all ids (Python string order;
        free slots rank first), recomputed after a change."""
        return self._ordered()[0]

    def id_text(self) -> tuple[npt.NDArray[np.uint8], IntArray]:
        """The ids as JSON (``json.dumps(id)``, ASCII) one after another in rank order
        (:meth:`id_ranks`), and where each rank's starts (``starts[rank + 1]`` is where it
        ends), for output lines: a line's ids are read front to back."""
        _, blob, starts = self._ordered()
        return blob, starts

    def _ordered(self) -> tuple[IntArray, npt.NDArray[np.uint8], IntArray]:
        if self._order is None:
            ids = self.id_at[: len(self.sub_at)].tolist()
            order = sorted(range(len(ids)), key=lambda i: ids[i] or "")
            ranks = np.empty(len(ids), dtype=np.int64)
            ranks[order] = np.arange(len(ids), dtype=np.int64)
            texts = [json.dumps(ids[i]).encode() if ids[i] is not None else b"" for i in order]
            starts = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum([len(t) for t in texts], out=starts[1:])
            blob = np.frombuffer(b"".join(texts), dtype=np.uint8)
            self._order = (ranks, blob, starts)
        return self._order

    def counter_filter(self, pairs: EventPairs) -> list[CompiledSubscription]:
        """Phase 1: the subscriptions whose every pattern is hit by the event, in index
        (slot) order (see :meth:`counter_slots`), then :meth:`algebra_candidates`."""
        at = self.sub_at
        found = [at[i] for i in self.counter_slots(pairs).tolist()]
        if self.algebra:
            found.extend(self.algebra_candidates(pairs))
        return found

    def counter_slots(self, pairs: EventPairs, ordered: bool = True) -> IntArray:
        """Phase 1 by slot: the slots of the subscriptions whose every pattern is hit,
        sorted unless ``ordered`` is false.

        A subscription's counter (its patterns whose SC the event hits) can only reach its
        pattern count if its anchor, its most selective pattern, is hit; so counters are
        kept for the subscriptions anchored in a hit SC only, not for every subscription a
        broad SC (``?x a ub:Person``) lists. The survivors are the same.
        """
        hit = hit_containers(self.hm_prop, pairs)
        anchored = [c.anchored.array() for c in hit if c.anchored.items]
        if not anchored:
            return _NO_SLOTS
        cids = self._mark(hit)
        try:
            complete = self._complete(np.concatenate(anchored))
        finally:
            self._unmark(cids)
        complete = self.slots_of(self.shape_at[complete])[0]
        if ordered:
            complete.sort()
        return complete

    def slot_blocks(self) -> tuple[IntArray, IntArray, IntArray]:
        """By shape, where its slots start in the flat array and how many, and the flat
        array (:class:`.shapeslots.ShapeSlots`), for compiled passes: valid until the
        next change."""
        blocks = self._slots
        return blocks.start, blocks.size, blocks.flat

    @property
    def shape_sizes(self) -> IntArray:
        """By shape, how many subscriptions have it (valid until the next change)."""
        return self._slots.size

    def slots_of(self, shapes: IntArray) -> tuple[IntArray, IntArray]:
        """The slots of the ``shapes`` one shape after another, and how many each has."""
        return self._slots.of(shapes)

    def candidate_shapes(self, pairs: EventPairs) -> CandidateShapes:
        """Phase 1 (as :meth:`counter_slots`, in no order) and its survivors' shapes grouped
        by family, in one compiled pass (``_kernels.candidate_shapes``) over the hit
        containers' rows (each container's kept in it until its anchored slots or the
        table's width change: :meth:`_build_rows`)."""
        hit = hit_containers(self.hm_prop, pairs)
        width = 2 + self._width
        rows = []
        for c in hit:  # (a loop: the common case, rows already built, costs no call)
            anchored = c.anchored
            if anchored.items:
                found = c.rows
                if found is None or c.rows_of is not anchored.cached or found.shape[1] != width:
                    found = self._build_rows(c)
                rows.append(found)
        if not rows:
            return CandidateShapes(*(_NO_SLOTS,) * 5)
        families = self.families.count
        if len(self._fam_count) < 2 * families:
            self._fam_count = np.zeros(4 * families, dtype=np.int64)
        mask, cids = self._hit, self._mark(hit)
        try:
            table = np.concatenate(rows)
            if self._overflow:  # wide subscriptions: their other containers checked here
                slots = self._complete(table[:, 0].astype(np.int64))
                table = self._slot_rows(slots)
            shapes = candidate_shapes(table, mask, self.families.shape_fam, self._fam_count)
        finally:
            self._unmark(cids)
        return CandidateShapes(*shapes)

    def _mark(self, hit: set[SC]) -> npt.NDArray[np.intp]:
        """Set the ``hit`` containers' numbers in ``self._hit``, for the compiled checks;
        returns the numbers, for :meth:`_unmark`."""
        cids = np.fromiter([c.cid for c in hit], np.intp, len(hit))
        self._hit[cids] = True
        return cids

    def _unmark(self, cids: npt.NDArray[np.intp]) -> None:
        """Unset what :meth:`_mark` set (number 0, "always hit", stays set)."""
        mask = self._hit
        mask[cids] = False
        mask[0] = True

    def _build_rows(self, container: SC) -> npt.NDArray[np.int32]:
        """The container's anchored slots as rows ``(slot, shape, other containers...)``,
        kept in it with the slots array they were built from (a new array whenever the
        slots change)."""
        slots = container.anchored.array()
        rows = container.rows = self._slot_rows(slots)
        container.rows_of = slots
        return rows

    @property
    def _width(self) -> int:
        return int(self._others.shape[1])

    def _slot_rows(self, slots: IntArray) -> npt.NDArray[np.int32]:
        rows = np.empty((len(slots), 2 + self._width), dtype=np.int32)
        rows[:, 0] = slots
        rows[:, 1] = self.shape_at[slots]
        rows[:, 2:] = self._others[slots]
        return rows

    def _complete(self, candidates: IntArray) -> IntArray:
        """The candidates whose every container is hit (``self._hit`` set)."""
        mask = self._hit
        complete = complete_slots(candidates, self._others, mask)
        if self._overflow:
            overflow = self._overflow
            keep = [
                slot not in overflow or all(mask[c] for c in overflow[slot])
                for slot in complete.tolist()
            ]
            complete = complete[np.asarray(keep, dtype=np.bool_)]
        return complete

    def _new_cid(self) -> int:
        if self._free_cids:
            return self._free_cids.pop()
        cid = self._next_cid
        self._next_cid += 1
        if cid >= len(self._hit):
            grown = np.zeros(max(16, 2 * len(self._hit)), dtype=np.bool_)
            grown[0] = True
            self._hit = grown
        return cid

    def counter_filter_all(self, pairs: EventPairs) -> list[CompiledSubscription]:
        """Phase 1 as the seed states it: a counter for every subscription listed in a hit
        SC (the reference :meth:`counter_filter` is tested against)."""
        hit = [c.slots.array() for c in hit_containers(self.hm_prop, pairs)]
        if not hit:
            return []
        counters = np.bincount(np.concatenate(hit), minlength=len(self.sub_at))
        need = self._need[: len(counters)]
        survivors = np.flatnonzero((counters >= need) & (need > 0))
        at = self.sub_at
        return [at[i] for i in survivors.tolist()]  # type: ignore[misc]


def _shape_key(sub: CompiledSubscription) -> tuple[object, ...]:
    """Everything verification reads of a subscription but its id: its components, or
    its patterns when it has none (the required patterns of an algebra's alternative),
    so subscriptions of one shape have the same patterns, hence the same containers."""
    return (sub.components or sub.patterns, sub.projection, sub.distinct, sub.ask)
