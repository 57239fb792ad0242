"""Where ``semps spark stream`` reads events: the streaming sources and their documents.

- ``events``: Spark's ``binaryFile`` source over a folder (RDF files, or JSON events as
  ``.json`` files; one event per file, id = file stem);
- ``triples``: a triples table's Parquet or JSON files (an event's rows in one file),
  grouped per event into one N-Triples document;
- ``kafka``: one event document per record (needs Spark's Kafka connector).

A micro-batch's rows become :data:`~semps.spark.sinks.Document` triples ``(id, media type,
bytes)``, read on the executors by :func:`read_document`, the ingest code ``semps match``
uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from semps.documents import N_TRIPLES, RDF_XML, media_type_for
from semps.errors import IngestError, SempsError, SparkError
from semps.event import Event
from semps.ingest.json_event import read_json_event
from semps.ingest.rdf import read_event
from semps.spark.sinks import Document
from semps.spark.sources import RDF_SUFFIXES, TABLE_COLUMNS

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import DataFrame, SparkSession

#: The kinds of :class:`StreamSource`.
SOURCE_KINDS = ("events", "triples", "kafka")
#: Media types read as JSON (content and region) events.
JSON_TYPES = ("application/json",)
#: Files of an events folder read as one JSON (content or region) event each.
JSON_SUFFIX = ".json"
#: The Kafka source's provider class (present only with the connector on the classpath).
KAFKA_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
#: The schema of Spark's ``binaryFile`` source (a stream must state it).
BINARY_FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"
KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.12:<your Spark version>"


@dataclass(frozen=True)
class StreamSource:
    """Where the events come from.

    Attributes:
        kind: ``"events"`` (a folder new RDF files appear in, or JSON events as ``.json``
            files; one event per file, id = file stem), ``"triples"`` (a folder of a
            triples table's files; an event's rows must arrive in one file) or ``"kafka"``
            (one event document per record, id = the record key, else
            ``topic-partition-offset``).
        location: the folder, or Kafka's bootstrap servers.
        topic: the Kafka topic.
        table_format: ``"parquet"`` or ``"json"`` (triples tables).
        media_type: the media type of Kafka records' values.
        max_per_batch: files (or Kafka records) per micro-batch at most.
    """

    kind: str
    location: str
    topic: str | None = None
    table_format: str = "parquet"
    media_type: str = RDF_XML
    max_per_batch: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            msg = f"unknown source {self.kind!r} (choose from {', '.join(SOURCE_KINDS)})"
            raise SempsError(msg)
        if self.kind == "kafka" and not self.topic:
            msg = "a Kafka source needs a topic (--topic)"
            raise SempsError(msg)
        if self.table_format not in ("parquet", "json"):
            msg = f"a triples table is parquet or json, not {self.table_format!r}"
            raise SempsError(msg)
        if self.max_per_batch is not None and self.max_per_batch < 1:
            msg = f"at most N files per batch needs N >= 1, not {self.max_per_batch}"
            raise SempsError(msg)


def open_stream(spark: SparkSession, source: StreamSource) -> DataFrame:
    """The streaming DataFrame of ``source``.

    Raises:
        SempsError: a folder that does not exist.
        SparkError: Kafka without its connector.
    """
    if source.kind == "kafka":
        return _kafka(spark, source)
    if "://" not in source.location and not _is_dir(source.location):
        msg = f"{'events' if source.kind == 'events' else 'triples'} folder not found: "
        raise SempsError(msg + source.location)
    reader = spark.readStream
    if source.max_per_batch:
        reader = reader.option("maxFilesPerTrigger", source.max_per_batch)
    if source.kind == "events":
        suffixes = ",".join(s.lstrip(".") for s in (*RDF_SUFFIXES, JSON_SUFFIX))
        return (
            reader.format("binaryFile")
            .schema(BINARY_FILE_SCHEMA)
            .option("pathGlobFilter", f"*.{{{suffixes}}}")
            .load(source.location)
        )
    schema = ", ".join(f"{c} string" for c in TABLE_COLUMNS)
    return reader.schema(schema).format(source.table_format).load(source.location)


def _is_dir(path: str) -> bool:
    return Path(path).is_dir()


def _kafka(spark: SparkSession, source: StreamSource) -> DataFrame:
    jvm = spark._jvm  # noqa: SLF001
    try:
        jvm.java.lang.Class.forName(  # type: ignore[union-attr]
            KAFKA_PROVIDER,
            False,
            jvm.java.lang.Thread.currentThread().getContextClassLoader(),  # type: ignore[union-attr]
        )
    except Exception as exc:  # py4j reports ClassNotFoundException as Py4JJavaError
        msg = (
            "the Kafka source needs Spark's Kafka connector on the classpath: add "
            f"--conf spark.jars.packages={KAFKA_PACKAGE} (or spark-submit --packages)"
        )
        raise SparkError(msg) from exc
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", source.location)
        .option("subscribe", source.topic or "")
    )
    if source.max_per_batch:
        reader = reader.option("maxOffsetsPerTrigger", source.max_per_batch)
    return reader.load()


def batch_documents(
    frame: DataFrame, source: StreamSource, partitions: int | None = None
) -> RDD[Document]:
    """A micro-batch's rows as event documents ``(id, media type, bytes)``, in at most
    ``partitions`` partitions.

    The partitions are merged on the JVM side, before the rows reach Python: merging the
    Python RDD instead would put a second Python stage in each task, a second Python
    worker beside the matching one, and every worker ends up building its own index.
    """
    if source.kind == "events":
        rows = _fewer(frame.select("path", "content"), partitions).rdd
        return rows.map(lambda row: _file_document(*row))
    if source.kind == "kafka":
        media_type = source.media_type
        cols = frame.select("key", "value", "topic", "partition", "offset")
        return _fewer(cols, partitions).rdd.map(lambda row: _kafka_document(row, media_type))
    from pyspark.sql import functions as sf

    line = sf.concat_ws(" ", "subject", "predicate", "object")
    grouped = frame.groupBy(sf.col("event").cast("string").alias("event")).agg(
        sf.collect_list(line).alias("lines")
    )
    rows = _fewer(grouped, partitions).rdd
    return rows.map(lambda row: _table_document(row["event"], row["lines"]))


def _fewer(frame: DataFrame, partitions: int | None) -> DataFrame:
    return frame if partitions is None else frame.coalesce(partitions)


def _file_document(path: str, content: bytearray) -> Document:
    name = PurePosixPath(path).name
    if name.lower().endswith(JSON_SUFFIX):
        return PurePosixPath(name).stem, JSON_TYPES[0], bytes(content)
    try:
        media_type = media_type_for(name)
    except IngestError:  # the glob only lets RDF suffixes through
        media_type = RDF_XML
    return PurePosixPath(name).stem, media_type, bytes(content)


def _kafka_document(row: tuple[object, ...], media_type: str) -> Document:
    key, value, topic, partition, offset = row
    if isinstance(key, bytes | bytearray) and key:
        event_id = bytes(key).decode("utf-8", "replace")
    else:
        event_id = f"{topic}-{partition}-{offset}"
    data = bytes(value) if isinstance(value, bytes | bytearray) else b""
    return event_id, media_type, data


def _table_document(event_id: str, lines: Iterable[str]) -> Document:
    return event_id, N_TRIPLES, "".join(f"{line} .\n" for line in lines).encode("utf-8")


def read_document(document: Document, base: str | None) -> Event | tuple[str, str]:
    """The event of a document, or ``(event id, why not)``."""
    event_id, media_type, data = document
    try:
        if media_type in JSON_TYPES:
            return read_json_event(data, event_id=event_id)
        return read_event(data, event_id=event_id, media_type=media_type, base=base)
    except IngestError as exc:
        return event_id, str(exc)


__all__ = [
    "JSON_SUFFIX",
    "JSON_TYPES",
    "SOURCE_KINDS",
    "StreamSource",
    "batch_documents",
    "open_stream",
    "read_document",
]
