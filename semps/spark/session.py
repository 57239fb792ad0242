"""The one SparkSession factory of semps, and how the driver talks to the user.

``local[*]`` by default, any master by configuration (``--master``, ``$SEMPS_SPARK_MASTER``,
or ``spark-submit --master ...``, whose settings an existing session already carries).

Local masters get defaults chosen for a laptop or a CI box (:data:`LOCAL_DEFAULTS`: few
shuffle partitions, the UI off, 4 GB of driver memory) and Python workers running this
interpreter. A cluster master gets none of them: its workers run the Python named by
``spark.pyspark.python`` (or ``$PYSPARK_PYTHON``, else ``python3`` on each worker), never the
driver's own path, and the cluster's own settings stand.

Under ``spark-submit`` the Python driver's stderr is merged into its stdout (PySpark's
``PythonRunner``), so :func:`note` writes progress and errors to the JVM's stderr there:
stdout carries only answers.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from semps.errors import SparkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Environment variable with the default master (``local[*]`` when unset).
MASTER_ENV = "SEMPS_SPARK_MASTER"

#: Defaults for a local master only; any key can be overridden by ``conf``.
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

#: Where a local master's driver listens, unless told otherwise (``spark.driver.host``,
#: ``spark.driver.bindAddress`` or ``$SPARK_LOCAL_IP``): Spark otherwise guesses a
#: non-loopback address of this machine, and says so on stderr.
LOOPBACK = "127.0.0.1"
_BINDING = ("spark.driver.host", "spark.driver.bindAddress")

#: The JVM's log4j2 settings when Spark's log lines go to a file (:func:`quiet_logging`).
_LOG4J2 = """status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} [%pid] %p %c{{1}}: %m%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
"""

#: Python files (a zip from ``semps spark package``) for the executors' ``sys.path``.
PY_FILES_CONF = "spark.submit.pyFiles"

#: The setting naming the executors' Python (PySpark reads it only through spark-submit, so
#: :func:`spark_session` exports it as ``$PYSPARK_PYTHON`` before the context starts).
PYTHON_CONF = "spark.pyspark.python"


def is_local(master: str) -> bool:
    """Whether ``master`` runs everything in this machine's JVM (``local``, ``local[4]``).

    Example:
        >>> is_local("local[*]"), is_local("spark://10.0.0.1:7077"), is_local("yarn")
        (True, False, False)
    """
    return master == "local" or master.startswith("local[")


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


def loopback_settings(settings: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The settings that bind a local master's driver to :data:`LOOPBACK`: none when the
    ``settings`` or ``$SPARK_LOCAL_IP`` say where to bind.

    Example:
        >>> loopback_settings({}, {})
        {'spark.driver.host': '127.0.0.1', 'spark.driver.bindAddress': '127.0.0.1'}
        >>> loopback_settings({"spark.driver.host": "10.0.0.5"}, {})
        {}
    """
    if "SPARK_LOCAL_IP" in environ or any(key in settings for key in _BINDING):
        return {}
    return dict.fromkeys(_BINDING, LOOPBACK)


def spark_log_file() -> Path:
    """Where Spark's own log lines go unless ``verbose``: ``spark.log`` (each line with
    its process id) in a private folder of the temporary directory, appended to."""
    folder = Path(tempfile.gettempdir()) / f"semps-spark-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / "spark.log"


