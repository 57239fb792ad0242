"""Benchmark of the HTTP API's lists (not a test): the application of ``semps serve`` in this
process (``httpx.ASGITransport``, no sockets), ``--subs`` subscriptions of one subscriber.

Reports the median time of ``GET /health`` (the floor: routing, the error-counting
middleware), of the first page of ``GET /subscriptions`` at ``limit=100`` and ``limit=1000``,
and of walking every page of 1000 by cursor.

    .venv/bin/python bench/api_pages.py [--subs 5000] [--repeat 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "api"))
from inprocess import InProcess  # noqa: E402


def _median_ms(api: InProcess, path: str, token: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = api.request("GET", path, token=token)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
    return statistics.median(times) * 1000


def _walk_ms(api: InProcess, token: str) -> tuple[int, int, float]:
    start, pages, seen, cursor = time.perf_counter(), 0, 0, None
    while True:
        params: dict[str, object] = {"limit": 1000}
        if cursor is not None:
            params["cursor"] = cursor
        body = api.request("GET", "/subscriptions", token=token, params=params).json()
        pages, seen, cursor = pages + 1, seen + len(body["items"]), body["next"]
        if cursor is None:
            return seen, pages, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subs", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        api = InProcess(Path(tmp) / "data")
        try:
            token = api.token("subscriber", "bench")
            for i in range(args.subs):
                text = f"SELECT ?x WHERE {{ ?x a <http://ex.org/C{i}> }}"
                api.broker.subscribe(text, kind="semantic", owner="bench")
            for label, path in [
                ("GET /health", "/health"),
                ("GET /subscriptions?limit=100", "/subscriptions?limit=100"),
                ("GET /subscriptions?limit=1000", "/subscriptions?limit=1000"),
            ]:
                print(f"{label}: p50 {_median_ms(api, path, token, args.repeat):.2f} ms")
            seen, pages, ms = _walk_ms(api, token)
            print(f"every page of 1000 by cursor: {seen} subscriptions, {pages} pages, {ms:.0f} ms")
        finally:
            api.close()


if __name__ == "__main__":
    main()
