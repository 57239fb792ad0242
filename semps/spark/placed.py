"""Placed matching: each event matched, in the task that reads it, against the partitions
of a :class:`~semps.spark.placement.Placement` its items reach.

The placement's partitions are indexes (:class:`~semps.spark.shipped_index.ShippedIndex`,
one part each) each Python worker builds when an event first reaches one. The items an event
or a subscription carries are its matchers' (:meth:`~semps.matcher.base.Matcher.event_items`,
:meth:`~semps.matcher.base.Matcher.subscription_items`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.values import Subscription
from semps.ontology.closure import close
from semps.ontology.expansion import Expansion
from semps.spark.partition import BATCH, BATCH_TRIPLES, Counts, Results, counts_of_batch
from semps.spark.placement import Placement, place_all
from semps.spark.shipped_index import Shipped, ShippedIndex, worker_matchers

if TYPE_CHECKING:
    from pyspark import RDD


def match_placed_events(
    events: RDD[Event],
    subscriptions: Sequence[Subscription],
    items: Sequence[frozenset[str]],
    expansion: Expansion,
    placement: Placement,
    token: str,
    seed: int,
) -> Results:
    """Each event matched, in the task that reads it, against the partitions its items
    reach: the placement's partitions are indexes each Python worker builds when an event
    first reaches one (Spark pins no partition to an executor, so shuffling the replicas to
    them bought nothing but the shuffles; see docs/spark.md, Placement)."""
    shipped = placed_parts(subscriptions, placement, items, seed)
    context = events.context
    # Events are closed under the ontology once; the partitions' matchers match the closed
    # events under the empty ontology (closing a closed event changes nothing).
    index = context.broadcast(ShippedIndex(token, shipped, Expansion()))
    kinds = sorted({s.kind for s in subscriptions})
    plan = context.broadcast(PlacedPlan(placement, tuple(kinds), expansion))
    return events.mapPartitions(lambda it: match_placed(index.value, plan.value, it))


@dataclass(frozen=True)
class PlacedPlan:
    """What a task needs to route its events: the placement, the subscriptions' kinds
    (whose items route an event) and the ontology the events are closed under."""

    placement: Placement
    kinds: tuple[str, ...]
    expansion: Expansion


@dataclass
class _Held:
    """An event waiting for the partitions it reaches: its counts so far, how many left."""

    event: Event
    counts: Counts
    left: int


def match_placed(
    index: ShippedIndex, plan: PlacedPlan, events: Iterable[Event]
) -> Iterator[tuple[str, Counts]]:
    """Each of ``events`` with its counts from the partitions of ``index`` its items reach
    under ``plan``, one pair per event (in the order their last partition matched them).
    Each partition's matchers get batches of :data:`BATCH` events or :data:`BATCH_TRIPLES`
    triples, as with every subscription broadcast; an event is held until all of its
    partitions have matched it."""
    none = Expansion()
    held: dict[int, _Held] = {}
    buffers: dict[int, list[int]] = {}
    triples: dict[int, int] = {}
    for serial, event in enumerate(events):
        closed = close_event(event, plan.expansion)
        route = plan.placement.route(event_items(closed, plan.kinds, none))
        parts = sorted(p for p in route if p in index.parts)  # skip partitions left empty
        if not parts:
            yield closed.id, {}
            continue
        held[serial] = _Held(closed, {}, len(parts))
        for part in parts:
            buffers.setdefault(part, []).append(serial)
            triples[part] = triples.get(part, 0) + len(closed.triples)
            if len(buffers[part]) == BATCH or triples[part] >= BATCH_TRIPLES:
                yield from _match_held(index, part, buffers.pop(part), held)
                del triples[part]
    for part in sorted(buffers):
        yield from _match_held(index, part, buffers[part], held)


def _match_held(
    index: ShippedIndex, part: int, serials: list[int], held: dict[int, _Held]
) -> Iterator[tuple[str, Counts]]:
    """Match the held events ``serials`` against ``part``; those it was the last partition
    of, with their counts."""
    matchers = worker_matchers(index, part)
    expansion = Expansion()
    found = counts_of_batch(matchers, [MatchContext(held[s].event, expansion) for s in serials])
    for serial, (_, more) in zip(serials, found, strict=True):
        entry = held[serial]
        entry.counts.update(more)
        entry.left -= 1
        if entry.left == 0:
            del held[serial]
            yield entry.event.id, entry.counts


def placed_parts(
    subscriptions: Sequence[Subscription],
    placement: Placement,
    items: Sequence[frozenset[str]],
    seed: int,
) -> dict[int, Shipped]:
    """The subscriptions of each partition of ``placement``, as shipped to the workers
    (``items``: the subscriptions' :func:`subscription_items`)."""
    parts: dict[int, list[tuple[str, str, str]]] = {}
    for sub, part in zip(subscriptions, place_all(placement, items, seed=seed), strict=True):
        parts.setdefault(part, []).append((sub.id, sub.kind, sub.text))
    return {k: tuple(v) for k, v in parts.items()}


def close_event(event: Event, expansion: Expansion) -> Event:
    """``event`` with its triples closed under ``expansion`` (other views unchanged)."""
    if expansion.empty:
        return event
    closed = tuple(close(expansion, event.triples))
    return Event(event.id, closed, dict(event.values), dict(event.regions), event.time)


def subscription_items(subscriptions: Sequence[Subscription]) -> list[frozenset[str]]:
    """Each subscription's attribute items, as its matcher names them (the history
    :func:`~semps.spark.placement.mine_placement` mines)."""
    return [_item_matcher(sub.kind).subscription_items(sub) for sub in subscriptions]


def event_items(event: Event, kinds: Sequence[str], expansion: Expansion) -> frozenset[str]:
    """The items an event carries for every matcher kind in ``kinds``."""
    context = MatchContext(event, expansion)
    items: set[str] = set()
    for kind in kinds:
        items |= _item_matcher(kind).event_items(context)
    return frozenset(items)


#: One empty matcher per kind, asked for items only (never indexes anything).
_ITEM_MATCHERS: dict[str, Matcher] = {}


def _item_matcher(kind: str) -> Matcher:
    found = _ITEM_MATCHERS.get(kind)
    if found is None:
        found = _ITEM_MATCHERS[kind] = create_matcher(kind)
    return found


__all__ = [
    "PlacedPlan",
    "close_event",
    "event_items",
    "match_placed",
    "match_placed_events",
    "placed_parts",
    "subscription_items",
]