def quiet_logging(settings: Mapping[str, str]) -> dict[str, str]:
    """The driver's Java options that send the JVM's log lines to :func:`spark_log_file`
    (the caller's own ``spark.driver.extraJavaOptions`` kept after, so theirs win)."""
    log = spark_log_file()
    config = log.with_name("log4j2.properties")
    text = _LOG4J2.format(path=log)
    if not config.is_file() or config.read_text(encoding="utf-8") != text:
        fresh = config.with_name(f".log4j2.{os.getpid()}")  # replaced whole: never half-read
        fresh.write_text(text, encoding="utf-8")
        fresh.replace(config)
    option = f"-Dlog4j2.configurationFile={config.as_uri()}"
    theirs = settings.get("spark.driver.extraJavaOptions", "")
    return {"spark.driver.extraJavaOptions": f"{option} {theirs}".strip()}


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
    verbose: bool = False,
) -> SparkSession:
    """Get or create the SparkSession semps runs on.

    Args:
        master: the Spark master URL; default ``$SEMPS_SPARK_MASTER`` or ``local[*]``; under
            ``spark-submit``, the submitted one (and submitted settings win over the local
            defaults).
        app_name: the application name shown by the cluster manager.
        conf: extra Spark settings (they override the local defaults). All of them reach the
            builder before the JVM starts, so ``spark.jars`` and ``spark.jars.packages`` work
            (under ``spark-submit`` the JVM is already running: pass ``--jars`` there).
        verbose: let Spark's own log lines through to stderr; by default they go to
            :func:`spark_log_file`. (Under ``spark-submit``, its logging stands.)

    A local master's driver listens on :data:`LOOPBACK` unless ``conf`` or
    ``$SPARK_LOCAL_IP`` say otherwise (:func:`loopback_settings`).

    Raises:
        SparkError: pyspark or Java is missing, or the JVM could not start.
    """
    _import_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    submitted = _submitted_conf()
    settings = dict(conf or {})
    if submitted is None:
        check_java()
        # Spark's console progress bar would interleave with our stderr lines.
        settings.setdefault("spark.ui.showConsoleProgress", "false")
        master = master or os.environ.get(MASTER_ENV) or "local[*]"
        if is_local(master):
            bind = loopback_settings(settings, os.environ)
            if bind:  # the JVM reads it before any setting: no address guessed at all
                os.environ["SPARK_LOCAL_IP"] = LOOPBACK
            settings = {**LOCAL_DEFAULTS, **bind, **settings}
            # Local workers must run this interpreter, or they miss the venv's packages.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if not verbose:
            settings |= quiet_logging(settings)
    else:  # under spark-submit: what was submitted wins over our local defaults
        master = master or submitted.get("spark.master") or "local[*]"
        if is_local(master):
            settings = {
                **{k: v for k, v in LOCAL_DEFAULTS.items() if k not in submitted},
                **settings,
            }
    if PYTHON_CONF in settings:
        os.environ["PYSPARK_PYTHON"] = settings[PYTHON_CONF]
    # PySpark ships spark.submit.pyFiles itself only under spark-submit: add them below.
    py_files = [f for f in settings.pop(PY_FILES_CONF, "").split(",") if f]
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # py4j / JVM start-up failures arrive as many types
        msg = f"Spark could not start: {first_line(exc)}"
        raise SparkError(msg) from exc
    session.sparkContext.setLogLevel("ERROR")
    for path in py_files:
        if not Path(path).is_file():
            msg = f"Python file for the executors not found: {path}"
            raise SparkError(msg)
        session.sparkContext.addPyFile(path)
    return session


def _submitted_conf() -> dict[str, str] | None:
    """The settings ``spark-submit`` launched this driver with, or ``None`` when semps
    starts the JVM itself (``spark-submit`` runs the Python driver with a gateway port)."""
    if not under_spark_submit():
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connect to spark-submit's JVM, or SparkConf is empty
    return dict(SparkConf().getAll())


def under_spark_submit() -> bool:
    """Whether ``spark-submit`` started this Python driver (it passes a gateway port)."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


def note(line: str) -> None:
    """Write one line for the user (progress, a summary, an error), never to stdout: to
    stderr, or under ``spark-submit`` (which merges our stderr into stdout) to the JVM's."""
    if under_spark_submit():
        try:
            from pyspark import SparkContext

            SparkContext._ensure_initialized()
            jvm = SparkContext._jvm
            assert jvm is not None
            jvm.System.err.println(line)
            jvm.System.err.flush()
            return
        except Exception:  # noqa: BLE001  (a gone JVM: stderr is still better than nothing)
            pass
    print(line, file=sys.stderr, flush=True)


def first_line(exc: BaseException) -> str:
    """A one-line summary of a Spark failure: the Python error a task raised, else the
    first line of the Java exception's message (Py4J messages run to a hundred lines)."""
    text = str(exc)
    python_error = _python_error(text)
    if python_error:
        return python_error
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("An error occurred while calling"):
            continue
        return _JAVA_CLASS.sub("", line.removeprefix(": "), count=1)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        return str(java.toString()).splitlines()[0]
    return lines[0] if lines else type(exc).__name__


#: Java exception class names before a message (``java.lang.RuntimeException: ``, nested).
_JAVA_CLASS = re.compile(r"^(?:(?:[\w$]+\.)+[\w$]+: )+")


def _python_error(text: str) -> str | None:
    """The last line of the first Python traceback in a Spark error, if there is one."""
    start = text.find("Traceback (most recent call last):")
    if start < 0:
        return None
    for line in text[start:].splitlines()[1:]:
        if line and not line.startswith((" ", "\t")):
            return line.strip()
    return None


__all__ = [
    "LOCAL_DEFAULTS",
    "LOOPBACK",
    "MASTER_ENV",
    "PY_FILES_CONF",
    "PYTHON_CONF",
    "check_java",
    "first_line",
    "is_local",
    "loopback_settings",
    "note",
    "quiet_logging",
    "spark_log_file",
    "spark_session",
    "under_spark_submit",
]
