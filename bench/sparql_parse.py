"""Subscription registration speed: the parser alone, the phases of registration, snapshots.

Without ``--workload``: generates 1-5-pattern SELECT queries (half with a FILTER) and times
semps ``parse_query`` against rdflib ``prepareQuery`` on them.

With ``--workload DIR`` (a folder of ``subscriptions/*.rq``, e.g. one written by
``bench/semantic_workload.py write``): CPU seconds (user+sys of this process) of

- ``parse_query`` over the distinct texts;
- the phases of registration over every subscription, each alone: parse (each text once),
  ``compile_query``, ``SubscriptionIndex.insert``;
- registration as ``semps match`` does it (``build_matcher``: ``SemanticMatcher.add``, the
  cyclic GC off);
- a snapshot (where this semps has them): save, its bytes per subscription, and loading
  it (reading and decoding; registering the decoded queries).

    .venv/bin/python bench/sparql_parse.py --queries 5000 --rdflib 200
    .venv/bin/python bench/sparql_parse.py --workload /tmp/sw1
    PYTHONPATH=/tmp/semps-prev-284 .venv/bin/python bench/sparql_parse.py --workload /tmp/sw1
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from semps.ingest.sparql import parse_query


def _query(rng: random.Random) -> str:
    lines = []
    for i in range(rng.randint(1, 5)):
        s = f"?v{rng.randint(0, i)}"
        o = f"?v{i + 1}" if rng.random() < 0.7 else f"ex:c{rng.randint(0, 50)}"
        lines.append(f"  {s} ex:p{rng.randint(0, 30)} {o} .")
    if rng.random() < 0.5:
        lines.append(f'  FILTER(?v1 > {rng.randint(0, 99)} || regex(str(?v0), "^a", "i"))')
    body = "\n".join(lines)
    return f"PREFIX ex: <http://example.org/>\nSELECT * WHERE {{\n{body}\n}}"


def _rate(parse: object, texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        parse(text)  # type: ignore[operator]
    return len(texts) / (time.perf_counter() - start)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _timed(label: str, n: int, work: Callable[[], Any]) -> Any:
    """Run ``work`` with the cyclic GC off; print its CPU seconds and rate per item."""
    gc.collect()
    gc.disable()
    cpu, wall = _cpu(), time.perf_counter()
    try:
        out = work()
    finally:
        gc.enable()
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    print(f"{label:42} {cpu:7.2f} s CPU {wall:7.2f} s wall {n / cpu:10,.0f} /CPU-s", flush=True)
    return out


def workload(folder: Path) -> None:
    """The figures of the module doc for one workload folder."""
    from semps.cli.match import build_matcher, load_subscriptions
    from semps.matcher.semantic.compile_query import compile_query
    from semps.matcher.semantic.index import SubscriptionIndex

    subs = load_subscriptions(folder / "subscriptions")
    texts = list(dict.fromkeys(s.text for s in subs))
    n = len(subs)
    print(f"{n} subscriptions, {len(texts)} distinct texts; load average {os.getloadavg()}")
    parsed = _timed("parse_query (distinct texts)", len(texts), lambda: [*map(parse_query, texts)])
    query_of = dict(zip(texts, parsed, strict=True))
    compiled = _timed(
        "compile_query (every subscription)",
        n,
        lambda: [compile_query(s.id, query_of[s.text]) for s in subs],
    )

    def insert() -> None:
        index = SubscriptionIndex()
        for c in compiled:
            index.insert(c)

    _timed("SubscriptionIndex.insert", n, insert)
    compiled.clear()
    _timed("registration as semps match (build_matcher)", n, lambda: build_matcher(subs, 1))
    try:
        from semps.matcher.semantic.snapshot import read_snapshot, save_snapshot
    except ImportError:
        print("(no semantic snapshots in this semps)")
        return
    _snapshot(subs, query_of, read_snapshot, save_snapshot)


def _snapshot(subs: list[Any], query_of: dict[str, Any], read: Any, save: Any) -> None:
    from semps.ingest.sparql import parse_memo
    from semps.matcher.semantic import SemanticMatcher

    n = len(subs)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.snap"
        _timed("snapshot: save", n, lambda: save(path, subs, query_of))
        print(f"snapshot: {path.stat().st_size / n:.0f} bytes per subscription")
        snapshot = _timed("snapshot: read and decode", n, lambda: read(path))

    def register() -> None:
        matcher = SemanticMatcher()
        with parse_memo(snapshot.queries, matcher.limits):
            for sub in snapshot.subscriptions:
                matcher.add(sub)

    _timed("snapshot: register the decoded queries", n, register)


def main() -> int:
    """Print parses per second for semps and rdflib, or the workload's figures."""
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--queries", type=int, default=5000)
    cli.add_argument("--rdflib", type=int, default=200, help="queries timed with rdflib")
    cli.add_argument("--workload", type=Path, help="a folder with subscriptions/*.rq")
    args = cli.parse_args()
    print("command:", " ".join([sys.executable, *sys.argv]))
    if args.workload is not None:
        workload(args.workload)
        return 0
    from rdflib.plugins.sparql import prepareQuery

    rng = random.Random(0)
    texts = [_query(rng) for _ in range(args.queries)]
    ours = _rate(parse_query, texts)
    theirs = _rate(prepareQuery, texts[: args.rdflib])
    print(f"semps parse_query:    {ours:10,.0f} queries/s ({args.queries} queries)")
    print(f"rdflib prepareQuery:  {theirs:10,.0f} queries/s ({args.rdflib} queries)")
    print(f"speed-up: {ours / theirs:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
