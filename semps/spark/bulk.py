"""Bulk matching on Spark: every event of a table or folder against every subscription.

The subscriptions are broadcast, and each Python worker builds the very matcher the broker
uses (merged index, counter filtering, verification) once and matches its partitions' events
in process. Semantic subscriptions travel as a snapshot of their parses
(:mod:`semps.matcher.semantic.snapshot`, made by the driver, which parsed them to validate
them): a worker registers them without lexing or parsing, once per worker and set of
subscriptions (keyed by their digest, so later jobs and micro-batches over the same ones
reuse it). With a :class:`Placement`, the subscriptions are split into its partitions,
each its own index, and each event is matched against the partitions its items reach
only, in the task that reads it.

Results are ``(event id, {subscription id: solution count})`` pairs, one per event, also
for events that match nothing; :func:`match_lines` gives each event's output line instead,
written by the executors as ``semps match`` writes it (semantic subscriptions: from the
count columns by compiled code, no dictionary per event).

(The opt-in GraphFrames engine, :mod:`semps.spark.graph_join`, only picks candidate events
with a bulk graph join and hands them to this matcher. An earlier one, subscriptions as
motif queries joined and counted in the JVM, was retired: it ran 158x slower than this one
on 200 events x 200 subscriptions, 300.5 s against 1.9 s.)
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from semps.errors import SparkError
from semps.event import Event
from semps.ingest.sparql import Query, parse_memo, parse_query
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.results import result_line
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.matcher import load_matcher
from semps.matcher.semantic.snapshot import snapshot_bytes, subscriptions_digest
from semps.matcher.values import Subscription
from semps.ontology.closure import close
from semps.ontology.expansion import Expansion
from semps.spark.placement import Placement
from semps.spark.shipped_graph import ShippedGraph, ship_graph, worker_graph

if TYPE_CHECKING:
    from pyspark import RDD, Broadcast, SparkContext

    from semps.graph.view import GraphView

Counts = dict[str, int]
#: What :func:`match_partition` gives each event: its counts, or its output line.
Answer = TypeVar("Answer")
#: Answers of a batch of events: (matchers, events, expansion, knowledge graph) -> (event id,
#: answer).
BatchAnswers: TypeAlias = Callable[
    [list[Matcher], list[Event], Expansion, "GraphView | None"], Iterator[tuple[str, Answer]]
]
#: Bulk results: (event id, {subscription id: solution count}).
Results: TypeAlias = "RDD[tuple[str, Counts]]"
#: Subscriptions as shipped to the workers: (id, kind, text).
Shipped = tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class ShippedIndex:
    """What a worker needs to build its matchers: the subscriptions of each partition, as
    (id, kind, text), and the ontology to match under; ``token`` names one set of
    subscriptions (a job's, or one version of a stream's). With a ``snapshot`` (the bytes
    of a semantic snapshot, :func:`shipped_index`), partition 0 holds its subscriptions
    and ``parts`` is empty."""

    token: str
    parts: dict[int, Shipped]
    expansion: Expansion
    snapshot: bytes | None = None


#: Matchers built in this Python worker, by (job token, partition); workers are reused
#: between tasks (``spark.python.worker.reuse``), so each builds its index once per job.
_BUILT: dict[tuple[str, int], list[Matcher]] = {}


def worker_matchers(index: ShippedIndex, part: int) -> list[Matcher]:
    """This Python worker's matchers for ``part`` of ``index``, built once per token (older
    tokens' matchers are dropped): loaded from its snapshot, or built from the texts."""
    key = (index.token, part)
    found = _BUILT.get(key)
    if found is None:
        for stale in [k for k in _BUILT if k[0] != index.token]:
            del _BUILT[stale]
        # Building allocates millions of long-lived objects and no cycles to speak of:
        # without the cyclic GC rescanning them as they grow, it takes about a fifth less.
        collecting = gc.isenabled()
        gc.disable()
        try:
            if index.snapshot is not None and part == 0:
                name = f"the snapshot shipped as {index.token}"
                found = [load_matcher(index.snapshot, name=name)]
            else:
                found = build_matchers(
                    Subscription(i, kind, text) for i, kind, text in index.parts.get(part, ())
                )
        finally:
            if collecting:
                gc.enable()
        _BUILT[key] = found
        # The index lives as long as the worker: keep the cyclic GC from rescanning its
        # millions of objects after every few thousand allocations while matching.
        gc.collect()
        gc.freeze()
    return found


