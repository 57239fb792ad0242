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
from typing import TYPE_CHECKING

from semps.errors import IngestError, SempsError
from semps.event import Event
from semps.ingest.json_event import read_json_event
from semps.ingest.rdf import N_TRIPLES, read_event
from semps.terms import n3

if TYPE_CHECKING:
    from pyspark import RDD
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
    """The events at ``path`` as an RDD of :class:`Event` or :class:`LoadError` records.

    ``kind`` is one of :data:`FORMATS`; by default :func:`source_kind` guesses it.
    """
    kind = kind or source_kind(path)
    if kind not in FORMATS:
        msg = f"unknown events format {kind!r} (choose from {', '.join(FORMATS)})"
        raise SempsError(msg)
    if kind == "rdf":
        return _rdf_files(spark, path, base)
    if kind == "events":
        return _json_events(spark, path)
    reader = spark.read.parquet if kind == "parquet" else spark.read.json
    return events_from_table(reader(path), base=base)


def _rdf_files(spark: SparkSession, path: str, base: str | None) -> RDD[Loaded]:
    local = Path(path)
    files: list[Path] = []
    # With a local master the workers share the driver's files: list them here and read
    # each in a task. On a cluster, Spark lists and ships the bytes (hdfs://, s3a://, or a
    # file:// path every node mounts).
    if (spark.sparkContext.master or "").startswith("local"):
        if local.is_file():
            files = [local]
        elif local.is_dir():
            files = sorted(p for p in local.iterdir() if p.suffix.lower() in RDF_SUFFIXES)
    if files:
        names = [str(p.resolve()) for p in files]
        # Few big tasks: each task costs a Python worker round trip.
        slices = min(len(names), spark.sparkContext.defaultParallelism)
        rdd = spark.sparkContext.parallelize(names, slices).map(_read_local_file)
    else:  # a cluster path: let Spark list and ship the bytes
        rdd = spark.sparkContext.binaryFiles(path).filter(
            lambda kv: PurePosixPath(kv[0]).suffix.lower() in RDF_SUFFIXES
        )
    return rdd.map(lambda item: _read_document(item, base))


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


def _json_events(spark: SparkSession, path: str) -> RDD[Loaded]:
    lines = spark.sparkContext.textFile(path).zipWithIndex()
    name = os.path.basename(path.rstrip("/"))
    return lines.filter(lambda kv: bool(kv[0].strip())).map(lambda kv: _read_json(name, *kv))


def _read_json(name: str, line: str, index: int) -> Loaded:
    try:
        return read_json_event(line.encode("utf-8"))
    except IngestError as exc:
        return LoadError(f"{name}:{index + 1}", str(exc))


def events_from_table(table: DataFrame, *, base: str | None = None) -> RDD[Loaded]:
    """Group a triples table per event and read each group as one N-Triples document."""
    from pyspark.sql import functions as sf

    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        msg = (
            f"a triples table needs the columns {', '.join(TABLE_COLUMNS)}; "
            f"missing: {', '.join(missing)}"
        )
        raise SempsError(msg)
    line = sf.concat_ws(" ", "subject", "predicate", "object")
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
    """Stop with the first unreadable document, named, as ``semps match`` does."""
    bad = events.filter(lambda e: type(e) is LoadError).take(1)
    if bad and isinstance(bad[0], LoadError):
        msg = f"{bad[0].source}:{bad[0].message}"
        raise IngestError(msg)


def event_rows(event: Event) -> Iterator[tuple[str, str, str, str]]:
    """An event as rows of the triples table."""
    for s, p, o in event.triples:
        yield (event.id, n3(s), n3(p), n3(o))


def write_table(spark: SparkSession, events: RDD[Event], path: str) -> int:
    """Write events as a triples table (Parquet, or JSON Lines for a ``.jsonl`` path);
    returns the number of triples written."""
    rows = events.flatMap(event_rows)
    frame = spark.createDataFrame(rows, schema=list(TABLE_COLUMNS))
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
    "RDF_SUFFIXES",
    "TABLE_COLUMNS",
    "LoadError",
    "event_rows",
    "events_from_table",
    "load_events",
    "raise_load_errors",
    "source_kind",
    "write_table",
]
