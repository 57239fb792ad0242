"""Content and symmetric matching benchmarks: the HCEM paper's experiments, and region matching.

The paper's workload: n subscriptions of k constraints on distinct attributes out of m;
each constraint ``[low, low + w]`` with ``low`` uniform in ``[0, 1 - w]``; events give every
attribute a value uniform in ``[0, 1]``. Defaults: n = 1,000,000, m = 20, k = 10, w = 0.5,
b = 1000, batch 1000. Reports ms per event for the predicate table, REIN, HCEM single and
batched; insert and delete times; memory; and sweeps over b, batch size, n, k (m = 2k) and
w, each drawn as a PNG in ``bench/out/`` like the paper's figures. Symmetric: 150k update
regions x 150k subscription regions in d = 3 (the sweep), seconds and pairs found.

    .venv/bin/python bench/content.py            # the full run (about 15 minutes)
    .venv/bin/python bench/content.py --quick    # a small run (about a minute)
    .venv/bin/python bench/content.py --cli [--n 1000000] [--repeat 3] [--prev WORKTREE]
        [--prev-n N] [--modes hcem:1,hcem:1000] [--threads N] [--load] [--no-memory]
        [--hem5dd BINARY [--hem5dd-be 4,6]]

``--cli`` times ``semps content match`` end to end on generated JSONL files (the same
workload), per mode (``--modes``: algorithm and ``--batch``; by default one event at a time,
which HCEM matches with its cell bitsets, and batches of 1,000, one pass each): the
marginal cost per event with answers written (two runs with different event counts, so
the load, the first build and compilation cancel out; both start from a snapshot the
checkout wrote with ``semps content index``), as the min and median of ``--repeat``
runs, wall and CPU; the load from the snapshot (and, with ``--load``, from JSONL, with its
peak RSS per subscription). With ``--prev``, the same commands from another checkout
(``--prev-n`` subscriptions), alternating with this one run by run; the load average and
the machine's reference time (:mod:`_machine`) are noted before every round. With
``--hem5dd``, C++ HEM5DD on the same workload, beside the cell bitsets in this process on
the same events (see :func:`hem5dd_point`). The memory point loads 100k and ``--n``
subscriptions in process: bytes per subscription of the index arrays (HCEM's with and
without its cell bitsets) and of the resident set.

Times are the matching algorithms' own work on encoded events (slot arrays out); turning
slots into sorted id strings and Match objects is reported once, separately.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _results import record  # bench/ is on the path: this file runs as a script

from semps.matcher.content import HcemIndex, PredicateTableIndex, ReinIndex
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.index import CompiledIndex
from semps.matcher.symmetric import RegionIndex

OUT = Path(__file__).resolve().parent / "out"


def workload(
    n: int, m: int, k: int, w: float, seed: int = 1
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = np.argsort(rng.random((n, m)), axis=1)[:, :k].astype(np.int32)
    low = rng.random((n, k)) * (1 - w)
    bounds = np.stack([low, low + w], axis=2)
    return [f"s{i}" for i in range(n)], [f"a{j}" for j in range(m)], cols, bounds


def workload_arguments(parser: argparse.ArgumentParser, *, n: int, m: int, k: int) -> None:
    """The options of :func:`workload`'s sizes, with these defaults (``--w``: 0.5)."""
    parser.add_argument("--n", type=int, default=n, help="subscriptions")
    parser.add_argument("--m", type=int, default=m, help="attributes (the vocabulary)")
    parser.add_argument("--k", type=int, default=k, help="constraints per subscription")
    parser.add_argument("--w", type=float, default=0.5, help="width of each constraint")


def events(index: CompiledIndex, count: int, m: int, seed: int = 2) -> list:
    values = np.random.default_rng(seed).random((count, m))
    return [index.encode({f"a{j}": [row[j]] for j in range(m)}) for row in values]


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def build(cls: type[CompiledIndex], n: int, m: int, k: int, w: float, **options: int):  # type: ignore[no-untyped-def]
    index = cls(**options)
    ids, attrs, cols, bounds = workload(n, m, k, w)
    seconds = timed(lambda: (index.bulk_load(ids, attrs, cols, bounds), index.rebuild()))
    return index, seconds