def _stateless(kind: str) -> Matcher:
    matcher = create_matcher(kind)
    if matcher.state() is not None:
        msg = (
            f"{kind} subscriptions keep detection state across events and cannot be "
            "matched in bulk; run them in the broker"
        )
        raise SparkError(msg)
    return matcher


def build_matchers(subscriptions: Iterable[Subscription]) -> list[Matcher]:
    """One matcher per kind, holding ``subscriptions`` (the broker's matchers, in process).

    Raises:
        SparkError: a stateful (composite) kind.
        SubscriptionError: a subscription that does not parse.
    """
    by_kind: dict[str, Matcher] = {}
    for sub in subscriptions:
        matcher = by_kind.get(sub.kind)
        if matcher is None:
            matcher = by_kind[sub.kind] = _stateless(sub.kind)
        matcher.add(sub)
    return [by_kind[k] for k in sorted(by_kind)]


def counts_of_batch(
    matchers: list[Matcher],
    batch: list[Event],
    expansion: Expansion,
    graph: GraphView | None = None,
) -> Iterator[tuple[str, Counts]]:
    """Each event of ``batch`` with its counts from every one of ``matchers`` (with a
    knowledge ``graph``: the solutions each event adds to the graph's answers)."""
    contexts = [MatchContext(e, expansion, graph=graph) for e in batch]
    counts: list[Counts] = [{} for _ in batch]
    for matcher in matchers:
        for found, more in zip(counts, matcher.count_batch(contexts), strict=True):
            found.update(more)
    for event, found in zip(batch, counts, strict=True):
        yield event.id, found


def lines_of_batch(
    matchers: list[Matcher],
    batch: list[Event],
    expansion: Expansion,
    graph: GraphView | None = None,
) -> Iterator[tuple[str, str]]:
    """Each event of ``batch`` with its output line (:func:`result_line`); one kind of
    subscription alone is written by its matcher's :meth:`~semps.matcher.base.Matcher.result_lines`,
    as ``semps match`` writes them (the semantic matcher's is compiled: at 1% of 100k
    subscriptions, a dictionary of a thousand counts and its JSON cost an event more than
    its matching)."""
    if len(matchers) == 1:
        contexts = [MatchContext(e, expansion, graph=graph) for e in batch]
        lines = matchers[0].result_lines(contexts)
        yield from zip([e.id for e in batch], lines, strict=True)
        return
    for event_id, counts in counts_of_batch(matchers, batch, expansion, graph):
        yield event_id, result_line(event_id, counts)


#: Events handed to the matchers together (HCEM's batch adjustment works per batch) ...
BATCH = 256
#: ... unless they hold this many triples already: big documents (lubm-bulk's hold ~6,000
#: triples each) are matched in small batches, as ``semps match`` does, not held by the
#: hundred in a worker's memory.
BATCH_TRIPLES = 65_536


def match_partition(
    index: ShippedIndex,
    part: int,
    events: Iterable[Event],
    each: BatchAnswers[Answer],
    graph: ShippedGraph | None = None,
) -> Iterator[tuple[str, Answer]]:
    """Each of ``events`` with its answer (``each``: :func:`counts_of_batch` or
    :func:`lines_of_batch`) against ``part`` of
    ``index`` (this Python worker's matchers for it), matched in batches of :data:`BATCH`
    events or :data:`BATCH_TRIPLES` triples; with a knowledge ``graph`` (this worker's
    view of it, :func:`~semps.spark.shipped_graph.worker_graph`), each event's answer is
    what it adds to the graph's."""
    matchers = worker_matchers(index, part)
    view = worker_graph(graph, index.expansion)
    batch: list[Event] = []
    triples = 0
    for event in events:
        batch.append(event)
        triples += len(event.triples)
        if len(batch) == BATCH or triples >= BATCH_TRIPLES:
            yield from each(matchers, batch, index.expansion, view)
            batch, triples = [], 0
    if batch:
        yield from each(matchers, batch, index.expansion, view)


