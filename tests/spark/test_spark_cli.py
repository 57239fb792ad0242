"""``semps spark`` from the command line, each run starting its own local Spark."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from semps_test_support import workload_options

pytestmark = pytest.mark.spark


def semps(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", "spark", *args, "--master", "local[2]"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_spark_match_prints_the_expected_answers_and_keeps_sparks_log_lines_off_stderr(
    workloads: Path,
) -> None:
    """stdout is the expected answers; stderr holds semps' own summary only: Spark's lines
    (the address it guessed, its log level, Hadoop's native library) go to the log file, or
    to stderr with --verbose. (One test: each run starts a Spark of its own.)"""
    case = workloads / "synthetic-s7"
    quiet = semps("match", *workload_options(case))
    loud = semps("match", *workload_options(case), "--verbose")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert quiet.stdout == loud.stdout == (case / "expected.jsonl").read_text()
    (summary,) = quiet.stderr.splitlines()
    assert summary.startswith("semps: 30 events against 100 subscriptions")
    spark_lines = [line for line in loud.stderr.splitlines() if not line.startswith("semps: ")]
    assert spark_lines  # what --verbose lets through
    assert not [line for line in loud.stderr.splitlines() if "loopback address" in line]


def test_spark_match_from_a_snapshot_prints_the_expected_answers(
    workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "lubm-u0"
    snap = tmp_path / "index.snap"
    built = subprocess.run(
        [sys.executable, "-m", "semps", "index", "--subscriptions", str(case / "subscriptions"),
         "--output", str(snap)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    options = ["--ontology", str(case / "ontology.owl"), "--events", str(case / "events")]
    done = semps("match", "--index", str(snap), *options)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (case / "expected.jsonl").read_text()
    other = workloads / "synthetic-s7" / "subscriptions"
    stale = semps("match", "--index", str(snap), "--subscriptions", str(other), *options)
    assert (stale.returncode, stale.stdout) == (2, "")
    assert stale.stderr == (
        f"semps: error: {snap}: not a usable semantic index snapshot: "
        "stale: the subscriptions changed since it was built\n"
    )


def test_a_converted_table_replays_with_mined_placement_into_parquet(
    workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "synthetic-s7"
    table = tmp_path / "events.parquet"
    converted = semps("convert", "--events", str(case / "events"), "--output", str(table))
    assert converted.returncode == 0, converted.stderr
    assert "of 30 events" in converted.stderr
    assert converted.stdout == ""
    out = tmp_path / "answers.parquet"
    done = semps(
        "match",
        *workload_options(case, events=table),
        "--placement",
        "mined",
        "--min-support",
        "0.03",
        "--output",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(out).to_pylist()
    got = {r["event"]: dict(r["solutions"]) for r in rows}
    lines = (case / "expected.jsonl").read_text().splitlines()
    want = {row["event"]: row["solutions"] for row in map(json.loads, lines)}
    assert got == want
    assert all(r["matches"] == sorted(r["matches"]) for r in rows)


def test_spark_place_writes_a_report_and_a_plot(workloads: Path, tmp_path: Path) -> None:
    case = workloads / "synthetic-s7"
    plot = tmp_path / "placement.png"
    done = semps(
        "place",
        *workload_options(case),
        "--min-support",
        "0.03",
        "--partitions",
        "6",
        "--plot",
        str(plot),
        "--json",
        str(tmp_path / "report.json"),
    )
    assert done.returncode == 0, done.stderr
    for word in ("placement: N =", "mined", "ferry", "broadcast", "delivery (D = 8)"):
        assert word in done.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["partitions"] == 6


def test_bad_arguments_exit_2_with_one_line(workloads: Path, tmp_path: Path) -> None:
    case = workloads / "synthetic-s7"
    base = ["match", "--subscriptions", str(case / "subscriptions")]
    done = semps(*base, "--events", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"events not found: {tmp_path / 'nowhere'}")
    done = semps(*base, "--events", str(case / "events"), "--output", str(tmp_path / "no/a.jsonl"))
    assert done.returncode == 2
    assert done.stderr == f"semps: error: output folder not found: {tmp_path / 'no'}\n"
    done = semps("place", *workload_options(case), "--plot", str(tmp_path / "no/p.png"))
    assert done.returncode == 2  # before any Spark job, not after them
    assert done.stderr == f"semps: error: output folder not found: {tmp_path / 'no'}\n"
    done = semps(*base, "--events", "file:///nowhere/events.parquet")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "semps: error: events not found: file:///nowhere/events.parquet"
    )
    done = semps(*base, "--events", str(case / "events"), "--conf", "novalue")
    assert done.returncode == 2
    assert "--conf expects KEY=VALUE, not 'novalue'" in done.stderr
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)  # python, but no java
    done = semps(*base, "--events", str(case / "events"), env=env)
    assert done.returncode == 2
    assert "semps: error: Spark needs Java 17" in done.stderr


def test_spark_submit_runs_the_same_command_with_the_submitted_settings(
    workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "synthetic-s7"
    submit = Path(sys.executable).with_name("spark-submit")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [
            str(submit),
            "--master",
            "local[1]",
            "--conf",
            "spark.sql.shuffle.partitions=3",
            str(importlib.util.find_spec("semps.__main__").origin),  # type: ignore[union-attr]
            "spark",
            "match",
            *workload_options(case),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # spark-submit merges the Python driver's stderr into its stdout: the summary goes to
    # the JVM's stderr instead, and stdout is the answers alone
    assert done.stdout == (case / "expected.jsonl").read_text()
    assert "master local[1]" in done.stderr  # the submitted master, not our local default
