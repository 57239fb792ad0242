"""ContentMatcher: content-based matching as a broker plugin (kind ``content``)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from semps.errors import MatcherError
from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.content.brute import BruteForceIndex
from semps.matcher.content.hcem import HcemIndex
from semps.matcher.content.index import CompiledIndex, ContentIndex
from semps.matcher.content.parse import parse_subscription
from semps.matcher.content.predicate_table import PredicateTableIndex
from semps.matcher.content.rein import ReinIndex
from semps.matcher.content.view import attribute_view
from semps.matcher.results import MatchColumns
from semps.matcher.values import Match, Subscription

__all__ = ["ALGORITHMS", "ContentMatcher", "create_index"]

#: ``--algorithm`` name -> index class.
ALGORITHMS: dict[str, type[ContentIndex]] = {
    "predicate-table": PredicateTableIndex,
    "rein": ReinIndex,
    "hcem": HcemIndex,
    "brute": BruteForceIndex,
}


def create_index(algorithm: str, **options: Any) -> ContentIndex:
    """An empty index of ``algorithm`` with ``options``.

    Example:
        >>> create_index("rien")
        Traceback (most recent call last):
        ...
        semps.errors.MatcherError: Unknown content algorithm 'rien'. Did you mean 'rein'?
    """
    cls = ALGORITHMS.get(algorithm)
    if cls is None:
        msg = f"Unknown content algorithm {algorithm!r}."
        close = difflib.get_close_matches(algorithm, ALGORITHMS, n=1)
        msg += f" Did you mean {close[0]!r}?" if close else f" Available: {', '.join(ALGORITHMS)}."
        raise MatcherError(msg)
    return cls(**options)


class ContentMatcher(Matcher):
    """Content subscriptions (JSON or text form) against events' attribute views.

    The attribute view is the event's JSON ``values`` plus its literal-valued RDF
    properties after ontology expansion (:mod:`semps.matcher.content.view`). A subscription's
    owner is its interface.

    Args:
        algorithm: one of :data:`ALGORITHMS` (HCEM by default: REIN per event, the dynamic
            adjustment per batch).
        **options: passed to the index (``buckets``, ``interface_limit``, ...).

    Example:
        >>> m = ContentMatcher()
        >>> m.add(Subscription("s1", "content", 'a3 between 0.1 and 0.6 and a1 = "red"'))
        >>> e = Event("e1", values={"a3": 0.31, "a1": "red"})
        >>> [x.subscription for x in m.match(MatchContext(e))]
        ['s1']
    """

    kind = "content"

    def __init__(self, algorithm: str = "hcem", **options: Any) -> None:
        self.algorithm = algorithm
        self.index = create_index(algorithm, **options)

    def __len__(self) -> int:
        return len(self.index)

    def add(self, subscription: Subscription) -> None:
        """Parse (JSON or text form) and index; a bad text leaves the index unchanged."""
        parsed = parse_subscription(
            subscription.text, sub_id=subscription.id, interface=subscription.owner
        )
        self.index.add(parsed)

    def remove(self, subscription_id: str) -> None:
        self.index.remove(subscription_id)

    def idle(self) -> None:
        """Rebuild the index after a registration now, with what one event at a time
        needs (HCEM's cell bitsets: 4 s at 1M subscriptions), not in the next event."""
        if len(self.index):
            self.index.prepare(1)

    def subscription_items(self, subscription: Subscription) -> frozenset[str]:
        """The constrained attributes: an event lacking one cannot match (placement)."""
        parsed = parse_subscription(subscription.text, sub_id=subscription.id)
        return frozenset(c.attr for c in parsed.constraints)

    def event_items(self, context: MatchContext) -> frozenset[str]:
        """The attributes of the event's attribute view."""
        return frozenset(attribute_view(context.event, context))

    def match(self, context: MatchContext) -> list[Match]:
        if not len(self.index):
            return []
        view = attribute_view(context.event, context)
        if not view:
            return []
        return [Match(sub_id, context.event.id) for sub_id in self.index.match(view)]

    def match_batch(self, contexts: Sequence[MatchContext]) -> list[list[Match]]:
        """One index batch for all events (HCEM's dynamic adjustment)."""
        if not len(self.index):
            return [[] for _ in contexts]
        views = [attribute_view(c.event, c) for c in contexts]
        found = self.index.match_batch(views)
        return [
            [Match(sub_id, c.event.id) for sub_id in ids]
            for c, ids in zip(contexts, found, strict=True)
        ]

    def match_events(self, events: Sequence[Event]) -> MatchColumns:
        """:meth:`match_columns` with no context given: the attribute views of events with
        RDF triples are closed under an empty ontology (JSON events have none)."""
        return _plain_columns(self.index, events)

    def unbound_columns(self, contexts: Sequence[MatchContext]) -> MatchColumns:
        """One index batch as columns: slots into the index's id list, no Match objects."""
        if not len(self.index):
            return MatchColumns.empty(len(contexts))
        views = [attribute_view(c.event, c) for c in contexts]
        return self.index.match_columns(views)


def _plain_columns(index: ContentIndex, events: Sequence[Event]) -> MatchColumns:
    if not len(index):
        return MatchColumns.empty(len(events))
    if isinstance(index, CompiledIndex) and not any(e.triples for e in events):
        return index.match_columns_values([e.values for e in events])
    return index.match_columns([attribute_view(e) for e in events])
