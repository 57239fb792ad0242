"""Benchmark of notification retention (not a test): what a prune pass costs, and how long
a commit waits while one runs.

A store gets ``--subs`` subscriptions with ``--per-sub`` notifications each; one thread then
commits one small event at a time (as the broker's commit thread does) while another runs
:meth:`SQLiteStore.prune` down to ``--keep`` a subscription. Reports the pass's time and rows, the
commits made meanwhile and their latency (median, 99th percentile, worst), against the same
commits with no pass running.

    .venv/bin/python bench/retention.py [--subs 1000] [--per-sub 200] [--keep 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from _results import record  # bench/ is on the path: this file runs as a script

from semps.broker.contracts import EventRecord
from semps.broker.sqlite_store import SQLiteStore
from semps.matcher.values import Subscription


def fill(store: SQLiteStore, subs: int, per_sub: int) -> None:
    store.put_subscriptions([Subscription(f"s{i}", "semantic", "ASK {}", "o") for i in range(subs)])
    notes = [(f"s{i}", '{"n":1') for i in range(subs)]
    for n in range(per_sub):
        store.commit_events([EventRecord(f"fill-{n}", time.time(), "", 0, notes)])


def commits(store: SQLiteStore, stop: threading.Event, out: list[float]) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        record = EventRecord(f"c-{n}-{time.monotonic_ns()}", time.time(), "", 0, [("s0", '{"x":1')])
        start = time.perf_counter()
        store.commit_events([record])
        out.append(time.perf_counter() - start)


def figures(latencies: list[float]) -> tuple[float, float, float]:
    """Median, 99th percentile and worst of commit latencies, in ms."""
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, ordered[-1] * 1e3


def summary(label: str, latencies: list[float]) -> str:
    median, p99, worst = figures(latencies)
    return (
        f"{label}: {len(latencies)} commits, median {median:.2f} ms, "
        f"p99 {p99:.2f} ms, worst {worst:.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subs", type=int, default=1000)
    parser.add_argument("--per-sub", type=int, default=200)
    parser.add_argument("--keep", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "semps.sqlite3")
        fill(store, args.subs, args.per_sub)
        baseline: list[float] = []
        stop = threading.Event()
        thread = threading.Thread(target=commits, args=(store, stop, baseline))
        thread.start()
        time.sleep(2.0)
        stop.set()
        thread.join()
        during: list[float] = []
        stop = threading.Event()
        thread = threading.Thread(target=commits, args=(store, stop, during))
        thread.start()
        start = time.perf_counter()
        removed = store.prune(args.keep, 0)
        took = time.perf_counter() - start
        stop.set()
        thread.join()
        store.close()
    print(
        f"prune: {removed} of {args.subs * args.per_sub} notifications in {took:.2f} s "
        f"({removed / took:,.0f} rows/s), {args.subs} subscriptions kept to {args.keep}"
    )
    print(summary("commits alone", baseline))
    print(summary("commits during the pass", during))
    alone, meanwhile = figures(baseline), figures(during)
    record(
        "retention",
        {
            "subs": args.subs,
            "per_sub": args.per_sub,
            "keep": args.keep,
            "pass_s": took,
            "rows_deleted": removed,
            "commit_median_ms": meanwhile[0],
            "commit_p99_ms": meanwhile[1],
            "commit_worst_ms": meanwhile[2],
            "alone_median_ms": alone[0],
            "alone_p99_ms": alone[1],
            "alone_worst_ms": alone[2],
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
