"""Benchmark of the Spark pipeline (not a test; nothing here is asserted).

The workload of ``bench/semantic.py`` (synthetic ontology, events of 20-50 triples,
subscriptions of 1-5 patterns), matched on a local Spark session:

- events/s of the ``matcher`` engine (the broker's matcher in each Python worker, the
  subscriptions broadcast) for each (events, subscriptions) size;
- the same with the mined placement (seed 004): subscriptions partitioned, events
  replicated to the partitions their items reach; replication and pairs examined;
- the ``graphframes`` engine (motif queries per subscription template) against the
  ``matcher`` engine on a small point, where both finish;
- every answer of a run checked against the in-process matcher on a sample of events.

Times exclude the Spark start-up and the generation of the workload; the events are
parallelised from the driver, then matched and counted (``count`` of the result RDD,
nothing collected but the sample). They include the index build: the first task of each
Python worker registers all its subscriptions (about 20 s for 100k on ``local[2]``), once
per job. So for each subscription count run at two event counts, a ``marginal`` line gives
the events/s between them, (events difference) / (seconds difference): the rate once the
index is built, which is what a long replay approaches.

    .venv/bin/python bench/spark.py [--master local[2]] [--events 10000,100000]
        [--subs 10000,100000] [--partitions 16] [--gf-events 200] [--gf-subs 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from semantic import event, ontology, subscription  # noqa: E402  (bench/semantic.py)

from semps.matcher.base import MatchContext, Subscription  # noqa: E402
from semps.matcher.semantic import SemanticMatcher  # noqa: E402
from semps.ontology import compile_axioms  # noqa: E402
from semps.spark.bulk import match_events, subscription_items  # noqa: E402
from semps.spark.placement import mine_placement  # noqa: E402
from semps.spark.report import placement_report  # noqa: E402
from semps.spark.session import spark_session  # noqa: E402


def workload(n_events: int, n_subs: int, seed: int = 1):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    expansion = compile_axioms(ontology(rng))
    subs = [Subscription(f"s{i}", "semantic", subscription(rng)) for i in range(n_subs)]
    events = []
    for i in range(n_events):
        e = event(rng, rng.randint(20, 50))
        events.append(type(e)(f"e{i:07d}", e.triples))
    return expansion, subs, events


def check(results, events, subs, expansion, sample: int = 50) -> bool:  # type: ignore[no-untyped-def]
    """The Spark answers of a sample of events equal the in-process matcher's."""
    matcher = SemanticMatcher()
    for s in subs:
        matcher.add(s)
    ids = {e.id for e in events[:sample]}
    got = dict(results.filter(lambda kv: kv[0] in ids).collect())
    for e in events[:sample]:
        want = {m.subscription: m.count for m in matcher.match(e, MatchContext(e, expansion))}
        if got.get(e.id) != want:
            return False
    return True


def run(spark, n_events, n_subs, engine, placement_parts, min_support) -> float:  # type: ignore[no-untyped-def]
    expansion, subs, events = workload(n_events, n_subs)
    sc = spark.sparkContext
    rdd = sc.parallelize(events, max(2, sc.defaultParallelism * 2)).cache()
    rdd.count()
    placement = None
    extra = ""
    if placement_parts:
        t = time.perf_counter()
        items = subscription_items(subs)
        placement = mine_placement(
            spark, items, partitions=placement_parts, min_support=min_support
        )
        mined_in = time.perf_counter() - t
        sample = sc.parallelize(events[:2000], 2)
        routes = placement_report(placement, subs, sample, expansion, delivery=False, items=items)
        mined = next(s for s in routes.strategies if s.name == "mined").summary()
        extra = (
            f" N={placement.n} itemsets={len(placement.itemsets)}"
            f" imbalance={mined['imbalance']:.2f}"
            f" replicas/event={mined['mean_replication']:.2f}/{placement_parts}"
            f" items+FPGrowth {mined_in:.1f}s"
        )
    t = time.perf_counter()
    results = match_events(
        rdd, subs, expansion, engine=engine, placement=placement, validate=False
    ).cache()
    matched = results.count()
    elapsed = time.perf_counter() - t
    matches = results.map(lambda kv: len(kv[1])).sum()
    ok = check(results, events, subs, expansion)
    results.unpersist()
    rdd.unpersist()
    label = engine + (f"+placement({placement_parts})" if placement_parts else "")
    print(
        f"{n_events:>7} {n_subs:>7} {label:<24} {elapsed:>8.1f} {matched / elapsed:>9.0f}"
        f" {matches / max(1, matched):>6.1f} {'yes' if ok else 'NO':>5}{extra}",
        flush=True,
    )
    return elapsed


def marginal(n_subs: int, label: str, timed: dict[int, float]) -> None:
    """Events/s between the smallest and largest event counts run: the index build and
    every other fixed cost of a job cancel out."""
    if len(timed) < 2:
        return
    lo, hi = min(timed), max(timed)
    extra = hi - lo
    seconds = timed[hi] - timed[lo]
    rate = f"{extra / seconds:>9.0f}" if seconds > 0 else f"{'-':>9}"
    print(f"{'marginal':>7} {n_subs:>7} {label:<24} {seconds:>8.1f} {rate}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--events", default="10000,100000")
    parser.add_argument("--subs", default="10000,100000")
    parser.add_argument("--partitions", type=int, default=16, help="placement partitions")
    parser.add_argument("--min-support", type=float, default=0.01)
    parser.add_argument("--gf-events", type=int, default=200)
    parser.add_argument("--gf-subs", type=int, default=200)
    parser.add_argument("--skip", default="", help="comma list: matcher,placement,graphframes")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    print(f"command: {' '.join(sys.argv)}")
    spark = spark_session(args.master, app_name="semps-bench")
    print(
        f"{'events':>7} {'subs':>7} {'engine':<24} {'seconds':>8} {'events/s':>9}"
        f" {'m/ev':>6} {'same':>5}"
    )
    if "graphframes" not in skip:
        run(spark, args.gf_events, args.gf_subs, "matcher", 0, args.min_support)
        run(spark, args.gf_events, args.gf_subs, "graphframes", 0, args.min_support)
    for n_subs in map(int, args.subs.split(",")):
        plain: dict[int, float] = {}
        placed: dict[int, float] = {}
        for n_events in map(int, args.events.split(",")):
            if "matcher" not in skip:
                plain[n_events] = run(spark, n_events, n_subs, "matcher", 0, args.min_support)
            if "placement" not in skip:
                placed[n_events] = run(
                    spark, n_events, n_subs, "matcher", args.partitions, args.min_support
                )
        marginal(n_subs, "matcher", plain)
        marginal(n_subs, f"matcher+placement({args.partitions})", placed)
    spark.stop()


if __name__ == "__main__":
    main()
