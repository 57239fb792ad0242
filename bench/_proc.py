"""What the benchmarks read of a process in ``/proc`` (not a test): its resident memory, its
private memory, its descendants."""

from __future__ import annotations

from pathlib import Path


def field_mib(path: Path, name: str) -> float:
    """The ``name:`` line of a ``/proc`` file that counts in kB (``status``,
    ``smaps_rollup``), in MiB; 0 when the process is gone."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_mib(pid: int | str) -> float:
    """The resident memory of process ``pid`` (``"self"``: this one)."""
    return field_mib(Path(f"/proc/{pid}/status"), "VmRSS")


def private_mib(pid: int) -> float:
    """The private (copied or its own) resident memory of process ``pid``."""
    return field_mib(Path(f"/proc/{pid}/smaps_rollup"), "Private_Dirty")


def children(pid: int) -> list[int]:
    """The descendants of process ``pid`` (a server's: its workers, and what they forked,
    such as a worker saving its matchers' states)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            direct = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in direct:
            found += [child, *children(child)]
    return found
