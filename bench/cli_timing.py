"""Timing ``semps`` commands end to end, as a user runs them (a helper of the benchmarks).

Each run is a fresh process: wall time and peak RSS (``os.wait4``) are measured around it,
its output goes to ``/dev/null``. ``--prev WORKTREE`` runs the same command from another
checkout (e.g. ``git worktree add /tmp/semps-prev <commit>``) with this venv: the editable
install's module mapping is pointed at the worktree before ``semps`` is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

_RUNNER = """
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import __editable___semps_0_1_0_finder as finder
for key, value in list(finder.MAPPING.items()):
    finder.MAPPING[key] = value.replace({here!r}, {there!r})
from semps.cli import main
sys.exit(main())
"""

HERE = str(Path(__file__).resolve().parent.parent)


def command(prev: str | None) -> list[str]:
    """The ``semps`` command line of this checkout, or of the worktree ``prev``."""
    if prev is None:
        return [sys.executable, "-m", "semps"]
    return [sys.executable, "-c", _RUNNER.format(here=HERE, there=str(Path(prev).resolve()))]


def run(args: list[str], prev: str | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds (user + system, its workers included), peak RSS bytes)
    of one ``semps`` run; raises when it fails."""
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        proc = subprocess.Popen([*command(prev), *args], stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err = proc.stderr.read().decode() if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        msg = f"semps {' '.join(args)} failed ({proc.returncode}): {err[-400:]}"
        raise RuntimeError(msg)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def samples(
    args: list[str], repeat: int, prev: str | None = None
) -> tuple[list[float], list[float], int]:
    """The wall and the CPU seconds of ``repeat`` fresh runs, and their largest peak RSS."""
    walls, cpus, rss = [], [], 0
    for _ in range(repeat):
        seconds, cpu, peak = run(args, prev)
        walls.append(seconds)
        cpus.append(cpu)
        rss = max(rss, peak)
    return walls, cpus, rss


def best(
    args: list[str], repeat: int, prev: str | None = None
) -> tuple[float, float, int, float, float]:
    """(fastest, slowest wall seconds, peak RSS, least, most CPU seconds) over ``repeat``
    runs (CPU time varies less than wall time on a shared machine)."""
    walls, cpus, rss = samples(args, repeat, prev)
    return min(walls), max(walls), rss, min(cpus), max(cpus)
