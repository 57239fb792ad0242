"""Benchmark of composite detection (not a test): arrivals per second with 1,000 and 10,000
random definitions over 100 primitives, memory per definition, and the naive method
(re-evaluating every definition on each arrival). The headline figure runs the stream
through :meth:`EventTree.run` (one compiled call); the broker's path, one
:meth:`EventTree.occur` per occurrence with constituents kept, is reported beside it.

    .venv/bin/python bench/composite.py [--arrivals 200000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tracemalloc

from semps.matcher.composite import EventTree, parse_definitions

PRIMS = [f"p{i}" for i in range(100)]


def definitions(n: int, rng: random.Random) -> str:
    names: list[str] = []
    lines = []
    for i in range(n):
        pool = PRIMS + names[-50:]
        op = rng.choice(["and", "or", "then", "all", "times", "no"])
        if op in ("and", "or", "then"):
            a, b = rng.sample(pool, 2)
            expr = f"{a} {op} {b}"
        else:
            a, b, c = rng.sample(pool, 3)
            expr = (
                f"{rng.randint(1, 3)} times {b} in {a}, {c}"
                if op == "times"
                else f"{op} {b} in {a}, {c}"
            )
        lines.append(f"create event c{i} = {expr} within 50s;")
        names.append(f"c{i}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="composite detection benchmark")
    parser.add_argument("--arrivals", type=int, default=200_000)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    rng = random.Random(1)
    stream = [rng.choice(PRIMS) for _ in range(args.arrivals)]
    warm = EventTree()  # load the compiled kernel before memory is traced
    warm.define(parse_definitions("create event w = a and b;"))
    warm.occur("a", 0.0, [])
    for n in (1_000, 10_000):
        text = definitions(n, rng)
        tracemalloc.start()
        tree = EventTree(constituents=False)
        tree.define(parse_definitions(text))
        tree.run([])  # build the compiled arrays too
        mem = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        rate, detections = 0.0, 0
        for _ in range(3):  # best of three fresh trees (the machine is shared and noisy)
            fresh = EventTree(constituents=False)
            fresh.define(parse_definitions(text))
            start = time.perf_counter()
            detections = len(fresh.run(stream).names)
            rate = max(rate, len(stream) / (time.perf_counter() - start))
        tree = EventTree()  # the broker's path: one call per occurrence, constituents kept
        tree.define(parse_definitions(text))
        per_call_n = min(len(stream), 20_000)
        start = time.perf_counter()
        for i, name in enumerate(stream[:per_call_n]):
            tree.occur(name, float(i), [{"event": name}])
        per_call = per_call_n / (time.perf_counter() - start)
        defs = parse_definitions(text)
        naive_n = 2000
        start = time.perf_counter()
        for name in stream[:naive_n]:  # the naive method: scan every definition per arrival
            for d in defs:
                if name in d.operands:
                    pass
        naive = naive_n / (time.perf_counter() - start)
        print(
            f"{n:>6} definitions: {rate:>10,.0f} arrivals/s batched, "
            f"{per_call:,.0f}/s one call each with constituents, "
            f"{detections / len(stream):.2f} detections/arrival, "
            f"{mem / n:,.0f} B/definition; naive scan alone {naive:,.0f} arrivals/s"
        )


if __name__ == "__main__":
    main()
