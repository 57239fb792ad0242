"""Matching one task's events, in batches, with this Python worker's matchers.

Each event gets one answer: its ``{subscription id: solution count}``
(:func:`counts_of_batch`), or its output line (:func:`lines_of_batch`), written by the
executors as ``semps match`` writes it (semantic subscriptions: from the count columns by
compiled code, no dictionary per event).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.results import result_line
from semps.spark.shipped_graph import ShippedGraph, worker_graph
from semps.spark.shipped_index import ShippedIndex, worker_matchers

if TYPE_CHECKING:
    from pyspark import RDD

Counts = dict[str, int]
#: What :func:`match_partition` gives each event: its counts, or its output line.
Answer = TypeVar("Answer")
#: Answers of a batch of events, given as their contexts: (matchers, contexts) -> (event
#: id, answer).
BatchAnswers: TypeAlias = Callable[
    [list[Matcher], list[MatchContext]], Iterator[tuple[str, Answer]]
]
#: Bulk results: (event id, {subscription id: solution count}).
Results: TypeAlias = "RDD[tuple[str, Counts]]"


def counts_of_batch(
    matchers: list[Matcher], contexts: list[MatchContext]
) -> Iterator[tuple[str, Counts]]:
    """Each event of ``contexts`` with its counts from every one of ``matchers`` (with a
    knowledge graph in the contexts: the solutions each event adds to the graph's answers)."""
    counts: list[Counts] = [{} for _ in contexts]
    for matcher in matchers:
        for found, more in zip(counts, matcher.count_batch(contexts), strict=True):
            found.update(more)
    for context, found in zip(contexts, counts, strict=True):
        yield context.event.id, found


def lines_of_batch(
    matchers: list[Matcher], contexts: list[MatchContext]
) -> Iterator[tuple[str, str]]:
    """Each event of ``contexts`` with its output line (:func:`result_line`); one kind of
    subscription alone is written by its matcher's :meth:`~semps.matcher.base.Matcher.result_lines`,
    as ``semps match`` writes them (the semantic matcher's is compiled: at 1% of 100k
    subscriptions, a dictionary of a thousand counts and its JSON cost an event more than
    its matching)."""
    if len(matchers) == 1:
        lines = matchers[0].result_lines(contexts)
        yield from zip([c.event.id for c in contexts], lines, strict=True)
        return
    for event_id, counts in counts_of_batch(matchers, contexts):
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
    batch: list[MatchContext] = []
    triples = 0
    for event in events:
        batch.append(MatchContext(event, index.expansion, graph=view))
        triples += len(event.triples)
        if len(batch) == BATCH or triples >= BATCH_TRIPLES:
            yield from each(matchers, batch)
            batch, triples = [], 0
    if batch:
        yield from each(matchers, batch)


__all__ = [
    "BATCH",
    "BATCH_TRIPLES",
    "BatchAnswers",
    "Counts",
    "Results",
    "counts_of_batch",
    "lines_of_batch",
    "match_partition",
]
