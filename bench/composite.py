"""Benchmark of composite detection (not a test): arrivals per second with 1,000 and 10,000
random definitions over 100 primitives, memory per definition, and the naive method
(re-evaluating every definition on each arrival). The headline figure runs the stream
through :meth:`EventTree.run` (one compiled call); the broker's path, one
:meth:`EventTree.occur` per occurrence with constituents kept, is reported beside it.

    .venv/bin/python bench/composite.py [--arrivals 200000]
    .venv/bin/python bench/composite.py --cli [--arrivals 200000] [--prev WORKTREE]

``--cli`` times ``semps composite run`` end to end on the same 1,000 definitions, with the
stream written as JSON lines: arrivals per second over the whole run, and the marginal rate
(a run over an empty stream subtracted: start-up and parsing the definitions), best and
worst of ``--repeat`` runs; ``--prev`` runs the same commands from another checkout.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from pathlib import Path

from _results import record  # bench/ is on the path: this file runs as a script

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


def main_cli(args: argparse.Namespace) -> None:
    """``semps composite run`` timed end to end (see the module doc)."""
    from cli_timing import best

    rng = random.Random(1)
    stream = [rng.choice(PRIMS) for _ in range(args.arrivals)]
    folder = Path(__file__).resolve().parent / "out" / "cli-composite"
    folder.mkdir(parents=True, exist_ok=True)
    defs = folder / "defs-1000.txt"
    defs.write_text(definitions(1_000, rng))
    path = folder / f"stream-{args.arrivals}.jsonl"
    path.write_text("".join(json.dumps({"event": name}) + "\n" for name in stream))
    empty = folder / "empty.jsonl"
    empty.write_text("")
    tree = EventTree(constituents=False)  # the in-process figure, same definitions
    tree.define(parse_definitions(defs.read_text()))
    tree.run([])
    start = time.perf_counter()
    detections = len(tree.run(stream).names)
    inproc = len(stream) / (time.perf_counter() - start)
    print(f"in process (EventTree.run): {inproc:,.0f} arrivals/s, {detections:,} detections")
    record("composite", {"definitions": 1_000, "mode": "in process, batched", "arrivals_s": inproc})
    for label, prev in (("this", None), ("prev", args.prev)):
        if label == "prev" and not prev:
            continue
        cmd = ["composite", "run", "--definitions", str(defs), "--stream"]
        base = best([*cmd, str(empty)], args.repeat, prev)
        full = best([*cmd, str(path)], args.repeat, prev)
        n = len(stream)
        print(
            f"semps composite run ({label} checkout): {n / full[1]:,.0f}-{n / full[0]:,.0f} "
            f"arrivals/s end to end ({full[0]:.2f}-{full[1]:.2f} s, start-up and definitions "
            f"{base[0]:.2f} s); marginal {n / (full[1] - base[0]):,.0f}-"
            f"{n / (full[0] - base[0]):,.0f} arrivals/s; by CPU time "
            f"{n / (full[4] - base[3]):,.0f}-{n / (full[3] - base[3]):,.0f} arrivals/s"
        )
        record(
            "composite",
            {
                "definitions": 1_000,
                "mode": "semps composite run",
                "arrivals": n,
                "arrivals_s": n / full[0],
                "arrivals_s_worst": n / full[1],
                "marginal_arrivals_s": n / (full[0] - base[0]),
                "startup_s": base[0],
            },
            checkout=Path(prev) if prev else Path(__file__).resolve().parents[1],
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="composite detection benchmark")
    parser.add_argument("--arrivals", type=int, default=200_000)
    parser.add_argument("--cli", action="store_true", help="time semps composite run")
    parser.add_argument("--repeat", type=int, default=2, help="--cli: runs per figure")
    parser.add_argument("--prev", default=None, help="--cli: a worktree of the previous commit")
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    if args.cli:
        main_cli(args)
        return
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
        record(
            "composite",
            {
                "definitions": n,
                "mode": "in process, batched",
                "arrivals_s": rate,
                "one_call_arrivals_s": per_call,
                "detections_per_arrival": detections / len(stream),
                "bytes_per_definition": mem / n,
                "naive_arrivals_s": naive,
            },
        )


if __name__ == "__main__":
    main()
