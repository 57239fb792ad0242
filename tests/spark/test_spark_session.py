"""The Spark session factory: local defaults only for local masters, the executors' Python
from configuration, and Spark's failures summarised in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from semps.errors import SparkError
from semps.spark.session import (
    LOOPBACK,
    check_java,
    first_line,
    is_local,
    loopback_settings,
    quiet_logging,
    spark_log_file,
)


def test_missing_java_is_a_clear_error(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkError, match="Spark needs Java 17 .* set JAVA_HOME"):
        check_java()


@pytest.mark.parametrize(
    ("master", "local"),
    [("local", True), ("local[2]", True), ("local[*]", True), ("spark://h:7077", False),
     ("yarn", False), ("k8s://https://h:6443", False), ("localhost", False)],
)  # fmt: skip
def test_only_local_masters_are_local(master: str, local: bool) -> None:
    assert is_local(master) is local


def test_a_python_error_in_a_task_is_summarised_by_its_last_line() -> None:
    text = (
        "An error occurred while calling o57.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 ...\n"
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "worker.py", line 1, in main\n'
        "    import semps\n"
        "ModuleNotFoundError: No module named 'semps'\n"
        "\n\tat org.apache.spark.api.python.BasePythonRunner...\n"
    )
    assert first_line(RuntimeError(text)) == "ModuleNotFoundError: No module named 'semps'"


def test_a_java_error_is_summarised_without_its_class_name() -> None:
    text = (
        "An error occurred while calling o41.parquet.\n"
        ": org.apache.spark.sql.AnalysisException: [PATH_NOT_FOUND] Path does not exist: "
        "file:/data/x.parquet.\n\tat org.apache.spark.sql.errors...\n"
    )
    want = "[PATH_NOT_FOUND] Path does not exist: file:/data/x.parquet."
    assert first_line(RuntimeError(text)) == want
    nested = ": java.lang.RuntimeException: java.lang.ClassNotFoundException: Class X not found"
    assert first_line(RuntimeError(nested)) == "Class X not found"


@pytest.mark.spark
def test_a_local_session_runs_workers_on_this_interpreter_with_local_defaults(spark) -> None:
    executables = spark.sparkContext.parallelize(range(4), 2).map(lambda _: sys.executable)
    assert set(executables.collect()) == {sys.executable}
    assert spark.conf.get("spark.ui.enabled") == "false"
    # the driver listens on loopback, not on an address Spark guessed (issue 36)
    assert spark.sparkContext.getConf().get("spark.driver.host") == LOOPBACK


def test_a_local_driver_binds_to_loopback_unless_told_where() -> None:
    loopback = {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}
    assert loopback_settings({}, {}) == loopback
    assert loopback_settings({"spark.driver.bindAddress": "0.0.0.0"}, {}) == {}
    assert loopback_settings({"spark.driver.host": "10.0.0.5"}, {}) == {}
    assert loopback_settings({}, {"SPARK_LOCAL_IP": "10.0.0.5"}) == {}


def test_quiet_logging_points_the_jvm_at_a_file_and_keeps_the_callers_options() -> None:
    options = quiet_logging({"spark.driver.extraJavaOptions": "-Dx=1"})
    option, theirs = options["spark.driver.extraJavaOptions"].split(" ")
    assert theirs == "-Dx=1"  # later on the command line: the caller's settings win
    config = Path(option.removeprefix("-Dlog4j2.configurationFile=file://"))
    assert f"appender.file.fileName = {spark_log_file()}" in config.read_text()


@pytest.mark.spark
def test_a_local_session_listens_on_loopback(spark) -> None:
    assert spark.conf.get("spark.driver.host") == LOOPBACK
    assert spark.conf.get("spark.driver.bindAddress") == LOOPBACK
    assert spark.sparkContext.uiWebUrl is None or LOOPBACK in spark.sparkContext.uiWebUrl
