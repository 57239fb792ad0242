"""Benchmark of a matching worker's start (not a test): a service's data directory's
subscriptions indexed in this process as a worker of ``semps serve`` indexes them when it
starts, from the matchers' saved states when the directory holds them (``semantic.state``:
``--save`` writes it first), else from the texts (with the snapshot's parses).

    .venv/bin/python bench/worker_start.py DATA_DIR [--save]

Prints the CPU seconds of the load, and the resident memory it added (after the inputs
are dropped) per subscription. The data directory is only read, but for ``--save``. Against
another checkout (``PYTHONPATH=/tmp/semps-prev``) it loads as that checkout's workers do
(one without saved states indexes every text). The limits that parsing reads are the
snapshot's, so that its parses are used.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import inspect
import os
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
import _proc  # noqa: E402
from _machine import reference_ms, stamp  # noqa: E402
from _results import record  # noqa: E402


def rss_mib() -> float:
    """This process's resident memory (after giving freed heap back to the system)."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return _proc.rss_mib("self")


def snapshot_limits(data: Path) -> object:
    """The limits the data directory's semantic snapshot was parsed under."""
    from semps.limits import Limits

    for path in [data / "semantic.snap", *sorted(data.glob("semantic.snap.part*"))]:
        if path.exists():
            with path.open("rb") as f:
                f.readline()
                return Limits(**orjson.loads(f.readline())["limits"])
    return Limits()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--save", action="store_true", help="save the states first (writer)")
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    stamp("start")
    reference = reference_ms()

    from semps.broker.sqlite_store import SQLiteStore
    from semps.broker.worker import Worker
    from semps.matcher.registry import get_matcher_class
    from semps.ontology.expansion import Expansion

    store = SQLiteStore(args.data / "semps.sqlite3")
    subs = [
        s
        for s, suspended in store.subscriptions_with_status()
        if suspended is None and not get_matcher_class(s.kind).stateful
    ]
    store.close()
    worker = Worker(snapshot_limits(args.data))  # type: ignore[arg-type]
    saves = "key" in inspect.signature(worker.load).parameters
    request: list[object] = [subs, Expansion(), args.data, args.save]
    if saves:
        from semps.broker.at_rest import SecretBox
        from semps.broker.broker import STATE_KEY
        from semps.broker.worker_load import Packed

        request[0] = Packed.of(subs)
        request += [None, SecretBox.from_dir(args.data).derive(STATE_KEY)]
    del subs
    gc.collect()
    base = rss_mib()
    cpu, wall = time.process_time(), time.perf_counter()
    loaded = worker.load(*request)  # type: ignore[arg-type]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    count = len(request[0])  # type: ignore[arg-type]
    request.clear()
    gc.collect()
    per_sub = 1024 * (rss_mib() - base) / max(count, 1)
    load = os.getloadavg()[0]
    print(
        f"worker load: {loaded if saves else count} in {cpu:.1f} CPU s ({wall:.1f} s on the "
        f"clock; load average {load:.2f}); {per_sub:.2f} KiB resident a subscription",
        flush=True,
    )
    record(
        "worker_start",
        {
            "subs": count,
            "restored": bool(getattr(loaded, "restored", False)),
            "cpu_s": cpu,
            "wall_s": wall,
            "kib_per_sub": per_sub,
        },
        reference=reference,
    )
    if args.save and saves:
        saver = worker._saver
        assert saver is not None
        saver.last_change -= 3600  # quiet long enough: save now, in this process
        cpu, wall = time.process_time(), time.perf_counter()
        private = 0.0
        while (again := saver.poll(worker.matchers, lambda: None)) is not None:
            if saver._child is not None:
                private = max(private, _proc.private_mib(saver._child[0]))
            time.sleep(min(again, 0.2))
        child = os.times()
        print(
            f"state saved in {time.perf_counter() - wall:.1f} s (this process "
            f"{time.process_time() - cpu:.1f} CPU s, a forked child "
            f"{child.children_user + child.children_system:.1f} CPU s, its private memory "
            f"up to {private:.0f} MiB: pages copied on write and its own)",
            flush=True,
        )
    stamp("end")


if __name__ == "__main__":
    main()
