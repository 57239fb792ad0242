"""One event's node pairs as the semantic matcher reads them: per property, with the
lookups the index probes and the binding tables verification joins (built once per event
and shared by every subscription that reads them)."""

from __future__ import annotations

from typing import Any

from semps._types import Term
from semps.matcher.partab import EventParts
from semps.matcher.semantic.codes import ANY_PROPERTY, STAR
from semps.matcher.semantic.compiled import ANY_KEY, IndexKey, NPNKey

__all__ = ["EventPairs"]


class EventPairs:
    """The event's node pairs per property (:attr:`EventParts.pairs`: PartA plus PartB's
    type pairs), with the lookups the index probes and the binding tables the verifier
    reads."""

    def __init__(self, parts: EventParts) -> None:
        self.by_prop: dict[str, list[tuple[str, Term]]] = parts.pairs
        self._tables: dict[tuple[str, NPNKey], list[tuple[str, Term]]] = {}
        self._indexes: dict[IndexKey, dict[Term, list[tuple[str, Term]]]] = {}
        self._sets: dict[tuple[str, NPNKey], set[tuple[str, Term]]] = {}
        #: Property path pairs and basic graph pattern solutions (:mod:`.evaluate`), shared
        #: by the subscriptions of the event.
        self.path_cache: dict[Any, Any] = {}

    def table(self, prop: str, key: NPNKey) -> list[tuple[str, Term]]:
        """The binding table of an SC: the event's pairs of ``prop`` matching ``key``."""
        cache_key = (prop, key)
        found = self._tables.get(cache_key)
        if found is None:
            s, o = key
            if s == STAR and o == STAR:
                found = self.by_prop.get(prop, [])
            elif s == STAR:  # one pass over the property's pairs serves every object
                found = self.index(prop, ANY_KEY, 1).get(o, [])
            elif o == STAR:
                found = self.index(prop, ANY_KEY, 0).get(s, [])
            else:
                found = [p for p in self.index(prop, ANY_KEY, 0).get(s, ()) if p[1] == o]
            self._tables[cache_key] = found
        return found

    def index(self, prop: str, key: NPNKey, position: int) -> dict[Term, list[tuple[str, Term]]]:
        """A binding table indexed by subject (0) or object (1); shared by every
        subscription that joins on it within this event."""
        return self.index_at((prop, key, position))

    def index_at(self, at: IndexKey) -> dict[Term, list[tuple[str, Term]]]:
        """:meth:`index` by one ``(property, key, position)`` tuple."""
        found = self._indexes.get(at)
        if found is None:
            found = {}
            position = at[2]
            for pair in self.table(at[0], at[1]):
                found.setdefault(pair[position], []).append(pair)
            self._indexes[at] = found
        return found

    def with_any_property(self) -> EventPairs:
        """These pairs plus every pair under :data:`~.codes.ANY_PROPERTY` (what a
        variable predicate with a constant end requires), for the counter filter only."""
        found: EventPairs | None = self.path_cache.get(ANY_PROPERTY)
        if found is None:
            found = object.__new__(EventPairs)
            found.by_prop = {**self.by_prop}
            found.by_prop[ANY_PROPERTY] = [p for rows in self.by_prop.values() for p in rows]
            self.path_cache[ANY_PROPERTY] = found
        return found

    def pair_set(self, prop: str, key: NPNKey) -> set[tuple[str, Term]]:
        """A binding table as a set (both ends bound: a membership test)."""
        found = self._sets.get((prop, key))
        if found is None:
            found = self._sets[(prop, key)] = set(self.table(prop, key))
        return found