def _merge(a: Counts, b: Counts) -> Counts:
    return {**a, **b}


def match_events(
    events: RDD[Event],
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
    *,
    placement: Placement | None = None,
    seed: int = 0,
    validate: bool = True,
    items: Sequence[frozenset[str]] | None = None,
    queries: dict[str, Query] | None = None,
    snapshot: bytes | None = None,
    graph: GraphView | None = None,
) -> Results:
    """Match an RDD of :class:`Event` against ``subscriptions``.

    Args:
        events: the events (see :func:`semps.spark.sources.load_events`).
        subscriptions: the subscriptions, of any stateless kind.
        expansion: the ontology's rule tables.
        placement: partition the subscriptions by this placement.
        seed: seeds the placement's random choices.
        validate: index the subscriptions on the driver first, so a bad one raises its
            :class:`~semps.errors.SubscriptionError` here rather than fail the Spark job
            (callers that validated already pass ``False``: it costs a full index build).
        items: the subscriptions' :func:`subscription_items`, when the caller has them
            (the placement was mined from them); computed here otherwise.
        queries: the semantic subscriptions' parses the caller has (by text, under the
            default limits), shipped without parsing them again (see :func:`shipped_index`).
        snapshot: the bytes of a snapshot holding exactly ``subscriptions`` (``semps
            index``'s file, checked by the caller), shipped as they are.
        graph: a knowledge graph (under ``expansion``), shipped to the executors once
            (:mod:`semps.spark.shipped_graph`): each event counts the solutions it adds
            to the graph's answers, as ``semps match --graph``.

    Returns:
        An RDD of ``(event id, {subscription id: solution count})``, one pair per event.

    Raises:
        SparkError: stateful (composite) subscriptions; a graph with a placement.
        SubscriptionError: with ``validate``, a subscription that does not parse.
    """
    queries = _check(subscriptions, validate, queries)
    if placement is None:
        index = _broadcast(events.context, subscriptions, expansion, queries, snapshot)
        kg = broadcast_graph(events.context, graph)
        return events.mapPartitions(
            lambda it: match_partition(index.value, 0, it, counts_of_batch, _value(kg))
        )
    if graph is not None and not graph.empty:
        msg = "a placement routes events by what they carry alone: it cannot match a graph"
        raise SparkError(msg)
    if items is None:
        items = subscription_items(subscriptions)
    token = uuid.uuid4().hex
    return _placed(events, subscriptions, items, expansion, placement, token, seed)


def match_lines(
    events: RDD[Event],
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
    *,
    validate: bool = True,
    queries: dict[str, Query] | None = None,
    snapshot: bytes | None = None,
    graph: GraphView | None = None,
) -> RDD[tuple[str, str]]:
    """:func:`match_events` (every subscription broadcast, and the ``graph`` if any) with
    each event's output line (:func:`~semps.matcher.results.result_line`) instead of its
    counts, written by the executors as ``semps match`` writes it.

    Raises:
        SparkError: stateful (composite) subscriptions.
        SubscriptionError: with ``validate``, a subscription that does not parse.
    """
    queries = _check(subscriptions, validate, queries)
    index = _broadcast(events.context, subscriptions, expansion, queries, snapshot)
    kg = broadcast_graph(events.context, graph)
    return events.mapPartitions(
        lambda it: match_partition(index.value, 0, it, lines_of_batch, _value(kg))
    )


def broadcast_graph(
    context: SparkContext, graph: GraphView | None
) -> Broadcast[ShippedGraph] | None:
    """The knowledge graph packed (:func:`~semps.spark.shipped_graph.ship_graph`) and
    broadcast, once; ``None`` without one (or an empty one: events are then matched
    alone, as ``semps match`` does)."""
    if graph is None or graph.empty:
        return None
    return context.broadcast(ship_graph(graph))


