"""Wall and CPU seconds of a command's whole process tree, for the Spark benchmarks.

A Spark command is a tree: the Python driver, the JVM it starts, PySpark's daemon and the
Python workers it forks. ``getrusage(RUSAGE_CHILDREN)`` misses the processes nobody waited
for, so the command runs in a session of its own and every process of that session is
sampled from ``/proc`` (user + system ticks, the last value seen per process; a process
living less than one sampling period may be missed, Spark's are long-lived).

    .venv/bin/python bench/spark_cpu.py COMMAND [ARG ...]   # its output, then one line:
    # wall 12.3 s, cpu 20.1 s (process tree), load average 3.10, 2.50, 2.00 -> 3.20, ...
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

#: Seconds between two samples of the process tree.
PERIOD = 0.2
_TICKS = os.sysconf("SC_CLK_TCK")


class Measured(NamedTuple):
    """One run: wall seconds, CPU seconds of the whole tree (and by kind of process:
    ``driver``, ``jvm``, ``workers``), and what it printed."""

    seconds: float
    cpu: float
    returncode: int
    stdout: str
    stderr: str
    by_kind: dict[str, float]

    def split(self) -> str:
        """The CPU seconds by kind of process, e.g. ``driver 9.1 + jvm 8.0 + workers 30.2``."""
        return " + ".join(f"{k} {v:.1f}" for k, v in sorted(self.by_kind.items()))


def _session_ticks(sessions: set[int], seen: dict[int, tuple[str, int]]) -> None:
    """Record the kind and CPU ticks of every process of ``sessions`` in ``seen`` (by pid)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            # after the command name: state ppid pgrp session ... utime(12) stime(13)
            if int(fields[3]) not in sessions:
                continue
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone between the listing and the reads
            continue
        pid = int(entry.name)
        # An exiting process (a zombie) has no command line left: it keeps its first kind.
        kind = seen[pid][0] if pid in seen and not cmdline else _kind(cmdline)
        seen[pid] = kind, int(fields[11]) + int(fields[12])


def _kind(cmdline: bytes) -> str:
    """What a process of a Spark command is: a JVM, or one of the Python workers and the
    daemon forking them (whose forks may show another command line); the command's own
    process is the driver (see :func:`measured`)."""
    return "jvm" if cmdline.split(b"\0", 1)[0].endswith(b"java") else "workers"


def measured(
    command: list[str], env: dict[str, str] | None = None, cluster: int | None = None
) -> Measured:
    """Run ``command`` to the end in a new session; its wall and tree CPU seconds.

    ``cluster``: the session of a standalone cluster's daemons on this machine, whose
    executors (started by the worker for the command) count too; what its processes had
    used before the command started is left out.
    """
    seen: dict[int, tuple[str, int]] = {}
    before: dict[int, tuple[str, int]] = {}
    if cluster is not None:
        _session_ticks({cluster}, before)
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
            _session_ticks({process.pid} if cluster is None else {process.pid, cluster}, seen)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    done.set()
    sampler.join()
    elapsed = time.perf_counter() - started
    by_kind: dict[str, float] = {}
    for pid, (kind, ticks) in seen.items():
        used = ticks - before.get(pid, (kind, 0))[1]
        kind = "driver" if pid == process.pid else kind
        by_kind[kind] = by_kind.get(kind, 0.0) + used / _TICKS
    cpu = sum(by_kind.values())
    return Measured(elapsed, cpu, process.returncode, stdout, stderr, by_kind)


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def main() -> None:
    before = load_average()
    done = measured(sys.argv[1:])
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    print(
        f"wall {done.seconds:.1f} s, cpu {done.cpu:.1f} s (process tree: {done.split()}), "
        f"{before} -> {load_average().removeprefix('load average ')}",
        flush=True,
    )
    sys.exit(done.returncode)


__all__ = ["Measured", "load_average", "measured"]

if __name__ == "__main__":
    main()
