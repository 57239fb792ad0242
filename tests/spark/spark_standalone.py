"""A real Spark standalone cluster on 127.0.0.1 for the tests: one master and one worker,
started from pyspark's bundled ``sbin/spark-daemon.sh`` (docs/spark.md's "Running on a
cluster" recipe), and an executor Python that has semps' dependencies but not semps, so
executors can only import semps from the zip ``semps spark package`` writes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
DAEMON = SPARK_HOME / "sbin" / "spark-daemon.sh"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


@dataclass(frozen=True)
class Cluster:
    """A running standalone cluster."""

    url: str  # spark://127.0.0.1:PORT
    ui: str  # the master's web UI
    env: dict[str, str]  # what the daemons ran with (SPARK_HOME, SPARK_LOCAL_IP, ...)
    cores: int
    memory: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def daemon(env: dict[str, str], action: str, cls: str, *args: str) -> None:
    subprocess.run(
        ["bash", str(DAEMON), action, cls, "1", *args],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )


def alive_workers(ui: str) -> int:
    try:
        with urllib.request.urlopen(f"{ui}/json/", timeout=5) as reply:
            state = json.load(reply)
    except OSError:
        return 0
    return sum(w.get("state") == "ALIVE" for w in state.get("workers", []))


@contextmanager
def standalone_cluster(folder: Path, *, cores: int = 2, memory: str = "2g") -> Iterator[Cluster]:
    """Start a master and one worker; stop both on the way out, even on failure."""
    port, ui_port, worker_ui = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_PID_DIR": str(folder / "pids"),
        "SPARK_WORKER_DIR": str(folder / "work"),
        "SPARK_IDENT_STRING": f"semps-tests-{port}",
        "SPARK_DAEMON_MEMORY": "512m",
    }
    url, ui = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}"
    master = ("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port))
    worker = ("--cores", str(cores), "--memory", memory, "--webui-port", str(worker_ui), url)
    try:
        daemon(env, "start", MASTER_CLASS, *master)
        daemon(env, "start", WORKER_CLASS, *worker)
        deadline = time.monotonic() + 120
        while alive_workers(ui) < 1:
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text()[-2000:] for p in (folder / "logs").glob("*"))
                raise RuntimeError(f"the standalone worker did not register:\n{logs}")
            time.sleep(0.5)
        yield Cluster(url, ui, env, cores, memory)
    finally:
        for cls in (WORKER_CLASS, MASTER_CLASS):
            subprocess.run(
                ["bash", str(DAEMON), "stop", cls, "1"], env=env, capture_output=True, timeout=120
            )


def python_without_semps(folder: Path) -> Path:
    """A Python with this venv's packages on its path but not semps itself (its editable
    install is a ``.pth`` hook, which a plain path entry does not run)."""
    venv = folder / "executor-python"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", purelib], check=True, capture_output=True, text=True
    )
    site = Path(found.stdout.strip())
    (site / "semps-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = venv / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import semps"], capture_output=True, timeout=60, cwd=folder
    )
    assert probe.returncode != 0, "the executor Python must not see semps outside the zip"
    return python
