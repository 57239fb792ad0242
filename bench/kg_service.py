"""The knowledge graph through a real `semps serve` (not a test; issue 33's service targets).

On a campus written by ``bench/knowledge_graph.py write DIR`` (Brick, a building graph,
subscriptions, telemetry events):

1. ``PUT /ontology`` (Brick), then each graph file ``POST /graph`` (merged): triples/s,
   the closure included, answered once committed;
2. the first ``--subs`` subscriptions registered over HTTP (``/subscriptions/batch``);
3. ``--publishers`` closed-loop publishers POST single telemetry events to ``/events`` for
   ``--seconds`` (after a first event, timed alone: the workers' warm-up): events/s
   acknowledged, POST->202 p50/p99;
4. ``--updates`` one-triple SPARQL Updates (``INSERT DATA``), one after another, each
   changing a probe subscription's answers: POST->200 (the change and its notifications
   committed, and visible to the next event) and POST->the probe's notification on its SSE
   stream, p50/p99/max;
5. a further load of ``--extra-triples`` triples (the campus' first graph lines, its
   individuals renamed) while one publisher posts single events: the events' POST->202
   during the load against the load's own time (how long an edit holds up matching).

    .venv/bin/python bench/knowledge_graph.py write /tmp/campus --triples 100000 \\
        --subs 10000 --events 2000
    .venv/bin/python bench/kg_service.py /tmp/campus [--subs 10000] [--publishers 8]
        [--seconds 10] [--updates 50] [--workers 2] [--load-only]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _common import create_tokens, quantile, serve, workers_option  # noqa: E402
from _machine import stamp, tree_cpu  # noqa: E402
from service import Connection, _cpu_seconds, publishing  # noqa: E402

MARKER = "urn:bench:Marker"


def _load(url: str, token: str, folder: Path, pid: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=None) as client:
        onto = (folder / "ontology.owl").read_bytes()
        put = client.put("/ontology", content=onto, headers={"Content-Type": "application/rdf+xml"})
        put.raise_for_status()
        inserted, inferred, t0, cpu0 = 0, 0, time.perf_counter(), tree_cpu(pid)
        for path in sorted((folder / "graph").iterdir()):
            edit = client.post(
                "/graph",
                content=path.read_bytes(),
                headers={"Content-Type": "application/n-triples"},
            )
            edit.raise_for_status()
            inserted += edit.json()["inserted"]
            inferred += edit.json()["inferred_added"]
        seconds, cpu = time.perf_counter() - t0, tree_cpu(pid) - cpu0
    print(
        f"graph load over HTTP: {inserted} triples ({inferred} inferred) in {seconds:.1f} s, "
        f"{inserted / seconds:,.0f} triples/s; server CPU {cpu:.1f} s "
        f"({inserted / max(cpu, 1e-9):,.0f} triples a CPU-second); load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def _subscribe(url: str, token: str, folder: Path, count: int) -> list[str]:
    """The first ``count`` subscriptions through ``POST /subscriptions/batch`` (1,000 a
    request, each on one line), then the probe; returns the probe's id."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    texts = [
        " ".join(p.read_text().split("\n"))
        for p in sorted((folder / "subscriptions").iterdir())[:count]
    ]
    registered = 0
    t0 = time.perf_counter()
    with httpx.Client(base_url=url, headers=headers, timeout=None) as client:
        for start in range(0, len(texts), 1000):
            body = "\n".join(texts[start : start + 1000]).encode()
            answer = client.post("/subscriptions/batch", content=body)
            answer.raise_for_status()
            registered += sum("id" in r for r in answer.json()["subscriptions"])
        probe = client.post(
            "/subscriptions",
            content=f"SELECT ?x WHERE {{ ?x a <{MARKER}> }}",
            headers={"Content-Type": "application/sparql-query"},
        )
        probe.raise_for_status()
    print(f"{registered} subscriptions registered in {time.perf_counter() - t0:.1f} s", flush=True)
    return [probe.json()["id"]]


