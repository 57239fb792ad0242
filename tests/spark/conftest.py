"""One real local SparkSession for every Spark test (Spark starts in seconds, not millis)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import Case

sys.path.insert(0, str(Path(__file__).parent))  # the cluster helper beside this file

from spark_standalone import Cluster, python_without_semps, standalone_cluster  # noqa: E402

#: PySpark's result sockets (collect, toLocalIterator) are closed by the garbage collector,
#: which Python reports as an unraisable ResourceWarning; not ours to fix, and narrow.
SPARK_SOCKETS = (
    "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/spark/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings(SPARK_SOCKETS))


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from semps.spark.session import spark_session

    session = spark_session(
        "local[2]",
        app_name="semps-tests",
        conf={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"},
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and one worker (2 cores, 2 GB) on 127.0.0.1, for the session."""
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="session")
def executor_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with semps' dependencies but not semps: executors must use the zip."""
    return python_without_semps(tmp_path_factory.mktemp("python"))


@pytest.fixture(scope="session")
def synthetic(workloads: Path) -> Case:
    return Case(workloads / "synthetic-s7")


@pytest.fixture(scope="session")
def lubm(workloads: Path) -> Case:
    return Case(workloads / "lubm-u0")