def single_ms(index: CompiledIndex, evs: list, *, rein: bool = False) -> float:
    """ms per event, one at a time (``rein``: HCEM's REIN lists, as REIN matches)."""
    match = (lambda e: ReinIndex.match_encoded(index, e)) if rein else index.match_encoded
    match(evs[0])  # compile, warm caches
    seconds = timed(lambda: [match(e) for e in evs], repeat=2)
    return 1e3 * seconds / len(evs)


def batch_ms(index: CompiledIndex, evs: list, batch: int) -> float:
    index.match_encoded_batch(evs[: min(batch, 64)])
    chunks = [evs[i : i + batch] for i in range(0, len(evs), batch)]
    seconds = timed(lambda: [index.match_encoded_batch(c) for c in chunks], repeat=2)
    return 1e3 * seconds / len(evs)


def updates_us(index: CompiledIndex, count: int, m: int, k: int, w: float) -> dict[str, float]:
    """Per-subscription insert (into the delta) and delete times, and the amortised rebuild
    (the structure is rebuilt after ``delta_fraction * n`` inserts)."""
    rng = np.random.default_rng(9)
    subs = []
    for i in range(count):
        attrs = rng.choice(m, size=k, replace=False)
        lows = rng.random(k) * (1 - w)
        subs.append(
            ContentSubscription(
                f"new{i}",
                tuple(
                    Constraint(f"a{a}", "between", low=float(lo), high=float(lo) + w)
                    for a, lo in zip(attrs, lows, strict=True)
                ),
            )
        )
    insert = timed(lambda: [index.add(s) for s in subs]) / count
    delete = timed(lambda: [index.remove(s.id) for s in subs]) / count
    rebuild = timed(index.rebuild)
    per_rebuild = max(index.delta_min, index.delta_fraction * len(index))
    return {
        "insert_us": 1e6 * insert,
        "delete_us": 1e6 * delete,
        "rebuild_s": rebuild,
        "amortised_insert_us": 1e6 * (insert + rebuild / per_rebuild),
    }


def default_point(args: argparse.Namespace) -> dict[str, object]:
    n, m, k, w, b, batch = args.n, args.m, args.k, args.w, args.b, args.batch
    out: dict[str, object] = {"n": n, "m": m, "k": k, "w": w, "b": b, "batch": batch}
    out.update(_rein_point(args))
    gc.collect()
    out.update(_table_point(args))
    gc.collect()
    return out


def _rein_point(args: argparse.Namespace) -> dict[str, object]:
    n, m, k, w = args.n, args.m, args.k, args.w
    hcem, seconds = build(HcemIndex, n, m, k, w, buckets=args.b)
    evs = events(hcem, args.events, m)
    single = single_ms(hcem, evs[: args.single])
    rein = single_ms(hcem, evs[: args.single], rein=True)
    views = [{f"a{j}": [float(e.values[e.start[j]])] for j in range(m)} for e in evs[:100]]
    return {
        "rein_build_s": seconds,
        "rein_ms": rein,
        "hcem_single_ms": single,  # the cell bitsets
        "hcem_batch_ms": batch_ms(hcem, evs, args.batch),
        "matches_per_event": float(np.mean([len(hcem.match_encoded(e)) for e in evs[:20]])),
        "rein_memory_mb": hcem.memory() / 1e6,
        "rein_full_path_ms": 1e3 * timed(lambda: [hcem.match(v) for v in views]) / len(views),
        "rein_updates": updates_us(hcem, args.updates, m, k, w),
    }


