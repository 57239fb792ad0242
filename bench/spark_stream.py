"""Benchmark of ``semps spark stream`` (not a test; nothing here is asserted).

One streaming query on a local session (``local[2]`` by default), the file source, the
answers written to ``batch=<id>/`` folders (:class:`~semps.spark.sinks.FileSink`). Files are
moved into the watched folder atomically (written under a hidden name, then renamed), and
the time each one appeared is noted; a wrapper around the sink notes when each answer was
written. Three phases on the same query:

1. **warm-up**: two rounds of a few events; they include each Python worker's index build
   for the subscription version (reported apart: it is paid once per version);
2. **throughput**: ``--backlog`` events appear at once and are drained in batches of at
   most ``--max-files``; events/s = backlog / (last answer written - files appeared);
3. **latency**: ``--feed`` events appear one by one at ``--rate`` events/s; end-to-end
   latency = answer written - file appeared (p50, p95, max). It includes the trigger
   interval (``--trigger``), the listing of the folder and the batch's Spark jobs.

Cases:

- ``semantic DIR``: a folder written by ``bench/semantic_workload.py write`` (ontology,
  ``events/*.nt``, ``subscriptions/*.rq``), matched by broadcast, or with ``--placement``
  by the placement mined per subscription version;
- ``content``: a generated workload where placement should win: ``--subs`` content
  subscriptions over ``--topics`` x ``--per-topic`` attributes, each constraining one or
  two attributes of one topic; each event carries the attributes of one topic (or
  ``--event-attrs`` of them: a small share of all attributes), so the mined 1-itemsets
  route it to few partitions. Run with
  and without ``--placement`` to compare; the report gives the mean partitions an event
  reaches (replication) and the subscriptions per partition.

    .venv/bin/python bench/semantic_workload.py write /tmp/s10k --subs 10000 --events 3000
    .venv/bin/python bench/spark_stream.py semantic /tmp/s10k [--placement] [--in-process]
    .venv/bin/python bench/spark_stream.py content --subs 100000 [--placement]
        [--master local[2]] [--backlog 1000] [--max-files 500] [--feed 60] [--rate 5]
        [--trigger 0.5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from semps.cli.spark_stream import load_stream_subscriptions
from semps.ontology import Expansion, load_expansion
from semps.spark.sinks import BatchSink, FileSink, MatchedBatch
from semps.spark.stream import PlacementOptions, StreamRun, StreamSource, start_stream
from semps.spark.watch import SubscriptionWatch


class TimedSink(BatchSink):
    """A :class:`FileSink` that notes when each event's answer was written."""

    def __init__(self, inner: FileSink) -> None:
        self.inner = inner
        self.written: dict[str, float] = {}
        self.batches: list[tuple[int, int, float]] = []
        self.lock = threading.Lock()

    def write(self, batch: MatchedBatch) -> bool:
        started = time.time()
        written = self.inner.write(batch)
        done = time.time()
        ids = []  # read back from the batch folder: no extra Spark job
        for part in Path(self.inner.target(batch.batch_id)).glob("part-*"):
            ids += [json.loads(line)["event"] for line in part.read_text().splitlines()]
        with self.lock:
            for event_id in ids:
                self.written[event_id] = done
            self.batches.append((batch.batch_id, len(ids), done - started))
        return written


def appear(source: Path, folder: Path) -> float:
    """Move a copy of ``source`` into ``folder`` atomically; when it appeared."""
    hidden = folder / f".{source.name}.part"
    shutil.copyfile(source, hidden)
    os.replace(hidden, folder / source.name)
    return time.time()


def wait_for(sink: TimedSink, ids: list[str], run: StreamRun, limit: float = 3600) -> float:
    """Block until every id's answer is written; the time the last one was."""
    deadline = time.time() + limit
    while True:
        with sink.lock:
            if all(i in sink.written for i in ids):
                return max(sink.written[i] for i in ids)
        if run.query.exception() is not None or time.time() > deadline:
            run.wait(1)
            msg = "stream stopped or timed out"
            raise RuntimeError(msg)
        time.sleep(0.05)


