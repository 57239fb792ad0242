"""Benchmark of the broker service (not a test): a real server process, N subscriptions,
K Server-Sent-Events clients, publishers at rising rates.

Every event carries a probe triple ``_:m <probe> "<n>"``; each SSE client listens to its own
probe subscription, so post-to-notification latency is measured per event and per client.
The other N - K subscriptions come from bench/semantic.py's generator (same vocabulary as
the events). Reports per rate: events/s acknowledged, p50/p99 post->202 and post->notified.

    .venv/bin/python bench/service.py [--subs 10000] [--clients 100] [--rates 10,25,50,100,200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import semantic as gen  # noqa: E402

PROBE = "http://bench.example/probe"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ntriples(event: object, n: int) -> bytes:
    from semps.ingest.terms import n3

    lines = [f"{n3(s)} <{p}> {n3(o)} ." for s, p, o in event.triples]  # type: ignore[attr-defined]
    lines.append(f'_:m <{PROBE}> "{n}" .')
    return "\n".join(lines).encode()


async def listen(
    url: str, token: str, sub_id: str, sent: dict[int, float], lat: list[float]
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream(
            "GET", f"{url}/subscriptions/{sub_id}/notifications", headers=headers
        ) as r:
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    for sol in json.loads(line[6:])["solutions"]:
                        n = int(sol["v"].strip('"'))
                        if n in sent:
                            lat.append(time.perf_counter() - sent[n])


def ms(values: list[float], quantile: float) -> float:
    """A quantile in milliseconds."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * quantile))]


async def publish_at(
    pub: httpx.AsyncClient, rate: int, seconds: float, counter: int, events: list, sent: dict
) -> tuple[int, list[float], float]:
    """Post events at ``rate`` per second for ``seconds``; returns (counter, 202 latencies,
    elapsed)."""
    acks: list[float] = []

    async def post_one(n: int) -> None:
        sent[n] = start = time.perf_counter()
        r = await pub.post("/events", content=ntriples(events[n % len(events)], n))
        if r.status_code == 202:
            acks.append(time.perf_counter() - start)

    begin = time.perf_counter()
    tasks = []
    for i in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, begin + i / rate - time.perf_counter()))
        counter += 1
        tasks.append(asyncio.create_task(post_one(counter)))
    await asyncio.gather(*tasks)
    return counter, acks, time.perf_counter() - begin


async def run(args: argparse.Namespace) -> None:
    data = Path(tempfile.mkdtemp(prefix="semps-bench-"))
    tok = {
        r: subprocess.run(
            [
                sys.executable,
                "-m",
                "semps",
                "token",
                "create",
                "--role",
                r,
                "--data-dir",
                str(data),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for r in ("admin", "publisher", "subscriber")
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "semps", "serve", "--port", str(port), "--data-dir", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                httpx.get(url + "/health")
                break
            except httpx.TransportError:
                await asyncio.sleep(0.1)
        rng = random.Random(1)
        sub_h = {"Authorization": f"Bearer {tok['subscriber']}"}
        async with httpx.AsyncClient(base_url=url, headers=sub_h, timeout=60) as sub:
            t0 = time.perf_counter()
            probes = []
            for _ in range(args.clients):
                r = await sub.post(
                    "/subscriptions", content=f"SELECT ?v WHERE {{ ?m <{PROBE}> ?v }}"
                )
                probes.append(r.json()["id"])
            for _ in range(args.subs - args.clients):
                await sub.post("/subscriptions", content=gen.subscription(rng))
            took = time.perf_counter() - t0
            print(f"registered {args.subs} subscriptions over HTTP in {took:.1f} s")
        sent: dict[int, float] = {}
        lat: list[float] = []
        listeners = [
            asyncio.create_task(listen(url, tok["subscriber"], p, sent, lat)) for p in probes
        ]
        await asyncio.sleep(1.0)
        events = [gen.event(rng, rng.randint(20, 50)) for _ in range(2000)]
        pub_h = {
            "Authorization": f"Bearer {tok['publisher']}",
            "Content-Type": "application/n-triples",
        }
        counter = 0
        print(
            f"{'rate':>6} {'acked ev/s':>10} {'202 p50':>8} {'202 p99':>8} "
            f"{'notify p50':>10} {'notify p99':>10}"
        )
        async with httpx.AsyncClient(
            base_url=url, headers=pub_h, timeout=60, limits=httpx.Limits(max_connections=64)
        ) as pub:
            for rate in map(int, args.rates.split(",")):
                lat.clear()
                counter, acks, elapsed = await publish_at(
                    pub, rate, args.seconds, counter, events, sent
                )
                await asyncio.sleep(1.0)
                print(
                    f"{rate:>6} {len(acks) / elapsed:>10.1f} {ms(acks, 0.5):>8.1f} "
                    f"{ms(acks, 0.99):>8.1f} {ms(lat, 0.5):>10.1f} {ms(lat, 0.99):>10.1f}"
                    f"   (ms; {len(lat)} notifications)",
                    flush=True,
                )
        for task in listeners:
            task.cancel()
    finally:
        server.terminate()  # open SSE streams make a graceful stop slow: then kill
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description="semps service benchmark")
    parser.add_argument("--subs", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rates", default="10,25,50,100,200")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
