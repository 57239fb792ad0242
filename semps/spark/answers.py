"""Writing bulk answers: JSON lines in event-id order, or a Parquet folder.

Reading and matching run once, in one job (a distributed ``sortByKey`` on uncached results
cost a count, a sample and a shuffle that each re-ran the match: on lubm-bulk, 22-32 s of
a 75-94 s job on ``local[2]``):

- **JSON lines** (stdout or a ``.jsonl`` file): the executors format each event's line
  and sort their partition by event id. On a local master (executors on the driver's
  machine) each task spools its partition's lines to a file and reports its first and
  last id; the driver then copies the files in id order (or merges them when the ranges
  overlap): the lines never cross the JVM (at 1% of 100k subscriptions, 30 KB an event
  pickled to the JVM, stored and pickled again to the driver cost ~1 ms of CPU an event,
  a third of matching it). Elsewhere the lines are persisted while one job computes
  them all and reports each partition's first and last id. When those ranges do not
  overlap (an RDF folder is split into runs of its files in id order), the driver fetches
  the partitions one at a time in that order and writes them: memory on the driver is one
  partition, and no result set meets ``spark.driver.maxResultSize`` (at 1% of 100k
  subscriptions a line holds ~1,000 ids, 30 KB: 20,000 events make 600 MB). Otherwise
  (a triples table hashed by event) the persisted lines are range-partitioned by id
  first (``sortByKey``: a sample and a shuffle of the lines, not of the match).
- **Parquet**: persisted, counted and written by the executors, each part file ordered
  by event id.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from semps.errors import SempsError
from semps.matcher.results import result_line
from semps.spark.sources import LoadError, raise_first

if TYPE_CHECKING:
    from pyspark import RDD, Accumulator
    from pyspark.sql import SparkSession

Counts = dict[str, int]
#: An event's answer line, keyed by its id.
Line = tuple[str, str]
#: A partition of sorted lines: (partition index, lines, first id, last id).
Span = tuple[int, int, str, str]


def write_results(
    spark: SparkSession,
    results: RDD[tuple[str, Counts]],
    output: str | None,
    errors: Accumulator[list[LoadError]] | None = None,
    *,
    spool: bool | None = None,
) -> int:
    """Write ``(event, counts)`` pairs: JSON lines ordered by event id to stdout or a
    ``.jsonl`` file, else a Parquet folder (each part file ordered by event id); returns
    the number of events.

    ``errors`` collects the documents the match could not read
    (:func:`~semps.spark.sources.without_load_errors`): the first one stops the command
    before anything is written. ``spool``: see :func:`write_lines`.

    Raises:
        IngestError: the first document that could not be read.
        SempsError: a Parquet output the driver cannot see (cluster without shared storage).
    """
    if not is_lines(output):
        assert output is not None
        return _write_parquet(spark, results, output, errors)
    # The executors format the lines: one string an event crosses to the driver, not a
    # dict of (at 1% of 100k subscriptions) a thousand counts to unpickle.
    lines = results.map(lambda kv: (kv[0], result_line(kv[0], kv[1])))
    return write_lines(lines, output, errors, spool=spool)


def is_lines(output: str | None) -> bool:
    """Whether ``output`` takes JSON lines (stdout, a ``.jsonl`` file), not Parquet."""
    return output is None or output.endswith(".jsonl")


def write_lines(
    lines: RDD[Line],
    output: str | None,
    errors: Accumulator[list[LoadError]] | None = None,
    *,
    spool: bool | None = None,
) -> int:
    """Write ``(event id, line)`` pairs in event-id order to stdout or the ``.jsonl`` file
    ``output``; returns the number of events (see the module doc and :func:`write_results`).

    ``spool``: the executors write the lines to files the driver reads (the default on a
    local master), else they reach the driver through Spark.

    Raises:
        IngestError: the first document that could not be read.
    """
    from pyspark import StorageLevel

    from semps.spark.session import is_local

    if spool is None:
        spool = is_local(lines.context.master or "")
    if spool:
        return _write_spooled(lines, output, errors)

    ordered = lines.mapPartitions(_sorted).persist(StorageLevel.MEMORY_AND_DISK)
    kept = [ordered]
    try:
        spans = ordered.mapPartitionsWithIndex(_span).collect()  # the one matching job
        if errors is not None:
            raise_first(errors.value)
        order = in_order(spans)
        if order is None:
            ordered = _range_sorted(ordered)
            kept.append(ordered)
            order = list(range(ordered.getNumPartitions()))
        if output is None:
            _write_partitions(ordered, order, sys.stdout)
        else:
            partial = f"{output}.partial"
            with open(partial, "w", encoding="utf-8") as f:
                _write_partitions(ordered, order, f)
            os.replace(partial, output)
    finally:
        for rdd in kept:
            rdd.unpersist()
    return sum(span[1] for span in spans)


def _sorted(lines: Iterable[Line]) -> list[Line]:
    return sorted(lines)


def _write_spooled(
    lines: RDD[Line], output: str | None, errors: Accumulator[list[LoadError]] | None
) -> int:
    """:func:`write_lines` through files in a temporary folder of this machine."""
    folder = tempfile.mkdtemp(prefix="semps-lines-")
    try:
        spans = lines.mapPartitionsWithIndex(functools.partial(_spool, folder)).collect()
        if errors is not None:
            raise_first(errors.value)
        order = in_order(spans)
        if output is None:
            sys.stdout.flush()
            _copy_spooled(folder, spans, order, sys.stdout.buffer)
            sys.stdout.flush()
        else:
            partial = f"{output}.partial"
            with open(partial, "wb") as f:
                _copy_spooled(folder, spans, order, f)
            os.replace(partial, output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return sum(span[1] for span in spans)


def _spool(folder: str, index: int, lines: Iterable[Line]) -> Iterator[Span]:
    """Write a partition's lines sorted by event id to ``folder`` (``<index>.jsonl``, and
    each line's id as JSON in ``<index>.ids``); its span."""
    ordered = sorted(lines)
    name = os.path.join(folder, f"{index:06d}")
    for suffix, text in ((".jsonl", [line for _, line in ordered]),
                         (".ids", [json.dumps(key) for key, _ in ordered])):  # fmt: skip
        with open(f"{name}{suffix}.tmp", "w", encoding="utf-8") as f:
            f.writelines(item + "\n" for item in text)
        os.replace(f"{name}{suffix}.tmp", f"{name}{suffix}")  # a task retried rewrites it
    yield from _span(index, ordered)