def phases(run: StreamRun) -> dict[str, int]:
    """Median milliseconds per phase of the batches that ran (Spark's own progress):
    ``addBatch`` is the batch's reading, matching and writing; the rest is the streaming
    engine's (listing the folder, logging offsets and commits in the checkpoint)."""
    found: dict[str, list[int]] = {}
    for progress in run.query.recentProgress:
        if progress.get("numInputRows", 0) == 0:
            continue
        for phase, ms in (progress.get("durationMs") or {}).items():
            found.setdefault(phase, []).append(int(ms))
    return {phase: int(statistics.median(ms)) for phase, ms in sorted(found.items())}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(
    args: argparse.Namespace, events: list[Path], subs: Path, expansion: Expansion
) -> dict[str, object]:
    from semps.spark.session import spark_session

    spark = spark_session(args.master, app_name="semps-bench-stream")
    work = Path(tempfile.mkdtemp(prefix="semps-stream-bench-"))
    inbox = work / "events"
    inbox.mkdir()
    started = time.time()
    watch = SubscriptionWatch(subs, load_stream_subscriptions, print)
    validated = time.time() - started
    sink = TimedSink(FileSink(str(work / "out")))
    placement = _placement_options(args) if args.placement else None
    run = start_stream(
        spark,
        StreamSource("events", str(inbox), max_per_batch=args.max_files),
        watch,
        sink,
        checkpoint=str(work / "ck"),
        expansion=expansion,
        trigger_seconds=args.trigger,
        placement=placement,
        progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
    )
    pool: Iterator[Path] = iter(events)
    report: dict[str, object] = {
        "subscriptions": len(watch.version.subscriptions),
        "master": spark.sparkContext.master,
        "driver validation s": round(validated, 1),
        "placement": "mined" if args.placement else "broadcast",
    }
    try:
        # Two rounds: a round's tasks may not reach every Python worker, and a worker's
        # first task of a version builds its index.
        t0 = time.time()
        for _ in range(2):
            warm = [next(pool) for _ in range(args.warm)]
            for p in warm:
                appear(p, inbox)
            wait_for(sink, [p.stem for p in warm], run)
        report["warm-up s (index builds included)"] = round(time.time() - t0, 1)
        backlog = [next(pool) for _ in range(args.backlog)]
        for p in backlog:
            shutil.copyfile(p, inbox / f".{p.name}.part")
        t0 = time.time()
        for p in backlog:
            os.replace(inbox / f".{p.name}.part", inbox / p.name)
        last = wait_for(sink, [p.stem for p in backlog], run)
        report["backlog events"] = len(backlog)
        report["throughput events/s"] = round(len(backlog) / (last - t0), 1)
        appeared: dict[str, float] = {}
        feed = [next(pool) for _ in range(args.feed)]
        for p in feed:
            appeared[p.stem] = appear(p, inbox)
            time.sleep(1 / args.rate)
        wait_for(sink, list(appeared), run)
        lat = [sink.written[i] - t for i, t in appeared.items()]
        report["latency s p50/p95/max"] = [
            round(statistics.median(lat), 2),
            round(percentile(lat, 0.95), 2),
            round(max(lat), 2),
        ]
        report["feed rate events/s"] = args.rate
        report["trigger s"] = args.trigger
        report.update(PLACEMENT_FIGURES)
        report["per batch ms (median of Spark's progress)"] = phases(run)
    finally:
        run.stop()
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    return report


#: Filled by ``content`` with the replication it computed from the mined placement.
PLACEMENT_FIGURES: dict[str, object] = {}


def content_workload(args: argparse.Namespace, folder: Path) -> tuple[list[Path], Path]:
    """Content subscriptions over topics x attributes; each event carries one topic."""
    rng = random.Random(7)
    topics, per = args.topics, args.per_topic
    subs = folder / "subscriptions.jsonl"
    with subs.open("w") as out:
        for i in range(args.subs):
            t = rng.randrange(topics)
            attrs = rng.sample(range(per), rng.choice((1, 2)))
            constraints = []
            for a in attrs:
                low = rng.randint(0, 90)
                constraints.append(
                    {"attr": f"t{t}a{a}", "op": "between", "low": low, "high": low + 10}
                )
            out.write(json.dumps({"id": f"s{i:06d}", "constraints": constraints}) + "\n")
    events = folder / "events"
    events.mkdir()
    paths = []
    for i in range(2 * args.warm + args.backlog + args.feed):
        t = rng.randrange(topics)
        carried = rng.sample(range(per), args.event_attrs or per)
        values = {f"t{t}a{a}": rng.randint(0, 100) for a in carried}
        path = events / f"e{i:06d}.json"
        path.write_text(json.dumps({"values": values}))
        paths.append(path)
    return paths, subs


