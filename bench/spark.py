"""Spark against one process, side by side, on the same case (not a test; nothing asserted).

For a case folder (``ontology.owl``, ``subscriptions/``, ``events/``), each command line is
run end to end, as a user runs it, at two event counts, N and N/2 (the first half of the
files, sorted by name; ``--copies K`` first makes N = K x the files by linking each file K
times under new names, so lubm-bulk's 78 documents become 312 events):

- in process: ``semps match --workers 1`` (one core);
- Spark: ``semps spark match --master local[2]`` (or ``--master URL`` and any extra
  ``--spark-arg``, e.g. a standalone cluster with ``--py-files``).

Each run's answers are checked equal to the in-process ones. The **marginal rate** of a
command is (N - N/2) / (seconds at N - seconds at N/2): the fixed costs (JVM start, loading
the ontology and subscriptions, each Python worker's index build and numba kernels) cancel
out, leaving the events/s of matching itself, which is what a long replay approaches. The
ratio Spark / in process of marginal rates is the speed-up from the extra core(s). Each
run also gives the CPU seconds of its whole process tree (``spark_cpu.py``: driver, JVMs,
Python workers, and with ``--cluster-session SID`` a local standalone cluster's executors)
and the load average, and the marginal CPU an event: on a shared machine the wall figures
follow the load, the CPU ones much less.

    .venv/bin/python bench/spark.py CASE [--events-from DIR] [--copies K]
        [--master local[2]] [--spark-arg=--py-files=dist/semps-0.1.0.zip ...] [--repeat 1]
        [--spark-only] [--cluster-session SID] [--placement none,mined] [--partitions 16]
        [--min-support 0.005] [--prev CHECKOUT]
    .venv/bin/python bench/spark.py write-content DIR [--n 100000] [--m 200] [--k 2]
        [--per-event 3] [--events 20000] [--w 0.5]

``--placement none,mined`` runs the Spark command once per placement (``--partitions``,
``--min-support`` passed to the mined one), alternating point by point, answers checked
equal; with ``--prev``, the mined one also from that checkout (the commit before, run with
``PYTHONPATH=CHECKOUT``). ``write-content`` writes a narrow-event content case
(``subscriptions.jsonl``: bench/content.py's workload, n subscriptions of k constraints
of width w over m attributes; ``events.jsonl``: each event ``--per-event`` attributes
drawn from the m, the shape of telemetry); a case with ``subscriptions.jsonl`` runs Spark
only (no ontology).

    # lubm-bulk with the lubm-u0 subscriptions (events 4x)
    .venv/bin/python bench/spark.py ../shared/workloads/lubm-u0 \\
        --events-from ../shared/workloads/lubm-bulk/events --copies 4
    # the 100k-subscription workload
    .venv/bin/python bench/semantic_workload.py write /tmp/w100k --subs 100000 --events 16000
    .venv/bin/python bench/spark.py /tmp/w100k
    # placement against broadcast, on narrow events (3 of 200 attributes)
    .venv/bin/python bench/spark.py write-content /tmp/narrow --n 100000 --events 20000
    .venv/bin/python bench/spark.py /tmp/narrow --placement none,mined
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _results import record
from spark_cpu import Measured, load_average, measured

SEMPS = str(Path(sys.executable).with_name("semps"))


def events_folder(source: Path, into: Path, copies: int, half: bool) -> Path:
    """A folder of links to ``source``'s files (``copies`` times each), or its first half;
    for a JSON-lines file, a file of its lines (or their first half)."""
    if source.is_file():
        lines = source.read_bytes().splitlines(keepends=True)
        into.parent.mkdir(parents=True, exist_ok=True)
        target = into.with_suffix(".jsonl")
        target.write_bytes(b"".join(lines[: len(lines) // 2] if half else lines))
        return target
    files = sorted(p for p in source.iterdir() if p.is_file())
    linked = [(f"{p.stem}-c{c}{p.suffix}" if copies > 1 else p.name, p)
              for c in range(copies) for p in files]  # fmt: skip
    linked.sort()
    if half:
        linked = linked[: len(linked) // 2]
    into.mkdir(parents=True)
    for name, target in linked:
        os.symlink(target.resolve(), into / name)
    return into


def count_events(path: Path) -> int:
    """Events in a folder (one a file) or a JSON-lines file (one a line)."""
    if path.is_file():
        return sum(1 for line in path.read_bytes().splitlines() if line.strip())
    return len(list(path.iterdir()))


def write_content(argv: list[str]) -> None:
    """A narrow-event content case: bench/content.py's subscriptions, events carrying
    ``--per-event`` of the ``--m`` attributes each."""
    import numpy as np
    import orjson
    from content import workload, workload_arguments

    parser = argparse.ArgumentParser(prog="spark.py write-content")
    parser.add_argument("folder", type=Path)
    workload_arguments(parser, n=100_000, m=200, k=2)
    parser.add_argument("--per-event", type=int, default=3, help="attributes per event")
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    ids, attrs, cols, bounds = workload(args.n, args.m, args.k, args.w)
    with open(args.folder / "subscriptions.jsonl", "wb") as out:
        for i, sub_id in enumerate(ids):
            constraints = [
                {"attr": attrs[a], "op": "between", "low": lo, "high": hi}
                for a, (lo, hi) in zip(cols[i].tolist(), bounds[i].tolist(), strict=True)
            ]
            out.write(orjson.dumps({"id": sub_id, "constraints": constraints}) + b"\n")
    rng = np.random.default_rng(2)
    chosen = np.argsort(rng.random((args.events, args.m)), axis=1)[:, : args.per_event]
    values = rng.random((args.events, args.per_event))
    with open(args.folder / "events.jsonl", "wb") as out:
        for i in range(args.events):
            readings = {attrs[a]: float(v) for a, v in zip(chosen[i], values[i], strict=True)}
            out.write(orjson.dumps({"id": f"e{i:06d}", "values": readings}) + b"\n")
    print(f"{args.n} subscriptions (k {args.k} of m {args.m}), {args.events} events "
          f"of {args.per_event} attributes in {args.folder}")  # fmt: skip


def timed(command: list[str], cluster: int | None, prev: Path | None = None) -> Measured:
    """``command`` measured; with ``prev``, run from that checkout (``python -m semps``)."""
    env = None
    if prev is not None and command[0] == SEMPS:
        env = {**os.environ, "PYTHONPATH": str(prev.resolve())}
        command = [sys.executable, "-m", "semps", *command[1:]]
    done = measured(command, env=env, cluster=cluster)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    return done


def differ(expected: str, got: Measured) -> str:
    """A note on answers that differ from the first command's, both kept to compare."""
    pairs = zip(expected.splitlines(), got.stdout.splitlines(), strict=False)
    first = next((n for n, (a, b) in enumerate(pairs) if a != b), None)
    kept = Path(tempfile.mkdtemp(prefix="semps-bench-spark-"))
    (kept / "expected.jsonl").write_text(expected)
    (kept / "got.jsonl").write_text(got.stdout)
    (kept / "stderr.txt").write_text(got.stderr)
    where = "in length" if first is None else f"from line {first + 1}"
    return f"  ANSWERS DIFFER {where} (both in {kept})"


