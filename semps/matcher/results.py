"""Result formats: one JSON object per event for bulk matching, and a batch's answers as
columns for callers that consume many matches at once.

One JSON object per event, as in the shared workloads' ``expected.jsonl``:
``{"event": id, "matches": [sorted subscription ids], "solutions": {id: count}}``.

:class:`MatchColumns` holds a batch's matches as NumPy arrays (event index, subscription
index into an id array, solution count), so a caller that writes or counts matches builds no
Python object per match; :meth:`~semps.matcher.base.Matcher.match_columns` returns it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.matcher.values import Match

__all__ = ["MatchColumns", "result_line", "result_record"]

IntArray = npt.NDArray[np.int64]

#: The bindings of one match (``Match.solutions``).
Solutions = tuple[Mapping[str, Term], ...]


def result_record(event_id: str, counts: Mapping[str, int]) -> dict[str, object]:
    """The result object of one event from subscription id -> solution count.

    Example:
        >>> result_record("e1", {"s2": 1, "s1": 3})
        {'event': 'e1', 'matches': ['s1', 's2'], 'solutions': {'s1': 3, 's2': 1}}
    """
    ids = sorted(counts)
    return {"event": event_id, "matches": ids, "solutions": {i: counts[i] for i in ids}}


def result_line(event_id: str, counts: Mapping[str, int]) -> str:
    """One output line (JSON, no newline) of an event: :func:`result_record`, serialised.

    Example:
        >>> result_line("e1", {"s1": 3})
        '{"event": "e1", "matches": ["s1"], "solutions": {"s1": 3}}'
    """
    return json.dumps(result_record(event_id, counts))


@dataclass(frozen=True, slots=True)
class MatchColumns:
    """A batch's matches as columns: match ``j`` is ``ids[subscription[j]]`` matching event
    ``event[j]`` (its index in the batch) with ``count[j]`` solutions.

    Matches are grouped by event, events ascending, and inside an event ordered by
    subscription id (as :meth:`~semps.matcher.base.Matcher.match_batch` orders them).

    Attributes:
        events: the batch size (events with no match have no rows).
        event: ``int64`` event index per match, ascending.
        subscription: ``int64`` index into ``ids`` per match.
        ids: the subscription ids ``subscription`` indexes (often the matcher's whole id
            array, shared between batches: do not modify it).
        count: ``int64`` solution count per match (at least 1).
        solutions: per match, its solutions (``Match.solutions``), only when asked for.

    Example:
        >>> from semps.matcher.values import Match
        >>> cols = MatchColumns.from_matches([[Match("s2", "e1", 2), Match("s1", "e1")], []])
        >>> cols.offsets().tolist(), cols.ids_of(0), cols.count.tolist()
        ([0, 2, 2], ['s2', 's1'], [2, 1])
    """

    events: int
    event: IntArray
    subscription: IntArray
    ids: Sequence[str] | npt.NDArray[np.object_]
    count: IntArray
    solutions: tuple[Solutions, ...] | None = None

    def __post_init__(self) -> None:
        m = len(self.event)
        if len(self.subscription) != m or len(self.count) != m:
            msg = "event, subscription and count must have one entry per match"
            raise ValueError(msg)
        if self.solutions is not None and len(self.solutions) != m:
            msg = "solutions must have one entry per match"
            raise ValueError(msg)

    def __len__(self) -> int:
        """Matches in the batch."""
        return len(self.event)

    @classmethod
    def empty(cls, events: int) -> MatchColumns:
        """No matches for a batch of ``events``."""
        none = np.zeros(0, np.int64)
        return cls(events, none, none, (), none)

    @classmethod
    def from_matches(
        cls, batch: Sequence[Sequence[Match]], *, solutions: bool = False
    ) -> MatchColumns:
        """Columns of per-event match lists (the default of ``match_columns``)."""
        index: dict[str, int] = {}
        subs: list[int] = []
        counts: list[int] = []
        sizes: list[int] = []
        for matches in batch:
            sizes.append(len(matches))
            for m in matches:
                subs.append(index.setdefault(m.subscription, len(index)))
                counts.append(m.count)
        event = np.repeat(np.arange(len(batch), dtype=np.int64), sizes)
        found = tuple(m.solutions for matches in batch for m in matches) if solutions else None
        return cls(
            len(batch),
            event,
            np.array(subs, np.int64),
            list(index),
            np.array(counts, np.int64),
            found,
        )

    def offsets(self) -> IntArray:
        """CSR offsets: the matches of event ``i`` are rows ``offsets[i]:offsets[i + 1]``."""
        bounds: IntArray = np.searchsorted(self.event, np.arange(self.events + 1)).astype(np.int64)
        return bounds

    def ids_of(self, i: int) -> list[str]:
        """The subscription ids event ``i`` matched, in order."""
        a, b = (int(x) for x in np.searchsorted(self.event, [i, i + 1]))
        return [self.ids[s] for s in self.subscription[a:b].tolist()]

    def to_matches(self, event_ids: Sequence[str]) -> list[list[Match]]:
        """Per-event :class:`~semps.matcher.values.Match` lists (for edges that need objects)."""
        if len(event_ids) != self.events:
            msg = f"{len(event_ids)} event ids for a batch of {self.events}"
            raise ValueError(msg)
        ids = self.ids
        subs = self.subscription.tolist()
        counts = self.count.tolist()
        sols = self.solutions
        out: list[list[Match]] = []
        offsets = self.offsets().tolist()
        for i, event_id in enumerate(event_ids):
            rows = range(offsets[i], offsets[i + 1])
            out.append(
                [Match(ids[subs[j]], event_id, counts[j], sols[j] if sols else ()) for j in rows]
            )
        return out
