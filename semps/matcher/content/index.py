"""The contract of the content indexes (predicate table, REIN, HCEM, brute force).

Every index is exact and supports insert, update (insert under a live id) and delete. The
compiled indexes share one layout: a :class:`~semps.matcher.content.table.SlotTable` of
units and a structure built over slots ``0..built-1``. Inserts after a build land in a
*delta* that is checked directly (every predicate against the event) until it outgrows
``max(delta_min, delta_fraction * built)``; deletes clear a live flag. The next match then
compacts the table and rebuilds the structure (one sort of every predicate), so inserts and
deletes are O(predicates) and the rebuild is amortised over many of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from semps._types import Value
from semps.errors import NotFound, SubscriptionError
from semps.matcher.content._bulk_kernels import sort_rows
from semps.matcher.content.bulk import ParsedSubscriptions
from semps.matcher.content.constraints import ContentSubscription
from semps.matcher.content.space import AttributeSpace, EncodedEvent
from semps.matcher.content.table import SlotTable
from semps.matcher.kernels import check_slots
from semps.matcher.results import MatchColumns

__all__ = ["CompiledIndex", "ContentIndex", "View"]

#: An attribute view: attribute -> its values.
View = Mapping[str, Sequence[Value]]


class ContentIndex(ABC):
    """An exact index of content subscriptions (every algorithm implements this).

    Contract:
        - ``add`` replaces a live subscription with the same id; ``remove`` of an unknown id
          raises :class:`~semps.errors.NotFound`.
        - ``match`` returns the ids of the matching subscriptions, sorted; ``match_batch``
          returns the same answers as ``match`` for each view.
        - Not thread-safe.
    """

    #: The algorithm's name (``--algorithm``).
    name: ClassVar[str]
    #: Does the index take :meth:`add_many` (parsed subscriptions in bulk)?
    bulk_loadable: bool = False

    @abstractmethod
    def __len__(self) -> int:
        """Live subscriptions."""

    @abstractmethod
    def __contains__(self, sub_id: object) -> bool:
        """Is ``sub_id`` live?"""

    @abstractmethod
    def add(self, subscription: ContentSubscription) -> None:
        """Insert ``subscription`` (an update when its id is live)."""

    @abstractmethod
    def remove(self, sub_id: str) -> None:
        """Delete a subscription (NotFound when unknown)."""

    @abstractmethod
    def match(self, view: View) -> list[str]:
        """Ids of the subscriptions ``view`` matches, sorted."""

    def add_many(self, parsed: ParsedSubscriptions) -> None:
        """Insert many new subscriptions at once (indexes with ``bulk_loadable``)."""
        msg = f"the {self.name} index has no bulk path"
        raise NotImplementedError(msg)

    def prepare(self, batch: int) -> None:
        """Build now whatever matching batches of ``batch`` events will need, so the first
        one does not wait for it (nothing here; indexes with a path per batch size
        override it)."""
        del batch

    def match_batch(self, views: Sequence[View]) -> list[list[str]]:
        """:meth:`match` for several views (batch algorithms override this)."""
        return [self.match(v) for v in views]

    def match_columns(self, views: Sequence[View]) -> MatchColumns:
        """:meth:`match_batch` as columns (every count 1); compiled indexes override this."""
        found = self.match_batch(views)
        ids = [i for group in found for i in group]
        sizes = [len(group) for group in found]
        event = np.repeat(np.arange(len(found), dtype=np.int64), sizes)
        return MatchColumns(
            len(found), event, np.arange(len(ids), dtype=np.int64), ids, np.ones(len(ids), np.int64)
        )


class CompiledIndex(ContentIndex):
    """The shared layout of the compiled indexes (slot table, structure, delta).

    Args:
        delta_min: inserts kept in the delta before a rebuild is considered.
        delta_fraction: the delta may also grow to this fraction of the built structure.
    """

    def __init__(self, *, delta_min: int = 1024, delta_fraction: float = 1 / 16) -> None:
        if delta_min < 0 or not 0 <= delta_fraction:
            msg = "delta_min and delta_fraction must not be negative"
            raise ValueError(msg)
        self.delta_min = delta_min
        self.delta_fraction = delta_fraction
        self.space = AttributeSpace()
        self.table = SlotTable()
        self.built = 0
        self.ncols_built = 0

    def __len__(self) -> int:
        return self.table.live

    def __contains__(self, sub_id: object) -> bool:
        return sub_id in self.table.slot_of

    # -- updates -------------------------------------------------------------------------------

    def add(self, subscription: ContentSubscription) -> None:
        """Insert ``subscription`` (an update when its id is live)."""
        cols, lows, highs = self.space.encode_conditions(subscription.conditions())
        if subscription.id in self.table.slot_of:
            self._killed(self.table.kill(subscription.id))
        self.table.append(subscription.id, cols, lows, highs)

    def remove(self, sub_id: str) -> None:
        """Delete a subscription."""
        if sub_id not in self.table.slot_of:
            msg = f"no content subscription {sub_id!r}"
            raise NotFound(msg)
        self._killed(self.table.kill(sub_id))

    def _killed(self, slot: int) -> None:
        """Hook: ``slot`` was just removed (its live flag cleared)."""

    def bulk_load(
        self, ids: Sequence[str], attrs: Sequence[str], cols: np.ndarray, bounds: np.ndarray
    ) -> None:
        """Insert many numeric subscriptions at once (benchmarks; no per-object parsing).

        Args:
            ids: one new id per subscription.
            attrs: attribute names; ``cols[i, j]`` indexes them.
            cols: ``(n, k)`` attribute indexes, distinct within a row.
            bounds: ``(n, k, 2)`` closed intervals (low <= high; ``±inf`` for open ends).
        """
        n, k = cols.shape
        if bounds.shape != (n, k, 2) or len(ids) != n:
            raise SubscriptionError("bulk_load needs (n, k) columns and (n, k, 2) bounds")
        if np.any(bounds[..., 0] > bounds[..., 1]) or np.isnan(bounds).any():
            raise SubscriptionError("bulk_load bounds need low <= high")
        mapping = np.array([self.space.column(a, False) for a in attrs], np.int32)
        real = mapping[cols]
        order = np.argsort(real, axis=1, kind="stable")
        real = np.take_along_axis(real, order, axis=1)
        if k > 1 and np.any(real[:, 1:] == real[:, :-1]):
            raise SubscriptionError("bulk_load rows must not repeat an attribute")
        lows = np.take_along_axis(bounds[..., 0], order, axis=1)
        highs = np.take_along_axis(bounds[..., 1], order, axis=1)
        starts = np.arange(n + 1, dtype=np.int64) * k
        self.table.extend(list(ids), starts, real.ravel(), lows.ravel(), highs.ravel())

    #: Can :meth:`add_many` take subscriptions in bulk (no interface aggregation)?
    bulk_loadable = True

    def add_many(self, parsed: ParsedSubscriptions) -> None:
        """Insert many new subscriptions at once (ids neither live nor repeated).

        Raises:
            ValueError: some id is live or repeated (nothing is inserted).
        """
        if not len(parsed):
            return
        ids = parsed.ids
        if not self.table.slot_of.keys().isdisjoint(ids) or len(set(ids)) != len(ids):
            msg = "add_many needs ids that are neither stored nor repeated"
            raise ValueError(msg)
        n = len(parsed.attr)
        is_string = np.zeros(n, np.bool_)
        positions = np.fromiter(parsed.strings, np.int64, count=len(parsed.strings))
        is_string[positions] = True
        used = np.zeros(len(parsed.names), np.bool_)
        used[parsed.attr[~is_string]] = True
        numeric = np.full(len(parsed.names), -1, np.int32)
        for i in np.flatnonzero(used).tolist():
            numeric[i] = self.space.column(parsed.names[i], False)
        cols = numeric[parsed.attr]
        lows, highs = parsed.lows.copy(), parsed.highs.copy()
        for p, value in parsed.strings.items():
            col, code = self.space.string_code(parsed.names[parsed.attr[p]], value)
            cols[p], lows[p], highs[p] = col, code, code
        sort_rows(parsed.starts, cols, lows, highs)
        self.table.extend(parsed.ids, parsed.starts, cols, lows, highs, checked=True)

    # -- structure -----------------------------------------------------------------------------

    def needs_rebuild(self) -> bool:
        """Has the delta (or the dead share) outgrown its bound?"""
        delta = len(self.table) - self.built
        limit = max(self.delta_min, self.delta_fraction * self.built)
        dead_limit = max(self.delta_min, len(self.table) // 4)
        return delta > limit or self.table.dead > dead_limit

    def rebuild(self) -> None:
        """Compact the table, number its slots in id order (so a structure's ascending
        slots list sorted ids) and build the structure over every live unit."""
        mapping = self.table.compact()
        order = self.table.sort_by_id()
        if order is not None:
            renumber = np.empty(len(order), np.int64)
            renumber[order] = np.arange(len(order))
            mapping = np.where(mapping >= 0, renumber[np.maximum(mapping, 0)], -1)
        self._compacted(mapping)
        self.ncols_built = len(self.space)
        self.built = len(self.table)
        self._build()

    def refresh(self) -> None:
        """Rebuild when :meth:`needs_rebuild`."""
        if self.needs_rebuild():
            self.rebuild()

    def _compacted(self, mapping: np.ndarray) -> None:
        """Hook: slots were renumbered (``mapping``: old -> new, -1 dropped)."""

    @abstractmethod
    def _build(self) -> None:
        """Build the structure over slots ``0..built-1`` (all live)."""

    @abstractmethod
    def _match_built(self, event: EncodedEvent) -> np.ndarray:
        """Live matching slots among ``0..built-1``, ascending."""

    def _match_built_batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        return [self._match_built(e) for e in events]

    def memory(self) -> int:
        """Bytes held by the table and the structure's arrays."""
        arrays = [self.table.alive, self.table.starts, self.table.cols]
        arrays += [self.table.lows, self.table.highs]
        return sum(a.nbytes for a in arrays) + self._structure_bytes()

    def _structure_bytes(self) -> int:
        return 0

    # -- matching ------------------------------------------------------------------------------

    def encode(self, view: View) -> EncodedEvent:
        """The event as the compiled structures see it."""
        return self.space.encode_view(view)

    def match_encoded(self, event: EncodedEvent) -> np.ndarray:
        """Matching slots (ascending) for an encoded event."""
        self.refresh()
        return self._with_delta(self._match_built(event), event)

    def match_encoded_batch(self, events: Sequence[EncodedEvent]) -> list[np.ndarray]:
        """:meth:`match_encoded` for several events (batch algorithms override the core)."""
        self.refresh()
        built = self._match_built_batch(events)
        return [self._with_delta(b, e) for b, e in zip(built, events, strict=True)]

    def _with_delta(self, built: np.ndarray, event: EncodedEvent) -> np.ndarray:
        n = len(self.table)
        if n == self.built:
            return built
        out = np.empty(n - self.built, np.int32)
        t = self.table
        k = check_slots(
            self.built, n, t.starts, t.cols, t.lows, t.highs, t.alive, event.start,
            event.values, event.values, out,
        )  # fmt: skip
        return np.concatenate([built, out[:k]]) if k else built

    def ids_of(self, slots: np.ndarray, event: EncodedEvent) -> list[str]:
        """Subscription ids of the matching slots for ``event``, sorted."""
        ids = self.table.ids
        return sorted(ids[s] for s in slots.tolist())

    def match(self, view: View) -> list[str]:
        """Ids of the subscriptions ``view`` matches, sorted."""
        event = self.encode(view)
        return self.ids_of(self.match_encoded(event), event)

    def match_batch(self, views: Sequence[View]) -> list[list[str]]:
        """:meth:`match` for several views at once."""
        events = [self.encode(v) for v in views]
        found = self.match_encoded_batch(events)
        return [self.ids_of(s, e) for s, e in zip(found, events, strict=True)]

    def _units_are_subscriptions(self) -> bool:
        """Is every slot one subscription (no aggregate to re-check)?"""
        return True

    def match_columns(self, views: Sequence[View]) -> MatchColumns:
        """:meth:`match_batch` as columns: subscription indexes are slots into the table's
        id list, with no per-match Python object."""
        if not self._units_are_subscriptions():
            return super().match_columns(views)
        return self.match_columns_encoded([self.encode(v) for v in views])

    def match_columns_values(self, values: Sequence[Mapping[str, Value]]) -> MatchColumns:
        """:meth:`match_columns` for events given as attribute -> one value (JSON events'
        ``values``)."""
        return self.match_columns([{k: (v,) for k, v in row.items()} for row in values])

    def match_columns_encoded(self, events: Sequence[EncodedEvent]) -> MatchColumns:
        """:meth:`match_columns` for encoded events (units must be subscriptions)."""
        return self._columns(self.match_encoded_batch(events))  # may rebuild: ids after

    def _columns(self, found: Sequence[np.ndarray]) -> MatchColumns:
        """Matching slots per event (ascending) as columns, each event's in id order."""
        ids = self.table.ids
        if len(self.table) > self.built:  # delta slots follow the built ones: sort by id
            found = [f if len(f) < 2 or f[-1] < self.built else self._by_id(f) for f in found]
        sizes = [len(f) for f in found]
        event = np.repeat(np.arange(len(found), dtype=np.int64), sizes)
        slots = np.concatenate(found).astype(np.int64) if found else np.zeros(0, np.int64)
        return MatchColumns(len(found), event, slots, ids, np.ones(len(slots), np.int64))

    def _by_id(self, slots: np.ndarray) -> np.ndarray:
        """Ascending slots in id order: built slots are in id order already, so each delta
        slot goes where its id falls among the built ids (one search per delta slot)."""
        built = slots[slots < self.built]
        delta = slots[slots >= self.built]
        if len(delta) > 1:
            delta = delta[np.argsort(_id_keys(self.table.ids, delta), kind="stable")]
        ids = self.table.ids
        where = np.array(
            [bisect_left(ids, ids[d], 0, self.built) for d in delta.tolist()], np.int64
        )
        return np.insert(built, np.searchsorted(built, where), delta)


def _id_keys(ids: list[str], slots: np.ndarray) -> np.ndarray:
    """Rank of each slot's id among ``slots``' ids (a sort key in id order)."""
    names = [ids[s] for s in slots.tolist()]
    rank = np.empty(len(names), np.int64)
    rank[np.array(sorted(range(len(names)), key=names.__getitem__), np.int64)] = np.arange(
        len(names)
    )
    return rank