def _copy_spooled(folder: str, spans: list[Span], order: list[int] | None, out: BinaryIO) -> None:
    """The spooled partitions' lines in id order: copied in ``order``, else merged."""
    names = {span[0]: os.path.join(folder, f"{span[0]:06d}") for span in spans}
    if order is not None:
        for index in order:
            with open(f"{names[index]}.jsonl", "rb") as f:
                shutil.copyfileobj(f, out)
        return
    with contextlib.ExitStack() as files:
        runs = [
            zip(
                (json.loads(key) for key in files.enter_context(open(f"{name}.ids", "rb"))),
                files.enter_context(open(f"{name}.jsonl", "rb")),
                strict=True,
            )
            for name in names.values()
        ]
        out.writelines(line for _, line in heapq.merge(*runs, key=lambda pair: pair[0]))


def _span(index: int, lines: Iterable[Line]) -> Iterator[Span]:
    count, first, last = 0, "", ""
    for key, _ in lines:
        if not count:
            first = key
        count, last = count + 1, key
    if count:
        yield index, count, first, last


def in_order(spans: Iterable[Span]) -> list[int] | None:
    """The partitions to read, in event-id order, when their id ranges do not overlap
    (``None`` when they do; empty partitions are left out).

    Example:
        >>> in_order([(0, 2, "c", "d"), (1, 1, "a", "b"), (2, 3, "e", "f")])
        [1, 0, 2]
        >>> in_order([(0, 2, "a", "c"), (1, 2, "b", "d")]) is None
        True
    """
    ranked = sorted(spans, key=lambda s: (s[2], s[3]))
    for before, after in zip(ranked, ranked[1:], strict=False):
        if before[3] >= after[2]:
            return None
    return [span[0] for span in ranked]


def _range_sorted(ordered: RDD[Line]) -> RDD[Line]:
    from pyspark import StorageLevel

    partitions = max(1, ordered.getNumPartitions())
    # (pyspark's stubs want a keyfunc whose keys are their own SupportsOrdering)
    ranged: RDD[Line] = ordered.sortByKey(True, partitions)  # type: ignore[call-overload]
    return ranged.persist(StorageLevel.MEMORY_AND_DISK)


def _write_partitions(ordered: RDD[Line], order: list[int], out: TextIO) -> None:
    """Fetch the partitions in ``order``, one job (and one partition in memory) each.

    In their own order (an RDF folder's runs, a range sort), the persisted lines stream
    from the JVM's block store as they were pickled (``toLocalIterator``): no Python task
    unpickles and pickles each line again on its way (at 1% of 100k subscriptions a line
    is 30 KB). Otherwise one task per partition reads them.
    """
    if order == sorted(order):
        for _, line in ordered.toLocalIterator(prefetchPartitions=True):
            out.write(line + "\n")
    else:
        context = ordered.context
        for index in order:
            for line in context.runJob(ordered, _texts, [index]):
                out.write(line + "\n")
    out.flush()


def _texts(lines: Iterable[Line]) -> list[str]:
    return [line for _, line in lines]


def _write_parquet(
    spark: SparkSession,
    results: RDD[tuple[str, Counts]],
    output: str,
    errors: Accumulator[list[LoadError]] | None,
) -> int:
    from pyspark import StorageLevel

    results = results.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = results.count()
        if errors is not None:
            raise_first(errors.value)
        rows = results.map(lambda kv: (kv[0], sorted(kv[1]), kv[1]))
        frame = spark.createDataFrame(
            rows, "event string, matches array<string>, solutions map<string,int>"
        )
        frame.sortWithinPartitions("event").write.mode("overwrite").parquet(output)
    finally:
        results.unpersist()
    local = None if "://" in output else Path(output)
    if count and local is not None and not any(local.glob("part-*")):
        msg = (
            f"the executors wrote {output} where this driver cannot see it (only the commit "
            "marker is here): on a cluster, write to storage every node shares (hdfs://, "
            "s3a://, or a folder mounted at the same path everywhere), or use a .jsonl output"
        )
        raise SempsError(msg)
    return int(count)


__all__ = ["in_order", "is_lines", "write_lines", "write_results"]
