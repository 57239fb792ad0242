"""Wall and CPU seconds of a command's whole process tree, for the Spark benchmarks.

A Spark command is a tree: the Python driver, the JVM it starts, PySpark's daemon and the
Python workers it forks. ``getrusage(RUSAGE_CHILDREN)`` misses the processes nobody waited
for, so the command runs in a session of its own and every process of that session is
sampled from ``/proc`` (user + system ticks, the last value seen per process; a process
living less than one sampling period may be missed, Spark's are long-lived).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import NamedTuple

#: Seconds between two samples of the process tree.
PERIOD = 0.2
_TICKS = os.sysconf("SC_CLK_TCK")


class Measured(NamedTuple):
    """One run: wall seconds, CPU seconds of the whole tree, and what it printed."""

    seconds: float
    cpu: float
    returncode: int
    stdout: str
    stderr: str


def _session_ticks(session: int, seen: dict[int, int]) -> None:
    """Record the CPU ticks of every process of ``session`` in ``seen`` (by pid)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone between the listing and the read
            continue
        # after the command name: state ppid pgrp session ... utime(12) stime(13)
        if int(fields[3]) == session:
            seen[int(entry.name)] = int(fields[11]) + int(fields[12])


def measured(command: list[str], env: dict[str, str] | None = None) -> Measured:
    """Run ``command`` to the end in a new session; its wall and tree CPU seconds."""
    seen: dict[int, int] = {}
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    done = threading.Event()

    def sample() -> None:
        while not done.wait(PERIOD):
            _session_ticks(process.pid, seen)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    done.set()
    sampler.join()
    elapsed = time.perf_counter() - started
    return Measured(elapsed, sum(seen.values()) / _TICKS, process.returncode, stdout, stderr)


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


__all__ = ["Measured", "load_average", "measured"]