def _table_point(args: argparse.Namespace) -> dict[str, object]:
    n, m, k, w = args.n, args.m, args.k, args.w
    table, seconds = build(PredicateTableIndex, n, m, k, w)
    return {
        "table_build_s": seconds,
        "table_ms": single_ms(table, events(table, args.single, m)),
        "table_memory_mb": table.memory() / 1e6,
        "table_updates": updates_us(table, args.updates, m, k, w),
    }


def sweep(
    name: str, values: list, point: Callable[[object], dict[str, float]]
) -> dict[str, object]:
    rows = []
    for v in values:
        row = {"value": v, **point(v)}
        print(
            f"  {name} = {v}: " + ", ".join(f"{k} {x:.3f}" for k, x in row.items() if k != "value")
        )
        rows.append(row)
        gc.collect()
    return {"parameter": name, "rows": rows}


def rein_hcem(
    args: argparse.Namespace, *, n: int, m: int, k: int, w: float, b: int, batch: int,
    table: bool = False,
) -> dict[str, float]:  # fmt: skip
    index, _ = build(HcemIndex, n, m, k, w, buckets=b)
    evs = events(index, args.events, m)
    out = {
        "REIN": single_ms(index, evs[: args.single], rein=True),
        "HCEM single (cell bitsets)": single_ms(index, evs[: args.single]),
        "HCEM batched": batch_ms(index, evs, batch),
    }
    del index
    if table:
        gc.collect()
        pt, _ = build(PredicateTableIndex, n, m, k, w)
        out["predicate table"] = single_ms(pt, events(pt, args.single, m))
    return out


def sweeps(args: argparse.Namespace) -> list[dict[str, object]]:
    base = {"n": args.n, "m": args.m, "k": args.k, "w": args.w, "b": args.b, "batch": args.batch}
    scale = args.n / 1_000_000
    ns = sorted({max(1000, int(x * scale)) for x in (125_000, 250_000, 500_000, 1_000_000)})

    def with_(**change: object) -> dict[str, object]:
        return {**base, **change}

    return [
        sweep("b", [100, 250, 500, 1000, 2000, 4000],
              lambda v: rein_hcem(args, **with_(b=v))),  # type: ignore[arg-type]
        sweep("batch", [1, 10, 100, 500, 1000, 2000],
              lambda v: rein_hcem(args, **with_(batch=v))),  # type: ignore[arg-type]
        sweep("n", ns, lambda v: rein_hcem(args, **with_(n=v), table=True)),  # type: ignore[arg-type]
        sweep("k (m = 2k)", [2, 5, 10, 15, 20],
              lambda v: rein_hcem(args, **with_(k=v, m=2 * v))),  # type: ignore[arg-type, operator]
        sweep("w", [0.1, 0.3, 0.5, 0.7, 0.9],
              lambda v: rein_hcem(args, **with_(w=v))),  # type: ignore[arg-type]
    ]  # fmt: skip


