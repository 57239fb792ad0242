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
        [--spark-only] [--cluster-session SID]

    # lubm-bulk with the lubm-u0 subscriptions (events 4x)
    .venv/bin/python bench/spark.py ../shared/workloads/lubm-u0 \\
        --events-from ../shared/workloads/lubm-bulk/events --copies 4
    # the 100k-subscription workload
    .venv/bin/python bench/semantic_workload.py write /tmp/w100k --subs 100000 --events 16000
    .venv/bin/python bench/spark.py /tmp/w100k
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
    """A folder of links to ``source``'s files (``copies`` times each), or its first half."""
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


def timed(command: list[str], cluster: int | None) -> Measured:
    done = measured(command, cluster=cluster)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", type=Path, help="folder with ontology.owl and subscriptions/")
    parser.add_argument("--events-from", type=Path, help="events folder (default CASE/events)")
    parser.add_argument("--copies", type=int, default=1, help="link each event file K times")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--spark-arg", action="append", default=[], help="extra spark match arg")
    parser.add_argument("--repeat", type=int, default=1, help="runs per point (best kept)")
    parser.add_argument("--spark-only", action="store_true", help="skip the in-process runs")
    parser.add_argument(
        "--cluster-session",
        type=int,
        help="session id of a standalone cluster's daemons here: its executors' CPU counts",
    )
    args = parser.parse_args()
    source = args.events_from or args.case / "events"
    print(f"command: {' '.join(sys.argv)}", flush=True)
    base = [
        "--ontology", str(args.case / "ontology.owl"),
        "--subscriptions", str(args.case / "subscriptions"),
    ]  # fmt: skip
    spark_args = [a for extra in args.spark_arg for a in extra.split("=", 1)]
    with tempfile.TemporaryDirectory() as tmp:
        folders = {
            "N": events_folder(source, Path(tmp) / "all", args.copies, half=False),
            "N/2": events_folder(source, Path(tmp) / "half", args.copies, half=True),
        }
        counts = {k: len(list(f.iterdir())) for k, f in folders.items()}
        commands = {
            "in process (semps match --workers 1)": [SEMPS, "match", *base, "--workers", "1"],
            f"spark ({args.master})": [
                SEMPS,
                "spark",
                "match",
                *base,
                "--master",
                args.master,
                *spark_args,
            ],  # fmt: skip
        }
        if args.spark_only:
            del commands["in process (semps match --workers 1)"]
        print(f"{'command':<40} {'events':>7} {'seconds':>8} {'cpu s':>8} {'events/s':>9}  load",
              flush=True)  # fmt: skip
        marginal: dict[str, float] = {}
        answers: dict[str, str] = {}
        for label, command in commands.items():
            runs: dict[str, Measured] = {}
            for point, folder in folders.items():
                tries = [
                    timed([*command, "--events", str(folder)], args.cluster_session)
                    for _ in range(args.repeat)
                ]
                best = runs[point] = min(tries)
                answers.setdefault(point, best.stdout)
                same = "" if best.stdout == answers[point] else differ(answers[point], best)
                rate = counts[point] / best.seconds
                print(f"{label:<40} {counts[point]:>7} {best.seconds:>8.1f} {best.cpu:>8.1f} "
                      f"{rate:>9.1f}  {load_average()}{same}  (cpu: {best.split()})",
                      flush=True)  # fmt: skip
            extra = counts["N"] - counts["N/2"]
            gap = runs["N"].seconds - runs["N/2"].seconds
            cpu_gap = runs["N"].cpu - runs["N/2"].cpu
            marginal[label] = extra / gap if gap > 0 else float("inf")
            print(f"{label:<40} {'marginal':>7} {gap:>8.1f} {cpu_gap:>8.1f} "
                  f"{marginal[label]:>9.1f}  ({1000 * cpu_gap / extra:.0f} ms CPU an event)",
                  flush=True)  # fmt: skip
            record(
                "spark",
                {
                    "case": args.case.name,
                    "command_run": label,
                    "events_n": counts["N"],
                    "seconds_n": runs["N"].seconds,
                    "cpu_s_n": runs["N"].cpu,
                    "seconds_half": runs["N/2"].seconds,
                    "cpu_s_half": runs["N/2"].cpu,
                    "marginal_events_s": marginal[label],
                    "marginal_cpu_ms_per_event": 1000 * cpu_gap / extra,
                },
            )
        if len(marginal) == 2:
            inproc, spark = marginal.values()
            print(f"marginal speed-up, spark / in process: {spark / inproc:.2f}x", flush=True)


if __name__ == "__main__":
    main()