def _placement_options(args: argparse.Namespace) -> PlacementOptions:
    """The placement the stream mines (seed 0), from the benchmark's options."""
    return PlacementOptions(args.partitions, args.min_support, args.virtual, seed=0)


def replication(args: argparse.Namespace, subs: Path, events: list[Path]) -> dict[str, object]:
    """Mine the placement the stream will mine, and route a sample of events with it."""
    from semps.ingest.json_event import read_json_event
    from semps.matcher.base import MatchContext
    from semps.spark.placed import subscription_items
    from semps.spark.placement import place_all
    from semps.spark.session import spark_session

    spark = spark_session(args.master)
    items = subscription_items(load_stream_subscriptions(subs))
    placement = _placement_options(args).mine(spark, items)
    where = place_all(placement, items, seed=0)
    sizes = [where.count(p) for p in range(args.partitions)]
    reach = []
    from semps.matcher.registry import create_matcher

    content = create_matcher("content")
    for path in events[:200]:
        event = read_json_event(path.read_bytes(), event_id=path.stem)
        reach.append(len(placement.route(content.event_items(MatchContext(event)))))
    spark.stop()
    return {
        "itemset size N": placement.n,
        "partitions": args.partitions,
        "subscriptions per partition min/max": [min(sizes), max(sizes)],
        "partitions an event reaches (mean)": round(statistics.mean(reach), 2),
    }


def in_process(events: list[Path], subs: Path, expansion: Expansion) -> dict[str, object]:
    """The same matcher in this process, one core: build time and counts-only events/s over
    the events the stream drains (read included, as the stream's tasks read them)."""
    from semps.matcher.base import MatchContext
    from semps.spark.shipped_index import build_matchers
    from semps.spark.stream import read_document

    started = time.perf_counter()
    matchers = build_matchers(load_stream_subscriptions(subs))
    built = time.perf_counter() - started
    started = time.perf_counter()
    for first in range(0, len(events), 256):
        loaded = []
        for path in events[first : first + 256]:
            media = "application/json" if path.suffix == ".json" else "application/n-triples"
            event = read_document((path.stem, media, path.read_bytes()), None)
            assert not isinstance(event, tuple), event
            loaded.append(event)
        contexts = [MatchContext(e, expansion) for e in loaded]
        for matcher in matchers:
            matcher.count_batch(contexts)
    rate = len(events) / (time.perf_counter() - started)
    return {"in-process build s": round(built, 1), "in-process events/s": round(rate, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=("semantic", "content"))
    parser.add_argument("folder", nargs="?", type=Path, help="semantic: the workload folder")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--placement", action="store_true", help="mined placement")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--min-support", type=float, default=0.001)
    parser.add_argument("--warm", type=int, default=4)
    parser.add_argument("--backlog", type=int, default=1000)
    parser.add_argument("--max-files", type=int, default=500)
    parser.add_argument("--feed", type=int, default=60)
    parser.add_argument("--rate", type=float, default=5.0)
    parser.add_argument("--trigger", type=float, default=0.5)
    parser.add_argument("--subs", type=int, default=100_000, help="content: subscriptions")
    parser.add_argument("--topics", type=int, default=64, help="content: topics")
    parser.add_argument("--per-topic", type=int, default=8, help="content: attributes each")
    parser.add_argument(
        "--event-attrs", type=int, help="content: attributes an event carries (default all)"
    )
    parser.add_argument("--virtual", type=int, help="placement: M virtual itemsets")
    parser.add_argument(
        "--in-process", action="store_true", help="also time the matcher in this process"
    )
    parser.add_argument("--json", type=Path, help="append the report as a JSON line here")
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="semps-stream-wl-"))
    try:
        if args.case == "semantic":
            if args.folder is None:
                parser.error("semantic needs the workload folder")
            events = sorted((args.folder / "events").iterdir())
            subs = args.folder / "subscriptions"
            expansion = load_expansion(args.folder / "ontology.owl")
        else:
            events, subs = content_workload(args, scratch)
            expansion = Expansion()
            if args.placement:
                PLACEMENT_FIGURES.update(replication(args, subs, events))
        report = {"case": args.case, **measure(args, events, subs, expansion)}
        if args.in_process:
            backlog = events[2 * args.warm : 2 * args.warm + args.backlog]
            report.update(in_process(backlog, subs, expansion))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(report), flush=True)
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
