"""The merged subscription graph: HMProp -> HMNPN -> SC, and what an event's pairs hit.

``HMProp`` (a dictionary: property -> :class:`HMNPN`) holds, per node-pair key, the
:class:`SC` listing every subscription with that triple pattern: a pattern shared by many
subscriptions is stored once. :func:`hit_containers` finds the containers an event's node
pairs hit; :class:`~semps.matcher.semantic.index.SubscriptionIndex` counts a subscription's
hit containers (counter filtering).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.matcher.semantic.codes import STAR
from semps.matcher.semantic.compiled import NPNKey, Pattern
from semps.matcher.semantic.pairs import EventPairs
from semps.terms import RDF_TYPE

__all__ = ["HMNPN", "SC", "HMProp", "SlotList", "anchor_of", "hit_containers"]

IntArray = npt.NDArray[np.int64]


class SlotList:
    """Slots in the order they came (with multiplicity), and as a NumPy array made when
    first asked for after a change."""

    __slots__ = ("items", "cached")

    def __init__(self) -> None:
        self.items: list[int] = []
        #: The array while it is current (``None`` after a change): the same object until
        #: the next change, so what was built from it can tell it is still current.
        self.cached: IntArray | None = None

    def __len__(self) -> int:
        return len(self.items)

    def add(self, slot: int) -> None:
        self.items.append(slot)
        self.cached = None

    def discard(self, slot: int) -> None:
        self.items.remove(slot)
        self.cached = None

    def array(self) -> IntArray:
        """The slots as a NumPy array."""
        if self.cached is None:
            self.cached = np.asarray(self.items, dtype=np.int64)
        return self.cached


@dataclass(slots=True, eq=False)
class SC:
    """A subscription container: the slots of the subscriptions that hold one pattern
    (with multiplicity: a subscription using the pattern twice is listed twice), and the
    slots of those for which it is the anchor (their most selective pattern)."""

    cid: int = 0  # the container's number (0 is never a container: see SubscriptionIndex)
    slots: SlotList = field(default_factory=SlotList)
    anchored: SlotList = field(default_factory=SlotList)
    #: The anchored slots' rows for the counter filter's compiled pass (built by the index:
    #: ``SubscriptionIndex._build_rows``): read in sequence, not gathered slot by slot.
    rows: npt.NDArray[np.int32] | None = None
    rows_of: IntArray | None = None  # the anchored array the rows were built from


_ANY: NPNKey = (STAR, STAR)


class HMNPN(Mapping[NPNKey, SC]):
    """One property's containers by node-pair key (the seed's HMNPN), kept by what an event
    pair must carry to hit them: nothing (``(*, *)``), its subject, its object, or both;
    so probing (:func:`hit_containers`) is a dictionary look-up per
    pair, with no key made."""

    __slots__ = ("any", "by_s", "by_o", "by_pair", "ends")

    def __init__(self) -> None:
        self.any: SC | None = None
        self.by_s: dict[Term, SC] = {}
        self.by_o: dict[Term, SC] = {}
        self.by_pair: dict[tuple[Term, Term], SC] = {}
        #: The tables probed by one end of a pair, with the end (1: object, 0: subject),
        #: those that hold containers only.
        self.ends: tuple[tuple[dict[Term, SC], int], ...] = ()

    def _changed(self) -> None:
        self.ends = tuple((t, end) for t, end in ((self.by_o, 1), (self.by_s, 0)) if t)

    def _table(self, key: NPNKey) -> tuple[dict[Any, SC], Any]:
        s, o = key
        if s == STAR:
            return self.by_o, o
        return (self.by_s, s) if o == STAR else (self.by_pair, key)

    def __getitem__(self, key: NPNKey) -> SC:
        if key[0] == STAR and key[1] == STAR:
            if self.any is None:
                raise KeyError(key)
            return self.any
        table, at = self._table(key)
        return table[at]

    def get(self, key: NPNKey, default: Any = None) -> Any:
        """As ``Mapping.get``, without raising KeyError on a miss (registration misses often)."""
        if key[0] == STAR and key[1] == STAR:
            return default if self.any is None else self.any
        table, at = self._table(key)
        return table.get(at, default)

    def __setitem__(self, key: NPNKey, container: SC) -> None:
        if key[0] == STAR and key[1] == STAR:
            self.any = container
        else:
            table, at = self._table(key)
            table[at] = container
            self._changed()

    def __delitem__(self, key: NPNKey) -> None:
        if key[0] == STAR and key[1] == STAR:
            if self.any is None:
                raise KeyError(key)
            self.any = None
        else:
            table, at = self._table(key)
            del table[at]
            self._changed()

    def __iter__(self) -> Iterator[NPNKey]:
        if self.any is not None:
            yield _ANY
        yield from ((STAR, o) for o in self.by_o)
        yield from ((s, STAR) for s in self.by_s)
        yield from self.by_pair

    def __len__(self) -> int:
        return (self.any is not None) + len(self.by_o) + len(self.by_s) + len(self.by_pair)


#: The containers of every property: the merged subscription graph's top table.
HMProp = dict[str, HMNPN]


def hit_containers(hm_prop: HMProp, pairs: EventPairs) -> set[SC]:
    """The containers the event's pairs hit, each once: per property of the event, its
    :class:`HMNPN`'s containers for any pair, then by each pair's object, subject, or
    both (one loop for every property: a method call per property cost a fifth of the
    time)."""
    hit: set[SC] = set()
    add = hit.add
    for prop, event_pairs in pairs.by_prop.items():
        hm = hm_prop.get(prop)
        if hm is None:
            continue
        if hm.any is not None:
            add(hm.any)
        for table, end in hm.ends:
            get = table.get
            for pair in event_pairs:
                c = get(pair[end])
                if c is not None:
                    add(c)
        if hm.by_pair:
            pair_get = hm.by_pair.get
            for pair in event_pairs:
                c = pair_get(pair)
                if c is not None:
                    add(c)
    return hit


def anchor_of(patterns: tuple[Pattern, ...]) -> int:
    """The index of the subscription's most selective pattern: most constants, a property
    before ``rdf:type`` (class SCs are broad), the first on a tie."""
    best, best_score = 0, -1
    for i, p in enumerate(patterns):
        s, o = p.key
        score = 2 * ((s != STAR) + (o != STAR)) + (p.prop != RDF_TYPE)
        if score > best_score:
            best, best_score = i, score
    return best