def plot(result: dict[str, object], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    assert isinstance(rows, list)
    name = str(result["parameter"])
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    xs = [r["value"] for r in rows]
    series_markers = (
        ("REIN", "o"), ("HCEM single (cell bitsets)", "D"), ("HCEM batched", "s"),
        ("predicate table", "^"),
    )  # fmt: skip
    for series, marker in series_markers:
        if series in rows[0]:
            ax.plot(xs, [r[series] for r in rows], marker=marker, label=series)
    ax.set_xlabel(name)
    ax.set_ylabel("matching time (ms / event)")
    if name in ("b", "batch", "n"):
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"matching time vs {name}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def symmetric(args: argparse.Namespace) -> dict[str, object]:
    """150k update regions x 150k subscription regions, d = 3 (a DDM workload):
    sides uniform in [0, 2 * side] inside the unit cube."""
    rng = np.random.default_rng(5)
    n, d = args.regions, 3

    def regions(count: int) -> np.ndarray:
        low = rng.random((count, d))
        side = rng.random((count, d)) * 2 * args.side
        return np.stack([low, np.minimum(1.0, low + side)], axis=2)

    subs, pubs = regions(n), regions(n)
    index = RegionIndex()
    attrs = ["x", "y", "z"]
    load = timed(lambda: index.bulk_load([f"s{i}" for i in range(n)], attrs, subs))
    as_dicts = [{a: (p[j, 0], p[j, 1]) for j, a in enumerate(attrs)} for p in pubs]
    index.match_batch_slots(as_dicts[:100])  # compile
    start = time.perf_counter()
    offsets, _slots = index.match_batch_slots(as_dicts)
    seconds = time.perf_counter() - start
    pairs = int(offsets[-1])
    # Check a sample against a vectorised brute force.
    sample = rng.choice(n, size=50, replace=False)
    for i in sample:
        p = pubs[i]
        want = np.all((subs[:, :, 0] <= p[:, 1]) & (subs[:, :, 1] >= p[:, 0]), axis=1).sum()
        assert offsets[i + 1] - offsets[i] == want
    single = timed(lambda: [index.match_slots(r) for r in as_dicts[:200]]) / 200
    return {
        "regions": n,
        "d": d,
        "side": args.side,
        "load_s": load,
        "sweep_s": seconds,
        "pairs": pairs,
        "single_publication_ms": 1e3 * single,
    }


def write_cli_files(
    folder: Path, n: int, m: int, k: int, w: float, counts: list[int]
) -> tuple[Path, dict[int, Path]]:
    """The workload as ``semps content match`` reads it (written once, then reused)."""
    import orjson

    folder.mkdir(parents=True, exist_ok=True)
    subs = folder / f"subs-{n}-{m}-{k}-{w}.jsonl"
    if not subs.exists():
        ids, attrs, cols, bounds = workload(n, m, k, w)
        with open(subs.with_suffix(".tmp"), "wb") as out:
            for first in range(0, n, 100_000):
                lines = []
                for i in range(first, min(n, first + 100_000)):
                    constraints = [
                        {"attr": attrs[a], "op": "between", "low": lo, "high": hi}
                        for a, (lo, hi) in zip(cols[i].tolist(), bounds[i].tolist(), strict=True)
                    ]
                    lines.append(orjson.dumps({"id": ids[i], "constraints": constraints}))
                out.write(b"\n".join(lines) + b"\n")
        subs.with_suffix(".tmp").rename(subs)
    values = np.random.default_rng(2).random((max(counts), m))
    paths = {}
    for count in counts:
        path = paths[count] = folder / f"events-{count}-{m}.jsonl"
        if not path.exists():
            path.write_bytes(
                b"".join(
                    orjson.dumps(
                        {"id": f"e{i}", "values": {f"a{j}": float(values[i, j]) for j in range(m)}}
                    )
                    + b"\n"
                    for i in range(count)
                )
            )
    return subs, paths


def _runs(args: list[str], repeat: int, prev: str | None) -> dict[str, float]:
    """``repeat`` fresh runs of ``semps args``: min and median wall and CPU seconds, and
    the largest peak RSS (the machine is shared: the min is the least disturbed run)."""
    from statistics import median

    from cli_timing import samples

    walls, cpus, rss = samples(args, repeat, prev)
    return {
        "wall_min": min(walls), "wall_median": median(walls),
        "cpu_min": min(cpus), "cpu_median": median(cpus), "peak_rss_mb": rss / 1e6,
    }  # fmt: skip


def mode_counts(batch: int) -> tuple[int, int]:
    """Event counts of the two runs whose difference gives a mode's marginal cost: enough
    events between them (seconds of work) that the snapshot load's own variance (about
    half a second at n = 1M) is small beside it. Both checkouts run the same counts (the
    commit before matched single events with the cell bitsets too, not REIN)."""
    if batch >= 100:
        return (1000, 21000)
    return (500, 10500)


def cli_modes(args: argparse.Namespace) -> list[tuple[str, int]]:
    """``--modes``: (algorithm, batch) pairs, e.g. ``hcem:1,hcem:1000``."""
    out = []
    for item in args.modes.split(","):
        algorithm, _, batch = item.partition(":")
        out.append((algorithm, int(batch or args.batch)))
    return out


def cli_point(
    args: argparse.Namespace, checkouts: list[tuple[str, int, str | None]]
) -> dict[str, object]:
    """``semps content match`` per mode (algorithm and ``--batch``) and checkout, timed end to
    end: two runs with different event counts from the checkout's own snapshot, their
    difference per event (the load, the first build and compilation cancel out). The
    checkouts alternate run by run, ``--repeat`` rounds, so the machine's drift touches
    them alike; the load average is noted before every round."""
    modes = cli_modes(args)
    counts = sorted({0, *(c for _, b in modes for c in mode_counts(b))})
    folder = OUT / "cli-content"
    snapshots: dict[tuple[str, str], Path] = {}
    events: dict[int, Path] = {}
    out: dict[str, object] = {"repeat": args.repeat, "threads": args.threads, "modes": {}}
    for label, n, prev in checkouts:
        subs, events = write_cli_files(folder, n, args.m, args.k, args.w, counts)
        for algorithm in sorted({a for a, _ in modes}):
            snap = snapshot_point(args, algorithm, subs, events[0], prev)
            snapshots[label, algorithm] = Path(str(snap.pop("path")))
            out[f"{label}_{algorithm}_snapshot"] = snap
            if args.load:
                out[f"{label}_{algorithm}_jsonl"] = jsonl_load(args, algorithm, subs, n, prev)
    rounds: dict[str, dict[str, list[tuple[float, float]]]] = {}
    loads = []
    for r in range(args.repeat):
        loads.append(_load_note(f"round {r + 1}"))
        for algorithm, batch in modes:
            for label, _n, prev in checkouts:
                key = f"{label} {algorithm} --batch {batch}"
                for count in mode_counts(batch):
                    cmd = [
                        "content", "match", "--batch", str(batch),
                        "--index", str(snapshots[label, algorithm]),
                        "--events", str(events[count]), *_threads(args),
                    ]  # fmt: skip
                    rounds.setdefault(key, {}).setdefault(str(count), []).append(_one(cmd, prev))
    loads.append(_load_note("end"))
    out["load_average"] = loads
    for key, by_count in rounds.items():
        few, many = sorted(by_count, key=int)
        marginal = _marginal(by_count[few], by_count[many], int(many) - int(few))
        out["modes"][key] = marginal  # type: ignore[index]
        print(f"  {key}: {json.dumps(marginal)}")
        label, algorithm, _, batch = key.split()
        n, prev = next((c[1], c[2]) for c in checkouts if c[0] == label)
        snap = out[f"{label}_{algorithm}_snapshot"]
        record(
            "content",
            {
                "mode": f"semps content match --batch {batch}",
                "n": n,
                "algorithm": algorithm,
                "ms_per_event_wall": marginal["wall_min"],
                "ms_per_event_cpu": marginal["cpu_min"],
                "load_snapshot_s_wall": snap["load"]["wall_min"],  # type: ignore[index]
            },
            checkout=Path(prev) if prev else Path(__file__).resolve().parents[1],
        )
    return out


def _threads(args: argparse.Namespace) -> list[str]:
    return [] if args.threads is None else ["--threads", str(args.threads)]


def _one(cmd: list[str], prev: str | None) -> tuple[float, float]:
    from cli_timing import run

    wall, cpu, _ = run(cmd, prev)
    return wall, cpu


def _marginal(
    few: list[tuple[float, float]], many: list[tuple[float, float]], extra: int
) -> dict[str, float]:
    """ms per event from the fastest (and the median) runs of each count, wall and CPU."""
    from statistics import median

    out = {}
    for i, name in enumerate(("wall", "cpu")):
        a, b = [x[i] for x in few], [x[i] for x in many]
        out[f"{name}_min"] = 1e3 * (min(b) - min(a)) / extra
        out[f"{name}_median"] = 1e3 * (median(b) - median(a)) / extra
    return out


def _load_note(label: str) -> dict[str, object]:
    """The load average and the machine's reference time (:mod:`_machine`), printed."""
    import os

    from _machine import reference_ms

    one, five, fifteen = os.getloadavg()
    note = {"at": label, "time": time.strftime("%H:%M:%S"), "loadavg": [one, five, fifteen],
            "reference_ms": round(reference_ms(), 1)}  # fmt: skip
    print(f"  {label}: {json.dumps(note)}", flush=True)
    return note


def jsonl_load(
    args: argparse.Namespace, algorithm: str, subs: Path, n: int, prev: str | None
) -> dict[str, object]:
    """The load from JSONL (a run with no events): start-up, reading, validating, indexing."""
    _, events = write_cli_files(OUT / "cli-content", n, args.m, args.k, args.w, [0])
    cmd = ["content", "match", "--algorithm", algorithm, "--buckets", str(args.b),
           "--subscriptions", str(subs), "--events", str(events[0]), *_threads(args)]  # fmt: skip
    load = _runs(cmd, args.repeat, prev)
    return {"load": load, "peak_rss_B_per_subscription": load["peak_rss_mb"] * 1e6 / n}


def hem5dd_point(args: argparse.Namespace) -> dict[str, object]:
    """C++ HEM5DD (shiwanghua/HEM) on the same workload, one event at a time, timed by the
    binary ``--hem5dd`` around each match: a driver built outside semps that reads the file
    written here and prints one JSON line. The file: int32 ``n, m, k, events, domain``,
    then the attributes (``n x k``), the lows and the highs, then the events' values
    (``events x m``); every value as ``floor(x * domain)``, the integer domain HEM uses."""
    import subprocess

    n, m, k, count, dom = args.n, args.m, args.k, args.hem5dd_events, 1_000_000
    path = OUT / "cli-content" / f"hem5dd-{n}-{m}-{k}-{args.w}-{count}.bin"
    if not path.exists():
        _, _, cols, bounds = workload(n, m, k, args.w)
        values = np.random.default_rng(2).random((count, m))

        def grid(x: np.ndarray) -> np.ndarray:
            return np.clip(np.floor(x * dom), 0, dom - 1).astype(np.int32)

        with open(path, "wb") as out:
            np.array([n, m, k, count, dom], np.int32).tofile(out)
            cols.astype(np.int32).tofile(out)
            grid(bounds[..., 0]).tofile(out)
            grid(bounds[..., 1]).tofile(out)
            grid(values).tofile(out)
    runs = []
    for be in args.hem5dd_be.split(","):
        for _ in range(args.repeat):
            _load_note(f"hem5dd be={be}")
            done = subprocess.run([args.hem5dd, str(path), be], capture_output=True, check=True)
            runs.append(json.loads(done.stdout.decode().strip().splitlines()[-1]))
            print(f"  hem5dd: {json.dumps(runs[-1])}", flush=True)
    return {"runs": runs}


def in_process_point(args: argparse.Namespace) -> dict[str, object]:
    """The cell bitsets one event at a time in this process, on the events HEM5DD matches
    (the same draws as real numbers): the kernel's own cost, as the binary times its own."""
    from semps.matcher.kernels import set_threads

    set_threads(1)
    index, _ = build(HcemIndex, args.n, args.m, args.k, args.w, buckets=args.b)
    values = np.random.default_rng(2).random((args.hem5dd_events, args.m))
    evs = [index.encode({f"a{j}": [row[j]] for j in range(args.m)}) for row in values]
    index.match_encoded(evs[0])  # the cell bitsets built, the kernel compiled
    runs = []
    for _ in range(args.repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        found = sum(len(index.match_encoded(e)) for e in evs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        note = _load_note("in process")
        runs.append(
            {"wall_ms": 1e3 * wall / len(evs), "cpu_ms": 1e3 * cpu / len(evs),
             "matches_per_event": found / len(evs), **note}
        )  # fmt: skip
    cells = index.cell_bitsets()
    return {
        "runs": runs,
        "cells_B_per_subscription": cells.nbytes() / args.n,
        "cells_rows": cells.rows,
        "index_B_per_subscription": index.memory() / args.n,
    }


def snapshot_point(
    args: argparse.Namespace, algorithm: str, subs: Path, no_events: Path, prev: str | None
) -> dict[str, object]:
    """``semps content index`` of the checkout once, then the load from the snapshot (a
    run with no events), ``--repeat`` times; ``path``: the snapshot."""
    from cli_timing import run

    label = "prev" if prev else "this"
    snap = OUT / "cli-content" / f"index-{algorithm}-{subs.stem}-{label}.npz"
    build = run(
        ["content", "index", "--algorithm", algorithm, "--buckets", str(args.b),
         "--subscriptions", str(subs), "--output", str(snap)], prev,
    )  # fmt: skip
    load = _runs(["content", "match", "--index", str(snap), "--events", str(no_events)],
                 args.repeat, prev)  # fmt: skip
    return {"index_s": build[0], "file_mb": snap.stat().st_size / 1e6, "load": load,
            "path": snap}  # fmt: skip


def memory_point(args: argparse.Namespace, n: int) -> dict[str, float]:
    """Bytes per subscription once ``n`` are loaded from JSONL (as the CLI loads them) and
    built: the index's arrays, and this process's resident set grew by (ids, id dict too)."""
    import os

    from semps.cli.content import load_bulk

    def rss() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    subs, _ = write_cli_files(OUT / "cli-content", n, args.m, args.k, args.w, [0])
    out = {}
    for cls in (HcemIndex, ReinIndex, PredicateTableIndex):
        gc.collect()
        before = rss()
        index = cls(**({} if cls is PredicateTableIndex else {"buckets": args.b}))  # type: ignore[arg-type]
        load_bulk(subs, index, workers=1)
        index.rebuild()
        if isinstance(index, HcemIndex):
            out["hcem_without_cells_arrays_B"] = index.memory() / n
            index.cell_bitsets()  # built at the first small batch
        gc.collect()
        out[f"{cls.name}_arrays_B"] = index.memory() / n
        out[f"{cls.name}_rss_B"] = (rss() - before) / n
        del index
    return out


def main_cli(args: argparse.Namespace) -> None:
    """``--cli``: this checkout at ``--n``, the previous one (``--prev``) at ``--prev-n``."""
    checkouts: list[tuple[str, int, str | None]] = [("this", args.n, None)]
    if args.prev:
        checkouts.append(("prev", args.prev_n, args.prev))
    print(f"semps content match: {', '.join(f'{c[0]} n = {c[1]:,}' for c in checkouts)}")
    report: dict[str, object] = {"cli": cli_point(args, checkouts)}
    gc.collect()
    if args.hem5dd:
        report["hem5dd"] = hem5dd = hem5dd_point(args)
        report["in_process"] = ours = in_process_point(args)
        print(f"  in process: {json.dumps(ours)}")
        hem_ms = [r["ms_per_event"] for r in hem5dd["runs"]]  # type: ignore[attr-defined]
        cells_ms = [r["wall_ms"] for r in ours["runs"]]  # type: ignore[attr-defined]
        record(
            "content",
            {
                "mode": "one event at a time, in process, beside C++ HEM5DD",
                "n": args.n,
                "algorithm": "hcem",
                "ms_per_event_wall": min(cells_ms),
                "ms_per_event_cpu": min(r["cpu_ms"] for r in ours["runs"]),  # type: ignore[attr-defined]
                "hem5dd_ms": min(hem_ms),
                "cells_B_per_subscription": ours["cells_B_per_subscription"],
            },
        )
        gc.collect()
    if not args.no_memory:
        report["memory"] = {n: memory_point(args, n) for n in sorted({100_000, args.n})}
        print(json.dumps(report["memory"], indent=2))
    path = OUT / f"content-cli-{args.n}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"wrote {path}")


def _columns(section: object, names: tuple[str, ...]) -> dict[str, object]:
    """The named figures of a report's section, as columns of its results row."""
    return {name: section[name] for name in names}  # type: ignore[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    workload_arguments(parser, n=1_000_000, m=20, k=10)
    parser.add_argument("--b", type=int, default=1000, help="REIN/HCEM buckets per list")
    parser.add_argument("--batch", type=int, default=1000, help="events matched together (HCEM)")
    parser.add_argument("--events", type=int, default=2000, help="events per batched measure")
    parser.add_argument("--single", type=int, default=100, help="events per single measure")
    parser.add_argument("--updates", type=int, default=2000, help="inserts/deletes timed")
    parser.add_argument("--regions", type=int, default=150_000)
    parser.add_argument("--side", type=float, default=0.01, help="mean region side (unit cube)")
    parser.add_argument("--no-sweeps", action="store_true", help="default point and symmetric only")
    parser.add_argument("--cli", action="store_true", help="time semps content match end to end")
    parser.add_argument("--repeat", type=int, default=3, help="--cli: runs per figure")
    parser.add_argument("--prev", default=None, help="--cli: a worktree of the previous commit")
    parser.add_argument("--prev-n", type=int, default=100_000, help="--cli: n for --prev")
    parser.add_argument(
        "--modes",
        default="hcem:1,hcem:1000",
        help="--cli: algorithm:batch pairs, comma-separated (default: one event at a time and "
        "batches of 1,000)",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="--cli: semps content match --threads"
    )
    parser.add_argument(
        "--load", action="store_true", help="--cli: also time the load from JSONL (slow)"
    )
    parser.add_argument("--no-memory", action="store_true", help="--cli: skip the memory point")
    parser.add_argument(
        "--hem5dd",
        default=None,
        help="--cli: a HEM5DD driver binary to run side by side (see hem5dd_point)",
    )
    parser.add_argument("--hem5dd-be", default="4", help="--cli: HEM5DD bit exponents (comma)")
    parser.add_argument(
        "--hem5dd-events", type=int, default=2000, help="--cli: events HEM5DD matches"
    )
    args = parser.parse_args()
    if args.cli:
        OUT.mkdir(exist_ok=True)
        main_cli(args)
        return
    if args.quick:
        args.n, args.events, args.single, args.updates, args.regions = 50_000, 500, 30, 300, 20_000
    OUT.mkdir(exist_ok=True)
    report: dict[str, object] = {}
    print(f"default point (n = {args.n:,}, m = {args.m}, k = {args.k}, w = {args.w}, b = {args.b})")
    report["default"] = default_point(args)
    print(json.dumps(report["default"], indent=2))
    default = ("rein_ms", "hcem_single_ms", "hcem_batch_ms", "table_ms", "rein_build_s")
    default += ("table_build_s", "rein_memory_mb", "table_memory_mb")
    row = {"mode": "in process", "n": args.n, **_columns(report["default"], default)}
    record("content", row)
    print("symmetric")
    report["symmetric"] = symmetric(args)
    print(json.dumps(report["symmetric"], indent=2))
    sweep = ("sweep_s", "pairs", "single_publication_ms")
    regions = report["symmetric"]
    row = {"mode": "symmetric sweep", "n": regions["regions"], **_columns(regions, sweep)}  # type: ignore[index]
    record("content", row)
    if not args.no_sweeps:
        report["sweeps"] = sweeps(args)
        for result in report["sweeps"]:  # type: ignore[attr-defined]
            name = str(result["parameter"]).split()[0]
            plot(result, OUT / f"content-{name}.png")
    suffix = ("-quick" if args.quick else "") + ("-default" if args.no_sweeps else "")
    (OUT / f"content{suffix}.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {OUT}/content{suffix}.json and the sweep plots content-*.png")


if __name__ == "__main__":
    main()