def case_inputs(case: Path, events_from: Path | None) -> tuple[list[str], Path, bool]:
    """The ``semps match`` arguments of a case's ontology and subscriptions, its events,
    and whether it is RDF (``subscriptions/`` of .rq files) or content (JSON lines)."""
    rdf = (case / "subscriptions").is_dir()
    base = ["--subscriptions", str(case / ("subscriptions" if rdf else "subscriptions.jsonl"))]
    if (case / "ontology.owl").exists():
        base = ["--ontology", str(case / "ontology.owl"), *base]
    events = events_from or case / ("events" if (case / "events").is_dir() else "events.jsonl")
    return base, events, rdf


def spark_commands(args: argparse.Namespace, base: list[str]) -> dict[str, list[str]]:
    """The ``semps spark match`` command line of each ``--placement`` asked for."""
    extra = [a for more in args.spark_arg for a in more.split("=", 1)]
    command = [SEMPS, "spark", "match", *base, "--master", args.master, *extra]
    placements = args.placement.split(",") if args.placement else []
    if not placements:
        return {f"spark ({args.master})": command}
    found = {}
    for placement in placements:
        options = ["--placement", placement]
        if placement == "mined":
            options += ["--partitions", str(args.partitions), "--min-support", args.min_support]
        found[f"spark ({args.master}, {placement})"] = [*command, *options]
        if args.prev and placement == "mined":
            found[f"prev spark ({args.master}, {placement})"] = [*command, *options]
    return found


