"""Continuous matching on Structured Streaming (``semps spark stream``).

Events arrive as new RDF files in a folder, new Parquet/JSON files of a triples table, or
Kafka records (when the user put the ``spark-sql-kafka-0-10`` connector on the classpath).
Each micro-batch runs in ``foreachBatch`` on the driver:

1. poll the subscriptions (:class:`~semps.spark.watch.SubscriptionWatch`): when they
   changed, broadcast the new version (and mine a new placement, if asked); executors
   build the broker's own matchers once per Python worker per version
   (:func:`semps.spark.shipped_index.worker_matchers`), keyed by the version's content digest
   (semantic subscriptions travel as a snapshot of their parses: the driver parses only
   the texts a version adds, and the workers register them without parsing);
2. read the batch's documents on the executors with the same ingest code as ``semps
   match`` and count each event's matches (``Matcher.count_batch``), either against every
   subscription (broadcast) or, with a :class:`~semps.spark.placement.Placement`, on the
   partitions the event's items reach;
3. hand the answers to a :class:`~semps.spark.sinks.BatchSink`, which writes each batch id
   once (exactly-once output through the checkpoint).

An unreadable document does not stop the stream: it is reported on stderr and skipped.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from semps.errors import SempsError, SparkError
from semps.event import Event
from semps.ingest.sparql import Query
from semps.ontology.expansion import Expansion
from semps.spark.partition import counts_of_batch, match_partition
from semps.spark.placed import PlacedPlan, match_placed, placed_parts, subscription_items
from semps.spark.placement import Placement, PlacementOptions
from semps.spark.shipped_graph import ShippedGraph, broadcast_graph
from semps.spark.shipped_index import ShippedIndex, shipped_index
from semps.spark.sinks import BatchSink, Document, MatchedBatch
from semps.spark.stream_sources import (
    SOURCE_KINDS,
    StreamSource,
    batch_documents,
    open_stream,
    read_document,
)
from semps.spark.watch import SubscriptionWatch, Version

if TYPE_CHECKING:
    from pyspark import RDD, Accumulator, Broadcast, SparkContext
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

    from semps.graph.view import GraphView

Counts = dict[str, int]
# -- executors: one index per Python worker and subscription version ---------------------


#: What a partition yields: (event id, counts) for an event, (event id, error) otherwise.
Outcome = tuple[str, Counts | str]


def _read_and_match(
    shipped: ShippedIndex,
    documents: Iterable[Document],
    base: str | None,
    graph: ShippedGraph | None = None,
) -> Iterator[Outcome]:
    events: list[Event] = []
    for document in documents:
        loaded = read_document(document, base)
        if isinstance(loaded, Event):
            events.append(loaded)
        else:
            yield loaded
    yield from match_partition(shipped, 0, events, counts_of_batch, graph)


# -- the driver ---------------------------------------------------------------------------


@dataclass
class VersionedMatching:
    """The driver's side of matching: the current version's broadcast (and placement), and
    the knowledge graph's broadcast (``graph``: made once, for the stream's life)."""

    spark: SparkSession
    expansion: Expansion
    base: str | None = None
    placement_options: PlacementOptions | None = None
    version: Version | None = None
    placement: Placement | None = None
    _shipped: Broadcast[ShippedIndex] | None = None
    _plan: Broadcast[PlacedPlan] | None = None
    _batch_cache: list[RDD[Event | tuple[str, str]]] = field(default_factory=list)
    #: Parses of semantic texts (the watch's): a version parses only the texts it adds.
    parses: dict[str, Query] = field(default_factory=dict)
    graph: Broadcast[ShippedGraph] | None = None

    def use(self, version: Version) -> None:
        """Ship ``version`` to the executors (they build it on its first batch)."""
        context = self.spark.sparkContext
        subs = version.subscriptions
        for old in (self._shipped, self._plan):
            if old is not None:
                old.unpersist()
        if self.placement_options is None:
            index = shipped_index(subs, self.expansion, queries=self.parses, token=version.token)
            texts = {s.text for s in subs}
            for gone in [t for t in self.parses if t not in texts]:
                del self.parses[gone]
            self._shipped = context.broadcast(index)
        else:
            items = subscription_items(subs)
            self.placement = self.placement_options.mine(self.spark, items)
            shipped = placed_parts(subs, self.placement, items, self.placement_options.seed)
            # Events are closed once; the partitions' matchers match them unclosed.
            self._shipped = context.broadcast(ShippedIndex(version.token, shipped, Expansion()))
            kinds = tuple(sorted({s.kind for s in subs}))
            self._plan = context.broadcast(PlacedPlan(self.placement, kinds, self.expansion))
        self.version = version

    def release(self) -> None:
        """Drop what :meth:`match` kept in memory for the batch (call when it is written)."""
        for rdd in self._batch_cache:
            rdd.unpersist()
        self._batch_cache.clear()

    def match(self, documents: RDD[Document]) -> RDD[Outcome]:
        """Each document's outcome: ``(event id, counts)`` or ``(event id, error text)``."""
        shipped, base, graph = self._shipped, self.base, self.graph
        if shipped is None:
            msg = "no subscription version in use"
            raise SparkError(msg)
        if self._plan is None:
            return documents.mapPartitions(
                lambda it: _read_and_match(
                    shipped.value, it, base, None if graph is None else graph.value
                )
            )
        return self._placed(documents, shipped)

    def _placed(self, documents: RDD[Document], shipped: Broadcast[ShippedIndex]) -> RDD[Outcome]:
        """Each event matched in the task that reads it, against the partitions it
        reaches (:func:`~semps.spark.placed.match_placed`, as ``semps spark match``)."""
        plan, base = self._plan, self.base
        assert plan is not None
        # Read once: the events are matched and their errors reported from this one RDD.
        loaded = documents.map(lambda d: read_document(d, base)).persist()
        self._batch_cache.append(loaded)
        events: RDD[Event] = loaded.flatMap(_events_of)
        found = events.mapPartitions(lambda it: match_placed(shipped.value, plan.value, it))
        return cast("RDD[Outcome]", found).union(loaded.flatMap(_errors_of))


