"""Events for the Spark jobs: RDF files, a table of triples, or JSON events.

All read through the same ingest code as the broker and ``semps match``
(:func:`semps.ingest.rdf.read_event`, :func:`semps.ingest.json_event.parse_json_event`): a
folder of RDF files is read file by file on the workers; a table's rows are grouped per
event and read as one N-Triples document each; JSON Lines of content or symmetric events
(``{"id": ..., "values": {...}}`` / ``{"id": ..., "region": {...}}``) line by line.

Triples table schema (Parquet, or JSON Lines with one object per row)::

    event      string   the event id
    subject    string   N-Triples term: <iri> or _:label
    predicate  string   N-Triples term: <iri>
    object     string   N-Triples term: <iri>, _:label or "lexical"[@lang|^^<datatype>]

A document that cannot be read becomes a :class:`LoadError` record, so the driver can stop
the job with the file name and position instead of a worker traceback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, cast

from semps.documents import N_TRIPLES
from semps.errors import IngestError, SempsError
from semps.event import Event
from semps.ingest.json_event import read_json_event
from semps.ingest.rdf import read_event
from semps.terms import n3

if TYPE_CHECKING:
    from pyspark import RDD, Accumulator
    from pyspark.accumulators import AccumulatorParam
    from pyspark.sql import DataFrame, SparkSession

#: File suffixes read as RDF documents (one event per file, id = file stem).
RDF_SUFFIXES = (".rdf", ".owl", ".xml", ".ttl", ".nt", ".jsonld")
#: File suffixes read as triples tables.
TABLE_SUFFIXES = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".ndjson": "json"}
#: The columns of a triples table.
TABLE_COLUMNS = ("event", "subject", "predicate", "object")


@dataclass(frozen=True, slots=True)
class LoadError:
    """A document that could not be read (``source`` is a file name or an event id)."""

    source: str
    message: str


#: What reading a document gives: the event, or why there is none.
Loaded = Event | LoadError


#: The formats :func:`load_events` reads.
FORMATS = ("rdf", "parquet", "json", "events")


def source_kind(path: str) -> str:
    """How :func:`load_events` reads ``path``: ``"rdf"`` files, a triples table
    (``"parquet"``, ``"json"``), or JSON ``"events"`` (one per line).

    Local folders are inspected (Parquet part files make a table), and a local JSON Lines
    file by its first line (``"subject"``: triples; ``"values"`` or ``"region"``: events);
    other paths (``hdfs://``, ``s3a://``) are judged by their suffix (JSON: triples), and a
    folder without one holds RDF files.

    Example:
        >>> source_kind("replay/events.parquet"), source_kind("day1.jsonl")
        ('parquet', 'json')
    """
    suffix = PurePosixPath(path.rstrip("/")).suffix.lower()
    local = Path(path)
    if TABLE_SUFFIXES.get(suffix) == "json" and local.is_file():
        return _json_kind(local)
    if suffix in TABLE_SUFFIXES:
        return TABLE_SUFFIXES[suffix]
    if local.is_dir():
        names = {p.suffix.lower() for p in local.iterdir() if p.is_file()}
        if ".parquet" in names:
            return "parquet"
        if names & {".jsonl", ".json", ".ndjson"} and not names & set(RDF_SUFFIXES):
            return "json"
    elif "://" not in path and not local.exists():
        msg = f"events not found: {path}"
        raise SempsError(msg)
    return "rdf"


def _json_kind(path: Path) -> str:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                try:
                    keys = json.loads(line)
                except ValueError:
                    return "json"  # let the reader report the bad line
                if isinstance(keys, dict) and ("values" in keys or "region" in keys):
                    return "events"
                return "json"
    return "json"


def load_events(
    spark: SparkSession, path: str, *, base: str | None = None, kind: str | None = None
) -> RDD[Loaded]:
    """The events at ``path`` as an RDD of :class:`Event` or :class:`LoadError` records,
    spread over :func:`target_partitions` partitions.

    ``kind`` is one of :data:`FORMATS`; by default :func:`source_kind` guesses it.

    Raises:
        SempsError: the path does not exist (checked on the driver, through Hadoop's file
            system for ``hdfs://``, ``s3a://`` and the like), or an unknown ``kind``.
    """
    kind = kind or source_kind(path)
    if kind not in FORMATS:
        msg = f"unknown events format {kind!r} (choose from {', '.join(FORMATS)})"
        raise SempsError(msg)
    check_exists(spark, path)
    if kind == "rdf":
        return _rdf_files(spark, path, base)
    target = target_partitions(spark, input_bytes(path))
    if kind == "events":
        return _json_events(spark, path, target)
    reader = spark.read.parquet if kind == "parquet" else spark.read.json
    return events_from_table(reader(path), base=base, partitions=target)


#: Bytes of input per partition beyond which a source gets more partitions than cores.
PARTITION_BYTES = 32 << 20


def target_partitions(spark: SparkSession, size: int | None) -> int:
    """Partitions for an input of ``size`` bytes: two per core (a slow task leaves the
    others something to take), more for inputs above :data:`PARTITION_BYTES` each.

    Example:
        >>> class Context: defaultParallelism = 2
        >>> class Session: sparkContext = Context()
        >>> target_partitions(Session(), 1000), target_partitions(Session(), 10 * 32 << 20)
        (4, 10)
    """
    cores = max(1, int(spark.sparkContext.defaultParallelism))
    by_size = -(-size // PARTITION_BYTES) if size else 0
    return max(2 * cores, by_size)


def _local_path(path: str) -> Path | None:
    """``path`` as a driver-side path, unless it names another file system."""
    if path.startswith("file://"):
        return Path(path.removeprefix("file://"))
    if "://" in path:
        return None
    return Path(path)


def input_bytes(path: str) -> int | None:
    """The bytes under a driver-visible ``path`` (``None`` for remote file systems)."""
    local = _local_path(path)
    if local is None or not local.exists():
        return None
    if local.is_file():
        return local.stat().st_size
    return sum(p.stat().st_size for p in local.rglob("*") if p.is_file())


def check_local(path: str | None) -> None:
    """Stop before Spark starts when ``path`` is a driver-side path that does not exist
    (a remote one is looked up by :func:`check_exists` once a session runs).

    Raises:
        SempsError: ``events not found: PATH``.
    """
    local = None if path is None else _local_path(path)
    if local is not None and not local.exists():
        msg = f"events not found: {path}"
        raise SempsError(msg)


def check_exists(spark: SparkSession, path: str) -> None:
    """Stop before any job when ``path`` does not exist where the driver can look.

    Raises:
        SempsError: ``events not found: PATH``.
    """
    if _local_path(path) is not None:
        check_local(path)
        return
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    try:
        fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        found = bool(fs.exists(hadoop_path))
    except Exception as exc:  # noqa: BLE001  (no file system for the scheme, no access)
        from semps.spark.session import first_line

        msg = f"cannot read events at {path}: {first_line(exc)}"
        raise SempsError(msg) from exc
    if not found:
        msg = f"events not found: {path}"
        raise SempsError(msg)


def _rdf_files(spark: SparkSession, path: str, base: str | None) -> RDD[Loaded]:
    local = _local_path(path)
    sc = spark.sparkContext
    if local is not None:
        # The driver lists the files in event-id order and splits them into runs of
        # similar size (the answers then need no shuffle to be ordered); each task reads
        # its own (on a cluster, from storage every node mounts at the same path).
        files = [local] if local.is_file() else sorted(local.iterdir(), key=_by_id)
        sized = [(str(p.absolute()), p.stat().st_size) for p in files if _is_rdf(p.name)]
        bins = balance(sized, target_partitions(spark, sum(s for _, s in sized)))
        rdd = sc.parallelize(bins, max(1, len(bins))).flatMap(_read_local_files)
    else:  # another file system: Spark lists and ships the bytes
        target = target_partitions(spark, None)
        rdd = sc.binaryFiles(path, minPartitions=target).filter(lambda kv: _is_rdf(kv[0]))
        if rdd.getNumPartitions() < target:  # small files collapse into one split
            rdd = rdd.repartition(target)
    return rdd.map(lambda item: _read_document(item, base))


def _by_id(path: Path) -> tuple[str, str]:
    return path.stem, path.name


def _is_rdf(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in RDF_SUFFIXES


def balance(sized: list[tuple[str, int]], bins: int) -> list[list[str]]:
    """Split ``(name, size)`` files, in their order, into at most ``bins`` runs of
    consecutive files whose largest total size is as small as it can be (so partitions
    read in order give the events in order, and each holds a fair share of the bytes).

    Example:
        >>> balance([("a", 5), ("b", 1), ("c", 4), ("d", 2)], 2)
        [['a', 'b'], ['c', 'd']]
    """
    count = max(1, min(bins, len(sized)))
    sizes = [size + 1 for _, size in sized]  # empty files still cost a little
    low, high = max(sizes, default=1), max(1, sum(sizes))
    while low < high:  # the smallest capacity that fits the files into ``count`` runs
        middle = (low + high) // 2
        if len(_runs(sizes, middle)) <= count:
            high = middle
        else:
            low = middle + 1
    return [[sized[i][0] for i in run] for run in _runs(sizes, low) if run]


def _runs(sizes: list[int], capacity: int) -> list[list[int]]:
    """Consecutive indexes of ``sizes`` packed greedily into runs of at most ``capacity``."""
    runs: list[list[int]] = [[]]
    load = 0
    for i, size in enumerate(sizes):
        if runs[-1] and load + size > capacity:
            runs.append([])
            load = 0
        runs[-1].append(i)
        load += size
    return runs


def _read_local_files(names: list[str]) -> Iterator[tuple[str, bytes]]:
    for name in names:
        yield _read_local_file(name)


def _read_local_file(name: str) -> tuple[str, bytes]:
    with open(name, "rb") as f:
        return name, f.read()


def _read_document(item: tuple[str, bytes], base: str | None) -> Event | LoadError:
    name, data = item
    path = PurePosixPath(name)
    try:
        return read_event(data, event_id=path.stem, filename=path.name, base=base)
    except IngestError as exc:
        return LoadError(os.path.basename(name), str(exc))


def _json_events(spark: SparkSession, path: str, partitions: int) -> RDD[Loaded]:
    lines = spark.sparkContext.textFile(path, minPartitions=partitions).zipWithIndex()
    name = os.path.basename(path.rstrip("/"))
    return lines.filter(lambda kv: bool(kv[0].strip())).map(lambda kv: _read_json(name, *kv))


def _read_json(name: str, line: str, index: int) -> Loaded:
    try:
        return read_json_event(line.encode("utf-8"))
    except IngestError as exc:
        return LoadError(f"{name}:{index + 1}", str(exc))


def events_from_table(
    table: DataFrame, *, base: str | None = None, partitions: int | None = None
) -> RDD[Loaded]:
    """Group a triples table per event and read each group as one N-Triples document;
    with ``partitions``, the events are hashed over that many partitions (one shuffle:
    the grouping reuses it, and adaptive execution cannot coalesce it into one)."""
    from pyspark.sql import functions as sf

    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        msg = (
            f"a triples table needs the columns {', '.join(TABLE_COLUMNS)}; "
            f"missing: {', '.join(missing)}"
        )
        raise SempsError(msg)
    line = sf.concat_ws(" ", "subject", "predicate", "object")
    if partitions is not None:
        table = table.repartition(partitions, sf.col("event").cast("string"))
    grouped = table.groupBy(sf.col("event").cast("string").alias("event")).agg(
        sf.collect_list(line).alias("lines")
    )
    return grouped.rdd.map(lambda row: _read_rows(row["event"], row["lines"], base))


def _read_rows(event_id: str, lines: Iterable[str], base: str | None) -> Event | LoadError:
    document = "".join(f"{line} .\n" for line in lines).encode("utf-8")
    try:
        return read_event(document, event_id=event_id, media_type=N_TRIPLES, base=base)
    except IngestError as exc:
        return LoadError(f"event {event_id!r}", str(exc))


def raise_load_errors(events: RDD[Loaded]) -> None:
    """Stop with the first unreadable document (by name), as ``semps match`` does.

    One job over every partition at once (``take`` would scan them a few at a time).
    """
    bad = events.filter(lambda e: type(e) is LoadError).mapPartitions(_first).collect()
    raise_first(bad)


def _first(items: Iterable[Loaded]) -> Iterator[Loaded]:
    for item in items:
        yield item
        return


def raise_first(errors: Iterable[Loaded]) -> None:
    """Raise the :class:`IngestError` of the first of ``errors`` by source name, if any."""
    found = sorted((e for e in errors if isinstance(e, LoadError)), key=lambda e: e.source)
    if found:
        msg = f"{found[0].source}:{found[0].message}"
        raise IngestError(msg)


class _FirstErrors:
    """Keeps the first few load errors (by source name) that tasks report (an
    ``AccumulatorParam`` by its two methods, so this module need not import pyspark)."""

    def zero(self, value: list[LoadError]) -> list[LoadError]:
        return []

    def addInPlace(self, a: list[LoadError], b: list[LoadError]) -> list[LoadError]:  # noqa: N802
        return sorted(a + b, key=lambda e: e.source)[:8]


def without_load_errors(
    spark: SparkSession, loaded: RDD[Loaded]
) -> tuple[RDD[Event], Accumulator[list[LoadError]]]:
    """The events of ``loaded``, and an accumulator collecting the documents that could not
    be read, so reading and matching run in one pass (no events cached in between: a
    pickled and unpickled event also matches a third slower, its terms no longer shared
    with the index's). Check it with :func:`raise_first` after the job's action ran.
    """
    param = cast("AccumulatorParam[list[LoadError]]", _FirstErrors())
    errors = spark.sparkContext.accumulator([], param)

    def readable(item: Loaded) -> bool:
        if type(item) is LoadError:
            errors.add([item])
            return False
        return True

    events: RDD[Event] = loaded.filter(readable)  # type: ignore[assignment]
    return events, errors


def event_rows(event: Event) -> Iterator[tuple[str, str, str, str]]:
    """An event as rows of the triples table."""
    for s, p, o in event.triples:
        yield (event.id, n3(s), n3(p), n3(o))


def write_table(spark: SparkSession, events: RDD[Event], path: str) -> int:
    """Write events as a triples table (Parquet, or JSON Lines for a ``.jsonl`` path);
    returns the number of triples written."""
    from pyspark.sql.types import StringType, StructField, StructType

    rows = events.flatMap(event_rows)
    # Every column is text (N3): given, the schema is not inferred by a job of its own.
    schema = StructType([StructField(name, StringType()) for name in TABLE_COLUMNS])
    frame = spark.createDataFrame(rows, schema=schema)
    frame = frame.cache()
    count = frame.count()
    writer = frame.write.mode("overwrite")
    if TABLE_SUFFIXES.get(PurePosixPath(path).suffix.lower()) == "json":
        writer.json(path)
    else:
        writer.parquet(path)
    frame.unpersist()
    return count


__all__ = [
    "FORMATS",
    "PARTITION_BYTES",
    "RDF_SUFFIXES",
    "TABLE_COLUMNS",
    "LoadError",
    "balance",
    "check_exists",
    "check_local",
    "event_rows",
    "events_from_table",
    "input_bytes",
    "load_events",
    "raise_first",
    "raise_load_errors",
    "source_kind",
    "target_partitions",
    "without_load_errors",
    "write_table",
]
