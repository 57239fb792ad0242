"""semps on a real standalone cluster (master and worker from pyspark's bundled scripts), run
exactly as docs/spark.md's "Running on a cluster" says: ``semps spark package``, then
``spark-submit --py-files`` with the zip, or the CLI with ``--master`` and ``--py-files``.
The executors' Python has semps' dependencies but not semps, so they import it from the zip.
Answers are compared with in-process ``semps match`` (an independent path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spark_standalone import SPARK_HOME, Cluster

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

SEMPS = Path(sys.executable).with_name("semps")
SUBMIT = Path(sys.executable).with_name("spark-submit")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``semps spark package``'s zip and driver script."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [str(SEMPS), "spark", "package", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    zip_path, main = (Path(line) for line in done.stdout.splitlines())
    assert zip_path.suffix == ".zip" and main.name == "semps_main.py"
    return zip_path, main


def in_process(case: Path) -> str:
    """``semps match`` on one machine, in process: the answers Spark must reproduce."""
    done = subprocess.run(
        [str(SEMPS), "match", "--ontology", str(case / "ontology.owl"),
         "--subscriptions", str(case / "subscriptions"), "--events", str(case / "events")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def match_args(case: Path) -> list[str]:
    return [
        "spark", "match", "--ontology", str(case / "ontology.owl"),
        "--subscriptions", str(case / "subscriptions"), "--events", str(case / "events"),
    ]  # fmt: skip


def submit(
    cluster: Cluster, package: tuple[Path, Path], python: Path, *args: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """docs/spark.md's spark-submit command line."""
    zip_path, main = package
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME)}
    env.pop("PYSPARK_PYTHON", None)
    return subprocess.run(
        [str(SUBMIT), "--master", cluster.url, "--py-files", str(zip_path),
         "--conf", f"spark.pyspark.python={python}", "--conf", "spark.executor.memory=1g",
         str(main), *args],
        capture_output=True, text=True, timeout=900, env=env, cwd=cwd,
    )  # fmt: skip


def cli(
    cluster: Cluster, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``semps spark ...`` against the cluster's master."""
    return subprocess.run(
        [str(SEMPS), *args, "--master", cluster.url, "--conf", "spark.executor.memory=1g"],
        capture_output=True, text=True, timeout=900, cwd=cwd, env=env,
    )  # fmt: skip


def test_spark_submit_with_the_packaged_zip_answers_lubm_like_semps_match(
    cluster, package, executor_python, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "lubm-u0"
    done = submit(cluster, package, executor_python, *match_args(case), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == in_process(case)
    assert all(json.loads(line)["event"] for line in done.stdout.splitlines())
    assert "15 events against 98 subscriptions" in done.stderr
    assert f"master {cluster.url}" in done.stderr


def test_spark_submit_writes_brick_answers_to_a_jsonl_file(
    cluster, package, executor_python, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "brick-a"
    out = tmp_path / "answers.jsonl"
    args = [*match_args(case), "--output", str(out)]
    done = submit(cluster, package, executor_python, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    assert out.read_text() == in_process(case)


def test_the_cli_against_the_master_writes_parquet_like_semps_match(
    cluster, package, executor_python, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "brick-a"
    out = tmp_path / "answers.parquet"
    done = cli(
        cluster, *match_args(case), "--output", str(out), "--py-files", str(package[0]),
        "--conf", f"spark.pyspark.python={executor_python}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    got = {r["event"]: dict(r["solutions"]) for r in pq.read_table(out).to_pylist()}
    want = {
        (row := json.loads(line))["event"]: row["solutions"]
        for line in in_process(case).splitlines()
    }
    assert got == want


def test_an_unreachable_input_is_one_error_line_and_exit_2(
    cluster, package, executor_python, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "lubm-u0"
    args = [*match_args(case)[:-1], "s3a://no-bucket/events"]
    done = submit(cluster, package, executor_python, *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if line.startswith("semps: ")]
    assert errors == [
        "semps: error: cannot read events at s3a://no-bucket/events: "
        "Class org.apache.hadoop.fs.s3a.S3AFileSystem not found"
    ]


def test_executors_without_semps_fail_in_one_line(
    cluster, executor_python, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "lubm-u0"  # no --py-files: the executors cannot import semps
    done = cli(
        cluster, *match_args(case), "--conf", f"spark.pyspark.python={executor_python}",
        "--conf", "spark.task.maxFailures=1", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if line.startswith("semps: ")]
    assert errors == ["semps: error: Spark failed: ModuleNotFoundError: No module named 'semps'"]


def test_a_job_the_cluster_cannot_host_is_reported_while_it_waits(
    cluster, package, workloads: Path, tmp_path: Path
) -> None:
    case = workloads / "lubm-u0"
    env = {**os.environ, "SEMPS_SPARK_PATIENCE": "3"}
    command = [str(SEMPS), *match_args(case), "--master", cluster.url,
               "--py-files", str(package[0]), "--conf", "spark.executor.memory=8g"]  # fmt: skip
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
        cwd=tmp_path,
    ) as running:  # fmt: skip
        assert running.stderr is not None
        deadline = time.monotonic() + 300
        warning = ""
        try:
            for line in running.stderr:
                if line.startswith("semps: "):
                    warning = line
                    break
                assert time.monotonic() < deadline
        finally:
            running.kill()
    assert warning.startswith("semps: warning: Spark has run no task for 3 s")
    assert "no executor has registered" in warning


def test_spark_submit_ships_the_knowledge_graph_to_executors_without_semps(
    cluster, package, executor_python, workloads: Path, tmp_path: Path
) -> None:
    """brick-kg-a's model as the graph, loaded on the driver and shipped to executors that
    import semps from the zip: the answers are expected.jsonl's (the oracle's)."""
    case = workloads / "brick-kg-a"
    args = [*match_args(case), "--graph", str(case / "graph")]
    done = submit(cluster, package, executor_python, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == (case / "expected.jsonl").read_text()
    assert "shipped to the executors once" in done.stderr