def _events_of(loaded: Event | tuple[str, str]) -> list[Event]:
    return [loaded] if isinstance(loaded, Event) else []


def _errors_of(loaded: Event | tuple[str, str]) -> list[Outcome]:
    return [] if isinstance(loaded, Event) else [loaded]


def _say(line: str) -> None:
    print(f"semps: {line}", file=sys.stderr, flush=True)


@dataclass
class StreamRun:
    """A running stream: its query, and what failed on the driver (if anything)."""

    query: StreamingQuery
    failure: list[BaseException] = field(default_factory=list)
    batches: int = 0

    def wait(self, timeout: int | None = None) -> bool:
        """Wait for the query to end, at most ``timeout`` seconds when given; whether it
        ended.

        Raises:
            SempsError: what stopped the query, as one message.
        """
        try:
            if timeout is None:
                self.query.awaitTermination()
                ended = True
            else:
                ended = bool(self.query.awaitTermination(timeout))
        except Exception as exc:  # StreamingQueryException, py4j errors
            raise self._error(exc) from exc
        if self.failure:
            raise self._error(None)
        return ended

    def _error(self, exc: Exception | None) -> SempsError:
        if self.failure and isinstance(self.failure[0], SempsError):
            return self.failure[0]
        cause = self.failure[0] if self.failure else exc
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else repr(cause)
        return SparkError(f"the streaming query failed: {first}")

    def stop(self) -> None:
        """Stop the query after its current micro-batch."""
        self.query.stop()


def start_stream(
    spark: SparkSession,
    source: StreamSource,
    watch: SubscriptionWatch,
    sink: BatchSink,
    *,
    checkpoint: str,
    expansion: Expansion | None = None,
    trigger_seconds: float | None = 1.0,
    base: str | None = None,
    placement: PlacementOptions | None = None,
    progress: Callable[[str], None] = _say,
    graph: GraphView | None = None,
) -> StreamRun:
    """Start matching ``source`` continuously; the answers of each micro-batch go to ``sink``.

    Args:
        spark: the session.
        source: where events arrive.
        watch: the subscriptions, polled before every micro-batch.
        sink: where answers go (exactly once per batch id).
        checkpoint: the query's checkpoint folder (restart with the same one to resume).
        expansion: the ontology's rule tables.
        trigger_seconds: the micro-batch interval; ``None`` processes what is available
            now, then stops.
        base: base IRI for relative references (default per event).
        placement: mine a placement per subscription version and partition by it.
        progress: told one line per micro-batch.
        graph: a knowledge graph (under ``expansion``), shipped to the executors once:
            each event's answer is what it adds to the graph's (as ``semps match
            --graph``).

    Raises:
        SempsError: a missing folder, Kafka without its connector, a checkpoint Spark
            refuses.
        SparkError: a graph with a placement (events are routed by what they carry).
    """
    if placement is not None and graph is not None and not graph.empty:
        msg = "a placement routes events by what they carry alone: it cannot match a graph"
        raise SparkError(msg)
    matching = VersionedMatching(
        spark,
        expansion or Expansion(),
        base,
        placement,
        parses=watch.parses,
        graph=broadcast_graph(spark.sparkContext, graph),
    )
    matching.use(watch.version)
    frame = open_stream(spark, source)
    failure: list[BaseException] = []
    lock = threading.Lock()

    def run_batch(batch: DataFrame, batch_id: int) -> None:
        with lock:
            try:
                _run_batch(spark, source, watch, matching, sink, batch, batch_id, progress)
            except BaseException as exc:
                failure.append(exc)
                raise

    writer = frame.writeStream.foreachBatch(run_batch).option("checkpointLocation", checkpoint)
    if trigger_seconds is None:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{trigger_seconds} seconds")
    try:
        query = writer.start()
    except Exception as exc:  # Spark reports a bad checkpoint as AnalysisException etc.
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        msg = f"cannot start the stream (checkpoint {checkpoint}): {first}"
        raise SparkError(msg) from exc
    return StreamRun(query, failure)


