"""``semps spark stream``: continuous matching on Structured Streaming.

    semps spark stream (--events DIR | --triples DIR | --kafka SERVERS --topic T)
        --subscriptions DIR_OR_JSONL [--ontology FILE] --checkpoint DIR
        (--output DIR [--format jsonl|parquet] | --outbox URL [--token T] [--forward all])
        [--trigger SECONDS | --available-now] [--max-files N] [--placement mined ...]

Answers go to ``DIR/batch=<id>/`` (exactly once per micro-batch) or are published to a
running ``semps serve``; progress goes to stderr, stdout stays empty.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from semps.cli import spark_common as common
from semps.cli.options import ontology_option
from semps.errors import SempsError
from semps.matcher.values import Subscription

if TYPE_CHECKING:
    from semps.spark.sinks import BatchSink


def register_stream(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``semps spark stream`` to the ``semps spark`` subcommands."""
    stream = sub.add_parser("stream", help="match events continuously (Structured Streaming)")
    common.common_arguments(stream)
    given = stream.add_mutually_exclusive_group(required=True)
    given.add_argument("--events", help="folder new RDF files appear in (one event each)")
    given.add_argument("--triples", help="folder new triples-table files appear in")
    given.add_argument("--kafka", metavar="SERVERS", help="Kafka bootstrap servers")
    stream.add_argument("--topic", help="the Kafka topic (with --kafka)")
    stream.add_argument(
        "--media-type", default="application/rdf+xml", help="media type of Kafka records"
    )
    stream.add_argument(
        "--triples-format", choices=("parquet", "json"), default="parquet", help="table files"
    )
    stream.add_argument(
        "--subscriptions",
        type=Path,
        required=True,
        help="folder of .rq files or JSON Lines, reloaded when it changes",
    )
    ontology_option(stream)
    stream.add_argument("--checkpoint", required=True, help="the query's checkpoint folder")
    out = stream.add_mutually_exclusive_group(required=True)
    out.add_argument("--output", help="folder of batch=<id>/ answer folders")
    out.add_argument("--outbox", metavar="URL", help="publish to a running `semps serve`")
    stream.add_argument(
        "--format", choices=("jsonl", "parquet"), default="jsonl", help="--output files' format"
    )
    stream.add_argument("--token", help="publisher token for --outbox (default $SEMPS_TOKEN)")
    stream.add_argument(
        "--forward",
        choices=("matched", "all"),
        default="matched",
        help="--outbox: publish only events that matched a subscription here, or all",
    )
    when = stream.add_mutually_exclusive_group()
    when.add_argument("--trigger", type=float, default=1.0, help="seconds between batches")
    when.add_argument(
        "--available-now", action="store_true", help="process what is there, then stop"
    )
    stream.add_argument("--max-files", type=int, help="files (Kafka records) per batch at most")
    common.placement_arguments(
        stream, "partition subscriptions by a placement mined per subscription version"
    )
    common.graph_arguments(stream)
    stream.add_argument("--base", help="base IRI for relative references (default per event)")
    stream.set_defaults(func=run_stream)


def load_stream_subscriptions(path: Path) -> list[Subscription]:
    """A folder of ``.rq`` files (validated later, only what changed) or JSON Lines."""
    from semps.cli.match import load_subscriptions

    return load_subscriptions(path) if path.is_dir() else common.load_any_subscriptions(path)


def _source(args: argparse.Namespace) -> object:
    from semps.spark.stream import StreamSource

    if args.kafka:
        kind, location = "kafka", args.kafka
    elif args.triples:
        kind, location = "triples", args.triples
    else:
        kind, location = "events", args.events
    return StreamSource(
        kind,
        location,
        topic=args.topic,
        table_format=args.triples_format,
        media_type=args.media_type,
        max_per_batch=args.max_files,
    )


def _sink(args: argparse.Namespace) -> BatchSink:
    from semps.spark.sinks import FileSink, OutboxSink, outbox_markers

    if args.output:
        return FileSink(args.output, args.format)
    token = args.token or os.environ.get("SEMPS_TOKEN")
    return OutboxSink(
        args.outbox,
        outbox_markers(args.checkpoint),
        token=token,
        matched_only=args.forward == "matched",
    )


def _check_checkpoint(checkpoint: str) -> None:
    local = Path(checkpoint)
    if "://" in checkpoint:
        return
    if local.exists() and not local.is_dir():
        msg = f"--checkpoint must be a folder: {checkpoint} is a file"
        raise SempsError(msg)
    marks = (local / "metadata", local / "offsets")  # what Spark writes first
    if local.is_dir() and any(local.iterdir()) and not any(m.exists() for m in marks):
        msg = f"--checkpoint {checkpoint} is not a stream checkpoint (no metadata or offsets/)"
        raise SempsError(msg)


def run_stream(args: argparse.Namespace) -> int:
    from semps.spark.stream import StreamSource, start_stream
    from semps.spark.watch import SubscriptionWatch

    if args.trigger <= 0:
        msg = f"--trigger must be a positive number of seconds, not {args.trigger}"
        raise SempsError(msg)
    source = _source(args)
    assert isinstance(source, StreamSource)
    if source.kind != "kafka" and not Path(source.location).is_dir():
        if "://" not in source.location:
            what = "events" if source.kind == "events" else "triples"
            msg = f"{what} folder not found: {source.location}"
            raise SempsError(msg)
    _check_checkpoint(args.checkpoint)
    common.check_graph_options(args, args.subscriptions.is_dir())

    def warn(line: str) -> None:
        print(f"semps: warning: {line}", file=sys.stderr, flush=True)

    watch = SubscriptionWatch(args.subscriptions, load_stream_subscriptions, warn)
    expansion, graph = common.ontology_and_graph(args)
    sink = _sink(args)
    placement = common.placement_options(args) if args.placement == "mined" else None
    spark = common.session(args)
    run = start_stream(
        spark,
        source,
        watch,
        sink,
        checkpoint=args.checkpoint,
        expansion=expansion,
        trigger_seconds=None if args.available_now else args.trigger,
        base=args.base,
        placement=placement,
        graph=graph,
    )
    print(
        f"semps: streaming {source.kind} from {source.location} against "
        f"{len(watch.version.subscriptions)} subscriptions (master {spark.sparkContext.master})",
        file=sys.stderr,
        flush=True,
    )

    stopping = threading.Event()
    received: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        stopping.set()  # the main thread stops the query: no Py4J call inside a handler

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not run.wait(1):
        if stopping.is_set():
            progress("stopping after the current micro-batch")
            run.stop()
    return 130 if signal.SIGINT in received else 0  # SIGTERM: a clean, requested stop


def progress(line: str) -> None:
    """One line of progress on stderr."""
    print(f"semps: {line}", file=sys.stderr, flush=True)