async def _publish(
    port: int, pid: int, token: str, bodies: list[bytes], args: argparse.Namespace
) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/n-triples"}
    acks: list[float] = []
    errors = [0]
    stop = time.perf_counter() + args.seconds
    counter = [0]

    async def one(conn: Connection) -> None:
        while time.perf_counter() < stop:
            body = bodies[counter[0] % len(bodies)]
            counter[0] += 1
            start = time.perf_counter()
            status, _ = await conn.post("/events", body, headers)
            if status == 202:
                acks.append(time.perf_counter() - start)
            else:
                errors[0] += 1

    warm = await Connection.open(port)
    t0 = time.perf_counter()
    status, _ = await warm.post("/events", bodies[0], headers)  # the workers warm
    print(f"first event: {status} in {time.perf_counter() - t0:.1f} s", flush=True)
    warm.close()
    spy = _spy(pid, args.seconds)
    cpu0 = _cpu_seconds(pid)
    elapsed = await publishing(port, args.publishers, one)
    main_cpu, worker_cpu = (a - b for a, b in zip(_cpu_seconds(pid), cpu0, strict=True))
    n = max(len(acks), 1)
    print(
        f"single POST /events, {args.publishers} publishers: {len(acks) / elapsed:,.0f} events/s,"
        f" POST->202 p50 {quantile(acks, 0.5):.1f} ms p99 {quantile(acks, 0.99):.1f}"
        f" ms, {errors[0]} errors; server CPU an event: main process {1e3 * main_cpu / n:.2f} ms,"
        f" workers {1e3 * worker_cpu / n:.2f} ms; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if spy is not None:
        spy.wait(60)


def _spy(pid: int, seconds: float) -> subprocess.Popen[bytes] | None:
    """With ``SPY=FILE``, py-spy (if installed beside this Python) samples the server and its
    workers during the publishing phase into FILE (collapsed stacks)."""
    out = os.environ.get("SPY")
    if not out:
        return None
    spy = Path(sys.executable).parent / "py-spy"
    cmd = [str(spy), "record", "--pid", str(pid), "--subprocesses", "--format", "raw"]
    cmd += ["--duration", str(int(seconds)), "--output", out, "--rate", "200"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _updates(url: str, tokens: dict[str, str], probe: str, count: int) -> None:
    seen: dict[str, float] = {}
    arrived = threading.Condition()

    def listen() -> None:
        headers = {"Authorization": f"Bearer {tokens['subscriber']}"}
        with httpx.Client(timeout=None) as client:
            with client.stream(
                "GET", f"{url}/subscriptions/{probe}/notifications", headers=headers
            ) as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        for sol in orjson.loads(line[6:])["solutions"]:
                            with arrived:
                                seen[sol["x"]] = time.perf_counter()
                                arrived.notify_all()

    threading.Thread(target=listen, daemon=True).start()
    time.sleep(0.5)  # the stream open before the first update (a bench, not a test)
    headers = {
        "Authorization": f"Bearer {tokens['publisher']}",
        "Content-Type": "application/sparql-update",
    }
    acked, notified = [], []
    with httpx.Client(base_url=url, headers=headers, timeout=None) as client:
        for i in range(count):
            node = f"<urn:bench:m{i}>"
            start = time.perf_counter()
            answer = client.post("/graph", content=f"INSERT DATA {{ {node} a <{MARKER}> }}")
            answer.raise_for_status()
            acked.append(time.perf_counter() - start)
            with arrived:
                arrived.wait_for(lambda n=node: n in seen, 30)  # type: ignore[misc]
                notified.append(seen[node] - start)
    for name, values in (("POST->200", acked), ("POST->notification", notified)):
        print(
            f"one-triple update {name}: p50 {quantile(values, 0.5):.1f} ms"
            f" p99 {quantile(values, 0.99):.1f} ms max {1000 * max(values):.1f} ms",
            flush=True,
        )


def _during_load(
    url: str, port: int, tokens: dict[str, str], folder: Path, args: argparse.Namespace
) -> None:
    first = sorted((folder / "graph").iterdir())[-1]
    with first.open("rb") as f:
        lines = [next(f) for _ in range(args.extra_triples)]
    body = re.sub(rb"<http://(?!www\.w3\.org)", b"<http://copy.", b"".join(lines))
    bodies = [p.read_bytes() for p in sorted((folder / "events").iterdir())[:200]]
    latencies: list[float] = []
    errors: list[int] = []
    loading = threading.Event()

    def publish() -> None:
        headers = {
            "Authorization": f"Bearer {tokens['publisher']}",
            "Content-Type": "application/n-triples",
        }
        with httpx.Client(base_url=url, headers=headers, timeout=None) as client:
            i = 0
            while loading.is_set():
                t0 = time.perf_counter()
                answer = client.post("/events", content=bodies[i % len(bodies)])
                latencies.append(time.perf_counter() - t0)
                if answer.status_code != 202:
                    errors.append(answer.status_code)
                i += 1

    headers = {
        "Authorization": f"Bearer {tokens['publisher']}",
        "Content-Type": "application/n-triples",
    }
    loading.set()
    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    t0 = time.perf_counter()
    with httpx.Client(base_url=url, headers=headers, timeout=None) as client:
        edit = client.post("/graph", content=body)
        edit.raise_for_status()
    seconds = time.perf_counter() - t0
    loading.clear()
    publisher.join(120)
    print(
        f"load of {edit.json()['inserted']} triples ({edit.json()['inferred_added']} inferred)"
        f" in {seconds:.2f} s; {len(latencies)} events meanwhile, POST->202"
        f" p50 {quantile(latencies, 0.5):.0f} ms max {1000 * max(latencies):.0f} ms,"
        f" {len(errors)} not accepted {sorted(set(errors))}",
        flush=True,
    )


def _after_load(
    url: str, port: int, pid: int, tokens: dict[str, str], args: argparse.Namespace
) -> None:
    """Steps 2-5."""
    (probe,) = _subscribe(url, tokens["subscriber"], args.folder, args.subs)
    bodies = [p.read_bytes() for p in sorted((args.folder / "events").iterdir())]
    asyncio.run(_publish(port, pid, tokens["publisher"], bodies, args))
    _updates(url, tokens, probe, args.updates)
    _during_load(url, port, tokens, args.folder, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--subs", type=int, default=10_000)
    parser.add_argument("--publishers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--updates", type=int, default=50)
    workers_option(parser, default=2)
    parser.add_argument("--extra-triples", type=int, default=20_000)
    parser.add_argument("--load-only", action="store_true", help="step 1 alone")
    parser.add_argument(
        "--server-log",
        type=Path,
        help="write the server's log here, at debug level (each graph change's phases timed)",
    )
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}; load {os.getloadavg()[0]:.1f}", flush=True)
    stamp("start")
    with tempfile.TemporaryDirectory() as data:
        tokens = create_tokens(Path(data), {r: r for r in ("admin", "publisher", "subscriber")})
        extra = ["--workers", str(args.workers), "--max-body", str(256 << 20)]
        extra += ["--max-subscriptions", str(args.subs + 10)]  # one subscriber holds them all
        if args.server_log is None:
            served = serve(Path(data), extra)
        else:
            log = args.server_log.open("wb")
            served = serve(Path(data), [*extra, "--log-level", "debug"], log=log)
        try:
            _load(served.url, tokens["admin"], args.folder, served.process.pid)
            if not args.load_only:
                _after_load(served.url, served.port, served.process.pid, tokens, args)
        finally:
            served.process.terminate()
            served.process.wait(30)
    stamp("end")
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