def main() -> None:
    if sys.argv[1:2] == ["write-content"]:
        write_content(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", type=Path, help="folder with ontology.owl and subscriptions/")
    parser.add_argument("--events-from", type=Path, help="events folder (default CASE/events)")
    parser.add_argument("--copies", type=int, default=1, help="link each event file K times")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--spark-arg", action="append", default=[], help="extra spark match arg")
    parser.add_argument("--repeat", type=int, default=1, help="runs per point (best kept)")
    parser.add_argument("--spark-only", action="store_true", help="skip the in-process runs")
    parser.add_argument("--placement", help="placements to run, e.g. none,mined")
    parser.add_argument("--partitions", type=int, default=16, help="mined placement partitions")
    parser.add_argument("--min-support", default="0.005", help="mined placement support")
    parser.add_argument("--prev", type=Path, help="checkout of the commit before (mined runs)")
    parser.add_argument(
        "--cluster-session",
        type=int,
        help="session id of a standalone cluster's daemons here: its executors' CPU counts",
    )
    args = parser.parse_args()
    base, source, rdf = case_inputs(args.case, args.events_from)
    print(f"command: {' '.join(sys.argv)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folders = {
            "N": events_folder(source, Path(tmp) / "all", args.copies, half=False),
            "N/2": events_folder(source, Path(tmp) / "half", args.copies, half=True),
        }
        counts = {k: count_events(f) for k, f in folders.items()}
        commands = {}
        if rdf and not args.spark_only:
            inproc = [SEMPS, "match", *base, "--workers", "1"]
            commands["in process (semps match --workers 1)"] = inproc
        commands.update(spark_commands(args, base))
        print(f"{'command':<40} {'events':>7} {'seconds':>8} {'cpu s':>8} {'events/s':>9}  load",
              flush=True)  # fmt: skip
        runs: dict[str, dict[str, Measured]] = {label: {} for label in commands}
        answers: dict[str, str] = {}
        for point, folder in folders.items():  # each point's commands one after the other
            for label, command in commands.items():
                tries = [
                    timed(
                        [*command, "--events", str(folder)],
                        args.cluster_session,
                        args.prev if label.startswith("prev ") else None,
                    )
                    for _ in range(args.repeat)
                ]
                best = runs[label][point] = min(tries)
                answers.setdefault(point, best.stdout)
                same = "" if best.stdout == answers[point] else differ(answers[point], best)
                rate = counts[point] / best.seconds
                print(f"{label:<40} {counts[point]:>7} {best.seconds:>8.1f} {best.cpu:>8.1f} "
                      f"{rate:>9.1f}  {load_average()}{same}  (cpu: {best.split()})",
                      flush=True)  # fmt: skip
        marginal = {label: report(args.case.name, label, runs[label], counts) for label in runs}
        first, *others = marginal.items()
        for label, rate in others:
            print(f"marginal speed-up, {label} / {first[0]}: {rate / first[1]:.2f}x", flush=True)


def report(case: str, label: str, runs: dict[str, Measured], counts: dict[str, int]) -> float:
    """Print and record one command's marginal rate (events/s) and CPU an event."""
    extra = counts["N"] - counts["N/2"]
    gap = runs["N"].seconds - runs["N/2"].seconds
    cpu_gap = runs["N"].cpu - runs["N/2"].cpu
    rate = extra / gap if gap > 0 else float("inf")
    print(f"{label:<40} {'marginal':>7} {gap:>8.1f} {cpu_gap:>8.1f} "
          f"{rate:>9.1f}  ({1000 * cpu_gap / extra:.0f} ms CPU an event)",
          flush=True)  # fmt: skip
    record(
        "spark",
        {
            "case": case,
            "command_run": label,
            "events_n": counts["N"],
            "seconds_n": runs["N"].seconds,
            "cpu_s_n": runs["N"].cpu,
            "seconds_half": runs["N/2"].seconds,
            "cpu_s_half": runs["N/2"].cpu,
            "marginal_events_s": rate,
            "marginal_cpu_ms_per_event": 1000 * cpu_gap / extra,
        },
    )
    return rate


if __name__ == "__main__":
    main()