def _value(shipped: Broadcast[ShippedGraph] | None) -> ShippedGraph | None:
    return None if shipped is None else shipped.value


def _check(
    subscriptions: Sequence[Subscription], validate: bool, queries: dict[str, Query] | None
) -> dict[str, Query]:
    """Validate (unless told not to) and refuse stateful kinds; the parses made or given."""
    parses = {} if queries is None else queries
    if validate:
        with parse_memo(parses, SemanticMatcher.limits):
            build_matchers(subscriptions)
    else:  # still refuse stateful kinds before anything runs
        for kind in sorted({s.kind for s in subscriptions}):
            _stateless(kind)
    return parses


def shipped_index(
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
    *,
    queries: dict[str, Query] | None = None,
    token: str | None = None,
    snapshot: bytes | None = None,
) -> ShippedIndex:
    """Every subscription as the one partition of an index, as the workers get it.

    Semantic subscriptions alone travel as a snapshot of their parses, made from
    ``queries`` (by text, as :func:`~semps.ingest.sparql.parse_memo` keeps them; the texts
    it lacks are parsed here and added to it), or the ``snapshot`` given (the bytes of one
    holding exactly ``subscriptions``: encoding 100k subscriptions' parses costs the driver
    2-4 s), which the workers load without parsing; its
    token is their :func:`~semps.matcher.semantic.snapshot.subscriptions_digest` unless
    ``token`` is given. Other kinds travel as texts, under ``token`` or a new one.

    Raises:
        SubscriptionError: a semantic text that does not parse.
    """
    if subscriptions and all(s.kind == SemanticMatcher.kind for s in subscriptions):
        data = snapshot if snapshot is not None else _snapshot(subscriptions, queries)
        return ShippedIndex(token or subscriptions_digest(subscriptions)[:32], {}, expansion, data)
    shipped = {0: tuple((s.id, s.kind, s.text) for s in subscriptions)}
    return ShippedIndex(token or uuid.uuid4().hex, shipped, expansion)


def _snapshot(subscriptions: Sequence[Subscription], queries: dict[str, Query] | None) -> bytes:
    parses = {} if queries is None else queries
    limits = SemanticMatcher.limits
    with parse_memo(parses, limits):
        for text in {s.text for s in subscriptions}:
            parse_query(text, limits=limits)  # answered by the memo when it has it
    return snapshot_bytes(subscriptions, parses, limits)


def _broadcast(
    context: SparkContext,
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
    queries: dict[str, Query],
    snapshot: bytes | None,
) -> Broadcast[ShippedIndex]:
    """Every subscription, as the one partition of an index (:func:`shipped_index`),
    broadcast."""
    index = shipped_index(subscriptions, expansion, queries=queries, snapshot=snapshot)
    return context.broadcast(index)


def _placed(
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
    found = counts_of_batch(matchers, [held[s].event for s in serials], Expansion())
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
    from semps.spark.placement import place_all

    parts: dict[int, list[tuple[str, str, str]]] = {}
    for sub, part in zip(subscriptions, place_all(placement, items, seed=seed), strict=True):
        parts.setdefault(part, []).append((sub.id, sub.kind, sub.text))
    return {k: tuple(v) for k, v in parts.items()}


def one_per_event(events: RDD[Event], found: Results) -> Results:
    """Merge partial ``(event id, counts)`` results into one pair per event, including the
    events nothing matched."""
    every: Results = events.map(lambda e: (e.id, {}))
    merged: Results = every.union(found).reduceByKey(_merge)
    return merged


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
    "ShippedIndex",
    "broadcast_graph",
    "build_matchers",
    "counts_of_batch",
    "event_items",
    "lines_of_batch",
    "match_events",
    "match_lines",
    "match_partition",
    "match_placed",
    "one_per_event",
    "placed_parts",
    "shipped_index",
    "subscription_items",
    "worker_matchers",
]
