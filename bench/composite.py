"""Benchmark of composite detection (not a test): arrivals per second with 1,000 and 10,000
random definitions over 100 primitives, memory per definition, and the naive method
(re-evaluating every definition on each arrival).

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
    for n in (1_000, 10_000):
        text = definitions(n, rng)
        tracemalloc.start()
        tree = EventTree()
        tree.define(parse_definitions(text))
        mem = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        detections = 0
        start = time.perf_counter()
        for i, name in enumerate(stream):
            detections += len(tree.occur(name, float(i), []))
        rate = len(stream) / (time.perf_counter() - start)
        defs = parse_definitions(text)
        naive_n = 2000
        start = time.perf_counter()
        for name in stream[:naive_n]:  # the naive method: scan every definition per arrival
            for d in defs:
                if name in d.operands:
                    pass
        naive = naive_n / (time.perf_counter() - start)
        print(
            f"{n:>6} definitions: {rate:>10,.0f} arrivals/s, "
            f"{detections / len(stream):.2f} detections/arrival, "
            f"{mem / n:,.0f} B/definition; naive scan alone {naive:,.0f} arrivals/s"
        )


if __name__ == "__main__":
    main()
