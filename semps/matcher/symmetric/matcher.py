"""SymmetricMatcher: region matching as a broker plugin (kind ``symmetric``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semps.event import Event  # noqa: F401  (doctest name)
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.results import MatchColumns
from semps.matcher.symmetric.index import RegionIndex
from semps.matcher.symmetric.region import parse_region_subscription
from semps.matcher.values import Match, Subscription

__all__ = ["SymmetricMatcher"]


class SymmetricMatcher(Matcher):
    """Subscription regions (JSON) against publications' ``regions``.

    An event without a region (an RDF event, a content event) is not a publication here and
    matches nothing: with every attribute unbounded it would otherwise overlap everything.

    Args:
        **options: passed to :class:`~semps.matcher.symmetric.index.RegionIndex`.

    Example:
        >>> m = SymmetricMatcher()
        >>> m.add(Subscription("s1", "symmetric", '{"region": {"x": [0.1, 0.3], "y": [0.5, 0.5]}}'))
        >>> e = Event("e1", regions={"x": (0.2, 0.4)})
        >>> [x.subscription for x in m.match(MatchContext(e))]
        ['s1']
    """

    kind = "symmetric"

    def __init__(self, **options: float) -> None:
        self.index = RegionIndex(**options)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.index)

    def add(self, subscription: Subscription) -> None:
        self.index.add(parse_region_subscription(subscription.text, sub_id=subscription.id))

    def remove(self, subscription_id: str) -> None:
        self.index.remove(subscription_id)

    def match(self, context: MatchContext) -> list[Match]:
        event = context.event
        if not event.regions or not len(self.index):
            return []
        return [Match(sub_id, event.id) for sub_id in self.index.match(event.regions)]

    def match_batch(self, contexts: Sequence[MatchContext]) -> list[list[Match]]:
        """The publications of a batch in one sweep."""
        events = [c.event for c in contexts]
        out: list[list[Match]] = [[] for _ in events]
        published = [i for i, e in enumerate(events) if e.regions]
        if not published or not len(self.index):
            return out
        found = self.index.match_batch([events[i].regions for i in published])
        for i, ids in zip(published, found, strict=True):
            out[i] = [Match(sub_id, events[i].id) for sub_id in ids]
        return out

    def unbound_columns(self, contexts: Sequence[MatchContext]) -> MatchColumns:
        """The batch's publications in one sweep, as columns."""
        events = [c.event for c in contexts]
        published = [i for i, e in enumerate(events) if e.regions]
        if not published or not len(self.index):
            return MatchColumns.empty(len(events))
        found = self.index.match_columns([events[i].regions for i in published])
        event = np.asarray(published, np.int64)[found.event]
        return MatchColumns(len(events), event, found.subscription, found.ids, found.count)
