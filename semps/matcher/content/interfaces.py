"""The subscription list and interface list, with aggregation.

An *interface* is a delivery direction (a subscriber, in the broker) and holds *entries*:
what the predicate table actually indexes. An entry is one subscription, or an *aggregate*
covering several subscriptions of one interface. When an interface holds more entries than
its limit, its two entries with the largest overlap are replaced by their aggregate, whose
condition per attribute is the hull of both (attributes only one of them constrains are
dropped, strings kept only when equal), so it matches at least every event either matches.
Delivery stays exact because a matched aggregate's members are re-checked one by one.

Overlap of two entries: the sum over their common attributes of the Jaccard index of the two
intervals (clipped to their finite ends; equal strings count 1). Entries with no common
attribute score 0 and are never aggregated, so an interface whose entries share nothing may
stay over its limit (an aggregate that matches every event would help nobody).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from semps.errors import NotFound
from semps.matcher.content.constraints import Condition, ContentSubscription

__all__ = ["Entry", "InterfaceList", "Op", "hull", "overlap"]


@dataclass(frozen=True, slots=True)
class Entry:
    """What the predicate table indexes: a subscription or an aggregate of several.

    Attributes:
        uid: the unit id in the table (the subscription id for a plain entry).
        members: the subscriptions it stands for.
        conditions: attribute -> condition (for an aggregate, the hull of its members').
    """

    uid: str
    members: tuple[str, ...]
    conditions: Mapping[str, Condition] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.members:
            msg = f"entry {self.uid!r} stands for no subscription"
            raise ValueError(msg)

    @property
    def plain(self) -> bool:
        """One subscription, indexed under its own id."""
        return self.members == (self.uid,)


#: A change the predicate table must apply, in order: ("kill", uid) or ("add", entry).
Op = tuple[str, "str | Entry"]


def hull(a: Mapping[str, Condition], b: Mapping[str, Condition]) -> dict[str, Condition]:
    """The smallest condition set both ``a`` and ``b`` imply.

    Example:
        >>> hull({"x": (0.1, 0.3), "y": "red", "z": (1.0, 1.0)}, {"x": (0.2, 0.5), "y": "red"})
        {'x': (0.1, 0.5), 'y': 'red'}
    """
    out: dict[str, Condition] = {}
    for attr, ca in a.items():
        cb = b.get(attr)
        if cb is None:
            continue
        if isinstance(ca, str) or isinstance(cb, str):
            if ca == cb:
                out[attr] = ca
        else:
            out[attr] = (min(ca[0], cb[0]), max(ca[1], cb[1]))
    return out


def overlap(a: Mapping[str, Condition], b: Mapping[str, Condition]) -> float:
    """How much two entries overlap (see the module doc).

    Example:
        >>> overlap({"x": (0.0, 0.5)}, {"x": (0.25, 0.75)}), overlap({"x": (0.0, 1.0)}, {"y": "a"})
        (0.3333333333333333, 0.0)
    """
    score = 0.0
    for attr, ca in a.items():
        cb = b.get(attr)
        if cb is None:
            continue
        if isinstance(ca, str) or isinstance(cb, str):
            score += 1.0 if ca == cb else 0.0
            continue
        ends = [x for x in (*ca, *cb) if math.isfinite(x)]
        if not ends:  # both (-inf, inf)
            score += 1.0
            continue
        lo, hi = min(ends), max(ends)
        a0, a1 = max(ca[0], lo), min(ca[1], hi)
        b0, b1 = max(cb[0], lo), min(cb[1], hi)
        inter = min(a1, b1) - max(a0, b0)
        if inter < 0:
            continue
        span = max(a1, b1) - min(a0, b0)
        score += inter / span if span > 0 else 1.0
    return score


class InterfaceList:
    """Interfaces, their entries and the subscription list (which entry holds which).

    Args:
        limit: entries per interface before aggregation; ``None`` never aggregates.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            msg = f"the interface limit must be at least 1, not {limit}"
            raise ValueError(msg)
        self.limit = limit
        #: subscription id -> the subscription (None when bulk-loaded without objects)
        self.subscriptions: dict[str, ContentSubscription | None] = {}
        self.entries: dict[str, Entry] = {}
        self.entry_of: dict[str, str] = {}
        self.interfaces: dict[str, list[str]] = {}
        self._interface_of: dict[str, str] = {}
        self._aggregates = 0

    def adopt(self, ids: Iterable[str]) -> None:
        """Register subscriptions stored directly in the table (each its own entry)."""
        for sub_id in ids:
            self.subscriptions[sub_id] = None

    def add(self, sub: ContentSubscription) -> list[Op]:
        """Register (or replace) ``sub``; returns the changes for the table."""
        ops = self.remove(sub.id) if sub.id in self.subscriptions else []
        iface = sub.interface if sub.interface is not None else "\x00" + sub.id
        self.subscriptions[sub.id] = sub
        ops += self._register(Entry(sub.id, (sub.id,), sub.conditions()), iface)
        return ops + self._settle(iface)

    def _settle(self, iface: str) -> list[Op]:
        """Aggregate while the interface is over its limit and two entries overlap."""
        ops: list[Op] = []
        while self.limit is not None and len(self.interfaces.get(iface, ())) > self.limit:
            pair = self._best_pair(self.interfaces[iface])
            if pair is None:
                break
            ops += self._merge(*pair, iface)
        return ops

    def remove(self, sub_id: str) -> list[Op]:
        """Unregister ``sub_id``; its aggregate shrinks (or becomes a plain entry)."""
        if sub_id not in self.subscriptions:
            msg = f"no content subscription {sub_id!r}"
            raise NotFound(msg)
        del self.subscriptions[sub_id]
        uid = self.entry_of.get(sub_id)
        if uid is None:  # adopted: its own entry
            return [("kill", sub_id)]
        entry = self.entries[uid]
        iface = self._interface_of[uid]
        ops = self._unregister(uid)
        rest = [m for m in entry.members if m != sub_id]
        if len(rest) == 1:
            only = self.subscriptions[rest[0]]
            assert only is not None
            ops += self._register(Entry(only.id, (only.id,), only.conditions()), iface)
        elif rest:
            conditions = self._conditions(rest[0])
            for member in rest[1:]:
                conditions = hull(conditions, self._conditions(member))
            ops += self._register(self._aggregate(tuple(rest), conditions), iface)
        # A member set free may overlap entries its old aggregate did not.
        return ops + self._settle(iface)

    def _conditions(self, sub_id: str) -> dict[str, Condition]:
        sub = self.subscriptions[sub_id]
        assert sub is not None
        return sub.conditions()

    def _aggregate(self, members: tuple[str, ...], conditions: dict[str, Condition]) -> Entry:
        self._aggregates += 1
        return Entry(f"\x00aggregate-{self._aggregates}", members, conditions)

    def _register(self, entry: Entry, iface: str) -> list[Op]:
        self.entries[entry.uid] = entry
        self._interface_of[entry.uid] = iface
        self.interfaces.setdefault(iface, []).append(entry.uid)
        for member in entry.members:
            self.entry_of[member] = entry.uid
        return [("add", entry)]

    def _unregister(self, uid: str) -> list[Op]:
        entry = self.entries.pop(uid)
        iface = self._interface_of.pop(uid)
        self.interfaces[iface].remove(uid)
        if not self.interfaces[iface]:
            del self.interfaces[iface]
        for member in entry.members:
            if self.entry_of.get(member) == uid:
                del self.entry_of[member]
        return [("kill", uid)]

    def _best_pair(self, uids: list[str]) -> tuple[str, str] | None:
        best, pair = 0.0, None
        for a, b in combinations(uids, 2):
            score = overlap(self.entries[a].conditions, self.entries[b].conditions)
            if score > best:
                best, pair = score, (a, b)
        return pair

    def _merge(self, a: str, b: str, iface: str) -> list[Op]:
        ea, eb = self.entries[a], self.entries[b]
        merged = self._aggregate(ea.members + eb.members, hull(ea.conditions, eb.conditions))
        return self._unregister(a) + self._unregister(b) + self._register(merged, iface)
