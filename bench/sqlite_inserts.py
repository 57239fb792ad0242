"""Benchmark of how the broker's commits insert rows (not a test): ``executemany`` against
multi-row ``VALUES`` statements (``semps.broker._tables.insert_rows``), alone and beside a
busy Python thread, as the server's commit thread runs beside its event loop.

``executemany`` steps SQLite once per row and releases and retakes the GIL around each
step; with another thread holding the GIL, each retake waits. Reports the committing
thread's CPU and wall time a row (WAL, synchronous=FULL, the writer's page cache and
checkpoint interval, commits of ``--rows`` notification-sized rows).

    .venv/bin/python bench/sqlite_inserts.py [--commits 150] [--rows 3150]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from semps.broker._tables import insert_rows
from semps.broker.sqlite_store import WRITER_CACHE_KIB, WRITER_CHECKPOINT

PAYLOAD = (
    '{"subscription":"sub-1234","event":"ev-0123456789abcdef","count":1,'
    '"solutions":[{"a":"<http://bench.example/n895>"}],"id":12345}'
)


def run(how: str, busy: bool, commits: int, per_commit: int) -> tuple[float, float]:
    """(CPU, wall) microseconds a row of the committing thread."""
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "bench.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
        db.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT}")
        db.execute(
            "CREATE TABLE notifications (row INTEGER PRIMARY KEY, subscription TEXT NOT NULL, "
            "seq INTEGER NOT NULL, event TEXT NOT NULL, payload TEXT NOT NULL, "
            "created REAL NOT NULL)"
        )
        stop = threading.Event()

        def spin() -> None:
            while not stop.is_set():
                sum(range(100))

        spinner = threading.Thread(target=spin)
        if busy:
            spinner.start()
        rng = random.Random(1)
        row = 0
        cpu, wall = time.thread_time(), time.perf_counter()
        for _ in range(commits):
            rows = []
            for _ in range(per_commit):
                row += 1
                sub = f"sub-{rng.randrange(10_000)}"
                rows.append((row, sub, row, "ev-0123456789abcdef", PAYLOAD, 0.0))
            db.execute("BEGIN IMMEDIATE")
            if how == "executemany":
                db.executemany("INSERT INTO notifications VALUES (?, ?, ?, ?, ?, ?)", rows)
            else:
                insert_rows(db, "notifications", 6, rows)
            db.execute("COMMIT")
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        stop.set()
        if busy:
            spinner.join()
        db.close()
        return 1e6 * cpu / row, 1e6 * wall / row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--rows", type=int, default=3150, help="rows a commit")
    args = parser.parse_args()
    print(f"{'insert':<14} {'other thread':<13} {'CPU us/row':>10} {'wall us/row':>11}")
    for how in ("executemany", "multi-row"):
        for busy in (False, True):
            cpu, wall = run(how, busy, args.commits, args.rows)
            print(f"{how:<14} {'busy' if busy else 'none':<13} {cpu:>10.2f} {wall:>11.2f}")


if __name__ == "__main__":
    main()