def _run_batch(
    spark: SparkSession,
    source: StreamSource,
    watch: SubscriptionWatch,
    matching: VersionedMatching,
    sink: BatchSink,
    batch: DataFrame,
    batch_id: int,
    progress: Callable[[str], None],
) -> None:
    from pyspark import StorageLevel

    started = time.perf_counter()
    changed = watch.poll()
    if changed is not None:
        matching.use(changed)
        progress(f"subscriptions reloaded: {len(changed.subscriptions)} (version {changed.token})")
    context = spark.sparkContext
    # The file source makes a partition of each small file: a task per event. One task per
    # core: each costs a Python worker round trip, and a task that finds no idle worker
    # starts one, which builds the whole index again.
    documents = batch_documents(batch, source, task_slots(context))
    if sink.needs_documents:
        documents = documents.persist(StorageLevel.MEMORY_AND_DISK)
    # Counted while the sink's own job runs: no extra Spark job per batch for the report.
    answered = context.accumulator(0)
    skipped: Accumulator[list[Outcome]] = context.accumulator([], _Bounded())  # type: ignore[arg-type]

    def answer(outcome: Outcome) -> bool:
        if isinstance(outcome[1], str):
            skipped.add([outcome])
            return False
        answered.add(1)
        return True

    results = matching.match(documents).filter(answer)
    try:
        written = sink.write(MatchedBatch(spark, batch_id, results, documents))  # type: ignore[arg-type]
    finally:
        matching.release()
        if sink.needs_documents:
            documents.unpersist()
    for event_id, why in skipped.value:
        progress(f"warning: batch {batch_id}: skipped event {event_id!r}: {why}")
    version = matching.version
    assert version is not None
    what = f"{answered.value} events written" if written else "already written, skipped"
    progress(
        f"batch {batch_id}: {what}, {len(skipped.value)} unreadable, "
        f"{time.perf_counter() - started:.1f} s ({len(version.subscriptions)} subscriptions, "
        f"version {version.token})"
    )


def task_slots(context: SparkContext) -> int:
    """How many tasks run at once: ``N`` of a ``local[N]`` master (the machine's cores for
    ``local[*]``), else the default parallelism (the executors' cores unless configured).

    Example:
        >>> class Context:
        ...     master, defaultParallelism = "local[3]", 8
        >>> task_slots(Context())
        3
    """
    master = context.master or ""
    if master.startswith("local"):
        inside = master.partition("[")[2].partition(",")[0].rstrip("]")
        if inside.isdigit():
            return max(1, int(inside))
        if master == "local":
            return 1
        return os.cpu_count() or 1
    return max(1, context.defaultParallelism)


#: Unreadable documents reported per batch at most.
MAX_REPORTED = 100


class _Bounded:
    """An accumulator of the first :data:`MAX_REPORTED` unreadable documents (what
    ``pyspark.AccumulatorParam`` asks for, duck-typed so this module imports no pyspark)."""

    def zero(self, value: list[Outcome]) -> list[Outcome]:
        return []

    def addInPlace(self, value1: list[Outcome], value2: list[Outcome]) -> list[Outcome]:  # noqa: N802
        return (value1 + value2)[:MAX_REPORTED]


__all__ = [
    "SOURCE_KINDS",
    "PlacementOptions",
    "StreamRun",
    "StreamSource",
    "VersionedMatching",
    "batch_documents",
    "open_stream",
    "read_document",
    "start_stream",
]
