"""Where ``semps spark stream`` writes each micro-batch's answers, exactly once per batch id.

Structured Streaming records a micro-batch's input (its offsets) in the checkpoint before it
runs, and its completion after the sink returns. After a crash the last uncommitted batch
runs again with the *same* batch id and the same input, so a sink that does nothing for a
batch id it already completed turns the at-least-once replay into exactly-once output:

- :class:`FileSink` writes each batch to ``<output>/batch=<id>/`` (JSON Lines or Parquet),
  first under a hidden temporary name, then renamed; a batch whose directory exists is
  skipped. Readers (Spark, pyarrow, ``cat``) ignore the hidden leftovers of a crash, which
  the next start removes.
- :class:`OutboxSink` publishes the batch's events to a running ``semps serve``
  (``POST /events/batch``), which matches them again under its own subscriptions and
  notifies its SSE and webhook subscribers; a marker in the checkpoint records each batch
  it finished. The service has no idempotency key, so a crash between the service's
  answer and the marker's write re-publishes that one batch: at least once, in a window
  of one HTTP round trip.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from semps.errors import DeliveryError, SempsError
from semps.matcher.results import result_line

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import SparkSession

Counts = dict[str, int]
#: An event document as it travels through the stream: (event id, media type, bytes).
Document = tuple[str, str, bytes]
#: The formats of :class:`FileSink`.
FILE_FORMATS = ("jsonl", "parquet")
#: Prefix of a batch being written (hidden from Spark and pyarrow readers).
TEMPORARY = ".writing-"


@dataclass(frozen=True)
class MatchedBatch:
    """One micro-batch after matching.

    Attributes:
        spark: the session the batch ran on.
        batch_id: Structured Streaming's batch id (stable across a restart).
        results: ``(event id, {subscription id: solution count})``, one per readable event
            (computing it runs the matching).
        documents: the batch's documents (what an outbox publishes), kept in memory when
            the sink :attr:`~BatchSink.needs_documents`.
    """

    spark: SparkSession
    batch_id: int
    results: RDD[tuple[str, Counts]]
    documents: RDD[Document]


class BatchSink(ABC):
    """A destination for matched micro-batches.

    Contract: :meth:`write` is called on the driver, once per micro-batch, possibly again
    with a batch id after a restart; for a batch id it completed before it must write
    nothing and return ``False``. It raises :class:`~semps.errors.SempsError` subclasses
    for failures the user can fix (unreachable output, refused publication). It should
    run as few Spark jobs as it can: each costs a scheduling round trip per batch.
    """

    #: Whether :meth:`write` reads ``batch.documents`` (they are then kept in memory).
    needs_documents: bool = False

    @abstractmethod
    def write(self, batch: MatchedBatch) -> bool:
        """Write ``batch``; ``False`` when it was written before (nothing done)."""


def _hadoop_fs(spark: SparkSession, path: str) -> tuple[object, object]:
    """The Hadoop file system of ``path`` and the path as a Hadoop ``Path`` (works for
    local folders, ``hdfs://`` and ``s3a://`` alike)."""
    jvm = spark._jvm  # noqa: SLF001  (py4j gateway: the only way to Hadoop's FileSystem)
    hpath = jvm.org.apache.hadoop.fs.Path(path)  # type: ignore[union-attr]
    return hpath.getFileSystem(spark._jsc.hadoopConfiguration()), hpath  # noqa: SLF001


class FileSink(BatchSink):
    """Answers as ``<output>/batch=<id>/`` folders, in JSON Lines (the lines of
    ``semps match``, sorted by event id) or Parquet (``event``, ``matches``,
    ``solutions``)."""

    def __init__(self, output: str, fmt: str = "jsonl") -> None:
        if fmt not in FILE_FORMATS:
            msg = f"unknown output format {fmt!r} (choose from {', '.join(FILE_FORMATS)})"
            raise SempsError(msg)
        local = Path(output)
        if "://" not in output and local.exists() and not local.is_dir():
            msg = f"--output must be a folder: {output} is a file"
            raise SempsError(msg)
        self.output = output.rstrip("/")
        self.fmt = fmt
        if "://" not in output:
            _make_folder(local, "--output")
            for stale in local.glob(TEMPORARY + "*"):  # a crash's half-written batch
                shutil.rmtree(stale, ignore_errors=True)

    def target(self, batch_id: int) -> str:
        """The folder of one batch."""
        return f"{self.output}/batch={batch_id}"

    def write(self, batch: MatchedBatch) -> bool:
        fs, final = _hadoop_fs(batch.spark, self.target(batch.batch_id))
        if fs.exists(final):  # type: ignore[attr-defined]
            return False
        temporary = f"{self.output}/{TEMPORARY}{batch.batch_id}-{uuid.uuid4().hex[:8]}"
        # One Spark job: matching runs inside it, one task per partition; each part file
        # is sorted by event id.
        if self.fmt == "jsonl":
            lines = batch.results.map(lambda kv: (kv[0], result_line(kv[0], kv[1])))
            lines.mapPartitions(_sorted_lines).saveAsTextFile(temporary)
        else:
            rows = batch.results.map(lambda kv: (kv[0], sorted(kv[1]), kv[1]))
            frame = batch.spark.createDataFrame(
                rows, "event string, matches array<string>, solutions map<string,int>"
            )
            frame.sortWithinPartitions("event").write.parquet(temporary)
        _, source = _hadoop_fs(batch.spark, temporary)
        if not fs.rename(source, final):  # type: ignore[attr-defined]
            msg = f"could not rename {temporary} to {self.target(batch.batch_id)}"
            raise SempsError(msg)
        return True


def _sorted_lines(pairs: Iterable[tuple[str, str]]) -> Iterable[str]:
    for _, line in sorted(pairs):
        yield line


def _make_folder(path: Path, option: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"{option}: cannot create {path}: {exc.strerror or exc}"
        raise SempsError(msg) from exc


#: Bytes of event documents per ``POST /events/batch`` request (the service refuses bodies
#: over its ``--max-body``, 16 MiB by default; a document alone larger than this goes alone).
OUTBOX_CHUNK_BYTES = 4 * 1024 * 1024
#: Events per request at most.
OUTBOX_CHUNK_EVENTS = 256

#: Sends one request body; returns the decoded JSON answer (a test double can replace it).
Poster = Callable[[str, bytes, dict[str, str]], object]


def post_json(url: str, body: bytes, headers: dict[str, str], timeout: float = 60.0) -> object:
    """POST ``body`` to ``url``; the JSON answer, or a :class:`DeliveryError` saying why not."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        msg = f"the service at {url} refused the events: HTTP {exc.code} {detail}"
        raise DeliveryError(msg) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        msg = f"cannot publish to {url}: {getattr(exc, 'reason', exc)}"
        raise DeliveryError(msg) from exc


class OutboxSink(BatchSink):
    """Publish the batch's events to a running ``semps serve`` (``POST /events/batch``).

    Args:
        url: the service's base URL (``http://host:port``).
        markers: a folder (inside the checkpoint) recording the batches published.
        token: a publisher bearer token, when the service requires one.
        matched_only: publish only the events that matched a stream subscription (the
            stream's subscriptions then act as a pre-filter, sound when they include the
            service's); otherwise every readable event.
        poster: sends one request (:func:`post_json` by default).
    """

    def __init__(
        self,
        url: str,
        markers: Path,
        *,
        token: str | None = None,
        matched_only: bool = True,
        poster: Poster = post_json,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            msg = f"--outbox must be an http(s) URL, not {url!r}"
            raise SempsError(msg)
        self.endpoint = url.rstrip("/") + "/events/batch"
        self.markers = markers
        _make_folder(markers, "--checkpoint")
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.matched_only = matched_only
        self.poster = poster

    needs_documents = True

    def write(self, batch: MatchedBatch) -> bool:
        marker = self.markers / f"batch={batch.batch_id}"
        if marker.exists():
            return False
        answers = batch.results  # readable events only: the service would refuse the rest
        if self.matched_only:
            answers = answers.filter(lambda kv: bool(kv[1]))
        keys = answers.map(lambda kv: (kv[0], 1))
        documents = batch.documents.keyBy(lambda d: d[0]).join(keys).map(lambda kv: kv[1][0])
        published = 0
        for chunk in _chunks(documents.toLocalIterator()):
            body = json.dumps({"events": [_outgoing(d) for d in chunk]}).encode("utf-8")
            answer = self.poster(self.endpoint, body, self.headers)
            published += _accepted(answer, chunk)
        marker.write_text(f"{published}\n", encoding="utf-8")
        return True


def _outgoing(document: Document) -> dict[str, str]:
    _, media_type, data = document
    return {"media_type": media_type, "body": data.decode("utf-8", "replace")}


def _accepted(answer: object, chunk: Sequence[Document]) -> int:
    events = answer.get("events") if isinstance(answer, dict) else None
    if not isinstance(events, list) or len(events) != len(chunk):
        msg = f"unexpected answer from the service: {str(answer)[:200]}"
        raise DeliveryError(msg)
    return sum(1 for e in events if isinstance(e, dict) and "id" in e)


def _chunks(documents: Iterator[Document]) -> Iterator[list[Document]]:
    chunk: list[Document] = []
    size = 0
    for document in documents:
        if chunk and (
            size + len(document[2]) > OUTBOX_CHUNK_BYTES or len(chunk) == OUTBOX_CHUNK_EVENTS
        ):
            yield chunk
            chunk, size = [], 0
        chunk.append(document)
        size += len(document[2])
    if chunk:
        yield chunk


def outbox_markers(checkpoint: str) -> Path:
    """Where the outbox records its published batches: next to the query's own logs."""
    return Path(checkpoint) / "semps-outbox"


__all__ = [
    "FILE_FORMATS",
    "BatchSink",
    "Document",
    "FileSink",
    "MatchedBatch",
    "OutboxSink",
    "outbox_markers",
    "post_json",
]
