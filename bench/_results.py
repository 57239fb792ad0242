"""Benchmark results as data (not a test): each benchmark appends its figures to
``bench/results/<bench>.csv``, a row per run and case, with when, which code and how busy
the machine was, so the history of a figure is a file to read, plot or diff.

The columns every row has come first: ``date`` (UTC), ``commit`` (the measured checkout's
``HEAD``, with ``+dirty`` when its ``semps/`` has uncommitted changes), ``load`` (the
one-minute load average as the row is written), ``reference_ms`` (the machine's speed:
:func:`_machine.reference_ms`), ``command`` (the benchmark's command line) and ``note``;
then the benchmark's own figures, in the order it gives them. A figure a file has no column
for adds one (earlier rows leave it empty). ``SEMPS_BENCH_RECORD=0`` writes nothing.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> path = record("demo", {"events_s": 1234.5, "p99_ms": 0.12345}, results=folder,
    ...               checkout=folder, reference=80.0)
    >>> rows = list(csv.DictReader(path.open()))
    >>> rows[0]["commit"], rows[0]["events_s"], rows[0]["p99_ms"], rows[0]["reference_ms"]
    ('unknown', '1234', '0.1235', '80')
    >>> path = record("demo", {"events_s": 99, "mode": "batch"}, results=folder,
    ...               checkout=folder, reference=80.0)
    >>> [(r["events_s"], r["mode"]) for r in csv.DictReader(path.open())]
    [('1234', ''), ('99', 'batch')]
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

#: Where the result files live: ``bench/results/`` beside this file.
RESULTS = Path(__file__).resolve().parent / "results"
#: The columns every row has, first.
FIXED = ("date", "commit", "load", "reference_ms", "command", "note")


def measured_checkout() -> Path:
    """The checkout whose ``semps`` this process imports (another one when ``PYTHONPATH``
    names it, for side-by-side figures)."""
    import semps

    return Path(semps.__file__).resolve().parents[1]


def commit_of(checkout: Path) -> str:
    """``HEAD``'s short hash in ``checkout`` (``+dirty`` when its ``semps/`` has changes),
    or ``unknown`` outside a git checkout."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--", "semps") else "")


def _cell(value: object) -> str:
    """A figure as text: whole numbers from 1,000 up, four significant digits below."""
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return "" if value is None else str(value)


def record(
    bench: str,
    figures: Mapping[str, object],
    *,
    note: str = "",
    checkout: Path | None = None,
    reference: float | None = None,
    results: Path = RESULTS,
) -> Path | None:
    """Append one row of ``figures`` to ``results/<bench>.csv``; the file's path, or
    ``None`` when ``SEMPS_BENCH_RECORD=0``.

    Args:
        bench: the result file's name (the benchmark's, e.g. ``service``).
        figures: column -> value, in the order the columns should first appear.
        note: what a reader should know about the row (a case, the code beside it).
        checkout: the checkout measured (default: where ``semps`` is imported from).
        reference: the machine's reference time in ms, if the benchmark just took it.
        results: the folder of result files.
    """
    if os.environ.get("SEMPS_BENCH_RECORD", "1") == "0":
        return None
    if reference is None:
        from _machine import reference_ms

        reference = reference_ms()
    row = {
        "date": time.strftime("%Y-%m-%dT%H:%M", time.gmtime()),
        "commit": commit_of(checkout or measured_checkout()),
        "load": f"{os.getloadavg()[0]:.2f}",
        "reference_ms": f"{reference:.0f}",
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "note": note,
        **{name: _cell(value) for name, value in figures.items()},
    }
    path = results / f"{bench}.csv"
    results.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    columns = list(FIXED)
    if path.exists():
        with path.open(newline="", encoding="utf-8") as old:
            reader = csv.DictReader(old)
            columns = list(reader.fieldnames or FIXED)
            rows = list(reader)
    columns += [name for name in row if name not in columns]
    rows.append(row)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, columns, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path
