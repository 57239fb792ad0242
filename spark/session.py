"""The one SparkSession factory of semps.

``local[*]`` by default, any master by configuration (``--master``, ``$SEMPS_SPARK_MASTER``,
or ``spark-submit --master ...``, whose settings an existing session already carries). The
GraphFrames jar is added from ``$SEMPS_GRAPHFRAMES_JAR`` or the provisioned cache
(:mod:`semps.spark.jars`) unless the configuration already names ``spark.jars.packages``.

Local defaults are chosen for a laptop or a CI box: few shuffle partitions, the UI off, the
Python workers running this interpreter (``PYSPARK_PYTHON``), so they see the same packages.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from semps.errors import SparkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Environment variable with the default master (``local[*]`` when unset).
MASTER_ENV = "SEMPS_SPARK_MASTER"

#: Defaults for a local session; any key can be overridden by ``conf``.
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.sql.shuffle.partitions": "8",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "4g",
    "spark.python.worker.reuse": "true",
    "spark.sql.adaptive.enabled": "true",
}


def check_java() -> str:
    """The ``java`` Spark will start, or a :class:`SparkError` saying how to get one."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        msg = (
            "Spark needs Java 17 (or 11/8): no `java` on PATH and JAVA_HOME is not set; "
            "install a JDK (e.g. `apt install openjdk-17-jre-headless`) or set JAVA_HOME"
        )
        raise SparkError(msg)
    return found


def _import_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        msg = "the Spark pipeline needs pyspark: pip install 'semps[spark]'"
        raise SparkError(msg) from exc


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "semps",
    conf: Mapping[str, str] | None = None,
    graphframes: bool = True,
) -> SparkSession:
    """Get or create the SparkSession semps runs on.

    Args:
        master: the Spark master URL; default ``$SEMPS_SPARK_MASTER`` or ``local[*]``; under
            ``spark-submit``, the submitted one (and submitted settings win over the local
            defaults).
        app_name: the application name shown by the cluster manager.
        conf: extra Spark settings (they override the local defaults).
        graphframes: add the GraphFrames jar (and its Python wrapper) to the session.

    Raises:
        SparkError: pyspark or Java is missing, or the JVM could not start.
    """
    _import_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        if graphframes:
            _attach_graphframes_wrapper(active)
        return active
    submitted = _submitted_conf()
    if submitted is None:
        check_java()
        # Workers must run this interpreter, or they miss the venv's packages.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        settings = dict(LOCAL_DEFAULTS)
        master = master or os.environ.get(MASTER_ENV) or "local[*]"
    else:  # under spark-submit: what was submitted wins over our local defaults
        settings = {k: v for k, v in LOCAL_DEFAULTS.items() if k not in submitted}
        master = master or submitted.get("spark.master") or "local[*]"
    settings.update(conf or {})
    if graphframes and "spark.jars.packages" not in {**(submitted or {}), **settings}:
        from semps.spark.jars import graphframes_jar

        jar = graphframes_jar()
        if jar is not None:
            given = settings.get("spark.jars") or (submitted or {}).get("spark.jars", "")
            jars = [j for j in given.split(",") if j]
            settings["spark.jars"] = ",".join([*jars, str(jar)])
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # py4j / JVM start-up failures arrive as many types
        msg = f"Spark could not start: {exc}"
        raise SparkError(msg) from exc
    session.sparkContext.setLogLevel("ERROR")
    if graphframes:
        _attach_graphframes_wrapper(session)
    return session


def _submitted_conf() -> dict[str, str] | None:
    """The settings ``spark-submit`` launched this driver with, or ``None`` when semps
    starts the JVM itself (``spark-submit`` runs the Python driver with a gateway port)."""
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connect to spark-submit's JVM, or SparkConf is empty
    return dict(SparkConf().getAll())


def _attach_graphframes_wrapper(session: SparkSession) -> None:
    """Make ``import graphframes`` work on the driver and the workers: the wrapper ships in
    the jar itself, so the jar goes on ``sys.path`` and to the workers as a Python file."""
    jars = session.sparkContext.getConf().get("spark.jars", "") or ""
    for jar in (j for j in jars.split(",") if "graphframes" in j):
        path = jar.removeprefix("file:")
        if path not in sys.path and Path(path).is_file():
            sys.path.append(path)
            session.sparkContext.addPyFile(path)


def graphframe_class() -> type:
    """GraphFrames' ``GraphFrame`` class (the session must have been created first).

    Raises:
        SparkError: the GraphFrames jar is not on the session.
    """
    try:
        from graphframes import GraphFrame
    except ImportError as exc:
        msg = (
            "GraphFrames is not available: run `python -m semps.spark.jars` to provision "
            "its jar, set SEMPS_GRAPHFRAMES_JAR, or configure spark.jars.packages"
        )
        raise SparkError(msg) from exc
    return GraphFrame  # type: ignore[no-any-return]
