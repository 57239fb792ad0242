"""Benchmark of the broker service (not a test): a real server process, real clients.

Set-up: ``semps serve`` on a fresh data directory, the synthetic ontology of
bench/semantic.py (``PUT /ontology``), N subscriptions from its generator registered over
HTTP, plus two probe subscriptions whose Server-Sent Events streams two clients read for the
whole run. Then, each for ``--seconds``:

1. ``single``: P publishers each POST one event at a time to ``/events`` (closed loop: the
   next as soon as the 202 arrives); events/s acknowledged, POST->202 p50/p99/max, and
   publish->notification p50/p99 seen by the SSE clients;
2. ``batch``: the same publishers POST ``/events/batch`` with B events each;
3. ``in-process``: the same matcher code (SemanticMatcher.match_batch) on the same
   subscriptions, ontology and events, in this process, one core, under the workers' GC
   schedule (semps.gcpolicy): the ceiling.

Publishers speak HTTP/1.1 over keep-alive asyncio sockets (no client library), so the
client's own CPU stays small next to the server's on a 2-core machine.

    .venv/bin/python bench/service.py [--subs 10000] [--publishers 16] [--seconds 10]
        [--batch 100] [--workers 2] [--modes single,batch,in-process]

Against another checkout (the previous release, for side-by-side figures), put it first on
the path: ``PYTHONPATH=/tmp/semps-prev bench/service.py ...`` (the server inherits it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).parent))
import _proc  # noqa: E402
import semantic as gen  # noqa: E402
from _common import (  # noqa: E402
    OUTSIDE,
    SEMPS,
    Served,
    create_tokens,
    quantile,
    serve,
    workers_option,
)
from _common import ntriples as event_lines  # noqa: E402
from _machine import reference_ms, stamp  # noqa: E402
from _results import record  # noqa: E402

PROBE = "http://bench.example/probe"


def ntriples(event: object, n: int) -> bytes:
    return f'{event_lines(event)}\n_:m <{PROBE}> "{n}" .'.encode()


def ontology_ntriples(rng: random.Random) -> bytes:
    return "\n".join(f"<{s}> <{p}> <{o}> ." for s, p, o in gen.ontology(rng)).encode()


class Connection:
    """A keep-alive HTTP/1.1 connection that posts and reads one response at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def publishing(
    port: int, publishers: int, one: Callable[[Connection], Awaitable[None]]
) -> float:
    """Runs ``one`` on each of ``publishers`` connections at once; the seconds it took."""
    conns = [await Connection.open(port) for _ in range(publishers)]
    begin = time.perf_counter()
    await asyncio.gather(*(one(c) for c in conns))
    elapsed = time.perf_counter() - begin
    for c in conns:
        c.close()
    return elapsed


async def listen(
    url: str, token: str, sub_id: str, sent: dict[int, float], lat: list[float]
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream(
            "GET", f"{url}/subscriptions/{sub_id}/notifications", headers=headers
        ) as r:
            # Raw bytes split here, and orjson: httpx's line decoder and json cost the
            # bench more CPU than the notifications cost the server to send.
            rest = b""
            async for chunk in r.aiter_raw():
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line.startswith(b"data: "):
                        for sol in orjson.loads(line[6:])["solutions"]:
                            n = int(sol["v"].strip('"'))
                            if n in sent:
                                lat.append(time.perf_counter() - sent.pop(n))


async def publishers(
    port: int,
    token: str,
    bodies: list[bytes],
    args: argparse.Namespace,
    batch: int,
    sent: dict[int, float],
) -> tuple[int, list[float], float, int]:
    """P closed-loop publishers for ``args.seconds``; returns (events acknowledged, POST
    latencies, elapsed, errors); ``sent`` gets each probe number's send time."""
    acks: list[float] = []
    counter = [0, 0, 0]  # next probe number, events acknowledged, errors
    stop = time.perf_counter() + args.seconds
    headers = {"Authorization": f"Bearer {token}"}

    def body(n: int) -> bytes:
        return bodies[n % len(bodies)] + f'\n_:m <{PROBE}> "{n}" .'.encode()

    async def one(conn: Connection) -> None:
        while time.perf_counter() < stop:
            counter[0] += batch
            first = counter[0] - batch
            start = time.perf_counter()
            if batch == 1:
                sent[first] = start
                h = {**headers, "Content-Type": "application/n-triples"}
                status, _ = await conn.post("/events", body(first), h)
                ok = status == 202
                done = 1 if ok else 0
            else:
                items = [
                    {"media_type": "application/n-triples", "body": body(n).decode()}
                    for n in range(first, first + batch)
                ]
                for n in range(first, first + batch):
                    sent[n] = start
                h = {**headers, "Content-Type": "application/json"}
                status, raw = await conn.post("/events/batch", orjson.dumps({"events": items}), h)
                ok = status == 202
                done = sum(1 for e in orjson.loads(raw)["events"] if "id" in e) if ok else 0
            if ok:
                acks.append(time.perf_counter() - start)
                counter[1] += done
            else:
                counter[2] += 1

    elapsed = await publishing(port, args.publishers, one)
    return counter[1], acks, elapsed, counter[2]


def in_process(subs: list[str], onto: bytes, events: list[object], seconds: float) -> float:
    """Events/s of the same matcher on the same workload in this process (one core)."""
    from semps.gcpolicy import SERVING_THRESHOLDS, BatchCollector
    from semps.ingest.rdf import read_event
    from semps.matcher.base import MatchContext
    from semps.matcher.semantic import SemanticMatcher
    from semps.matcher.values import Subscription
    from semps.ontology.store import OntologyStore

    store = OntologyStore()
    store.load(onto, format="application/n-triples")
    expansion = store.expansion()
    matcher = SemanticMatcher()
    for i, text in enumerate(subs):
        matcher.add(Subscription(f"s{i}", "semantic", text))
    collector = BatchCollector()  # the workers' GC schedule
    gc.set_threshold(*SERVING_THRESHOLDS)
    parsed = [
        read_event(ntriples(e, i), event_id=f"e{i}", media_type="application/n-triples")
        for i, e in enumerate(events)
    ]
    done, begin = 0, time.perf_counter()
    while time.perf_counter() - begin < seconds:
        chunk = parsed[done % len(parsed) : done % len(parsed) + 100] or parsed[:100]
        with collector.batch():
            matcher.match_batch([MatchContext(e, expansion) for e in chunk])
        done += len(chunk)
    return done / (time.perf_counter() - begin)


async def run(args: argparse.Namespace) -> None:
    reference = reference_ms()  # the machine's speed, beside every recorded row
    reused = args.data_dir is not None
    data = args.data_dir if reused else Path(tempfile.mkdtemp(prefix="semps-bench-"))
    if reused:
        probes, owner = stored_probes(data)
        tok = create_tokens(data, {r: r for r in ("admin", "publisher")})
        tok["subscriber"] = subscriber_token(data, owner)
    else:
        tok = create_tokens(data, {r: r for r in ("admin", "publisher", "subscriber")})
    extra = ["--max-subscriptions", str(args.subs + 10)]  # one subscriber holds them all
    if args.workers:
        extra += ["--workers", str(args.workers)]
    if args.match_timeout:
        extra += ["--match-timeout", str(args.match_timeout)]
    server_log = (data / "server.log").open("ab" if reused else "wb")  # restarts, if any
    if reused:
        server = await restart(None, data, extra, server_log, tok["publisher"], args, reference)
    else:
        server = serve(data, extra, log=server_log)
    url, port = server.url, server.port
    rng = random.Random(1)
    onto = ontology_ntriples(random.Random(7))
    subs = [gen.subscription(rng) for _ in range(args.subs)]
    events = [gen.event(rng, rng.randint(20, 50)) for _ in range(2000)]
    bodies = [ntriples(e, 0).rsplit(b"\n", 1)[0] for e in events]
    try:
        if not reused:
            admin = {"Authorization": f"Bearer {tok['admin']}"}
            r = httpx.put(
                url + "/ontology",
                content=onto,
                headers={**admin, "Content-Type": "application/n-triples"},
            )
            r.raise_for_status()
            probes = await register_all(url, port, tok, subs, server.process.pid, args, reference)
        if args.restart and not reused:
            server = await restart(
                server, data, extra, server_log, tok["publisher"], args, reference
            )
            url, port = server.url, server.port
        print(
            f"{'mode':<12} {'events/s':>9} {'POST p50':>9} {'p99':>8} {'max':>8} "
            f"{'notify p50':>10} {'p99':>8} {'errors':>6}"
        )
        modes = (("single", 1), ("batch", args.batch))
        for mode, batch in (m for m in modes if m[0] in args.modes.split(",")):
            cpu_before = _cpu_seconds(server.process.pid)
            client_before = time.process_time()
            lat: list[float] = []
            sent_box: dict[int, float] = {}
            listeners = [
                asyncio.create_task(listen(url, tok["subscriber"], p, sent_box, lat))
                for p in probes
            ]
            await asyncio.sleep(0.5)
            n, acks, elapsed, errors = await publishers(
                port, tok["publisher"], bodies, args, batch, sent_box
            )
            await asyncio.sleep(1.0)
            for t in listeners:
                t.cancel()
            print(
                f"{mode + ('' if batch == 1 else f' x{batch}'):<12} {n / elapsed:>9.0f} "
                f"{quantile(acks, 0.5):>9.1f} {quantile(acks, 0.99):>8.1f} "
                f"{quantile(acks, 1.0):>8.1f} {quantile(lat, 0.5):>10.1f} "
                f"{quantile(lat, 0.99):>8.1f} {errors:>6}   (ms; {len(lat)} notifications timed)",
                flush=True,
            )
            main_cpu, worker_cpu = (
                a - b for a, b in zip(_cpu_seconds(server.process.pid), cpu_before, strict=True)
            )
            client_cpu = time.process_time() - client_before
            restarts = (data / "server.log").read_text(errors="replace").count("restarted")
            print(
                f"{'':<12} server CPU per event: main process {1e6 * main_cpu / max(n, 1):.0f} us,"
                f" workers {1e6 * worker_cpu / max(n, 1):.0f} us (this bench's clients"
                f" {1e6 * client_cpu / max(n, 1):.0f} us); load average"
                f" {os.getloadavg()[0]:.2f}; worker restarts so far {restarts}",
                flush=True,
            )
            record(
                "service",
                {
                    "subs": args.subs,
                    "mode": mode if batch == 1 else f"{mode} x{batch}",
                    "events_s": n / elapsed,
                    "post_p50_ms": quantile(acks, 0.5),
                    "post_p99_ms": quantile(acks, 0.99),
                    "post_max_ms": quantile(acks, 1.0),
                    "notify_p50_ms": quantile(lat, 0.5),
                    "notify_p99_ms": quantile(lat, 0.99),
                    "errors": errors,
                    "main_us_per_event": 1e6 * main_cpu / max(n, 1),
                    "workers_us_per_event": 1e6 * worker_cpu / max(n, 1),
                    "clients_us_per_event": 1e6 * client_cpu / max(n, 1),
                },
                reference=reference,
            )
        if "in-process" not in args.modes.split(","):
            return
        rate = in_process(subs, onto, events, args.seconds)
        print(f"{'in-process':<12} {rate:>9.0f}   (the same matcher, one core, batches of 100)")
        record(
            "service",
            {"subs": args.subs, "mode": "in-process", "events_s": rate},
            reference=reference,
        )
    finally:
        server_log.close()
        stop(server.process)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        print("the server did not stop within 60 s of SIGTERM", flush=True)


async def register_singly(port: int, token: str, texts: list[str], clients: int) -> list[str]:
    """Register ``texts`` one a request from ``clients`` keep-alive connections; the ids."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    ids: list[str] = [""] * len(texts)
    todo = iter(range(len(texts)))

    async def client(conn: Connection) -> None:
        for i in todo:
            status, raw = await conn.post("/subscriptions", texts[i].encode(), headers)
            if status != 201:
                raise RuntimeError(f"registration answered {status}: {raw[:200]!r}")
            ids[i] = orjson.loads(raw)["id"]

    conns = [await Connection.open(port) for _ in range(clients)]
    await asyncio.gather(*(client(c) for c in conns))
    for c in conns:
        c.close()
    return ids


async def register_bulk(port: int, token: str, texts: list[str], chunk: int) -> list[str] | None:
    """Register ``texts`` through ``POST /subscriptions/batch``, ``chunk`` a request (one
    subscription a line); ``None`` if the server has no such endpoint."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    conn = await Connection.open(port)
    ids: list[str] = []
    try:
        for start in range(0, len(texts), chunk):
            body = "\n".join(texts[start : start + chunk]).encode()
            status, raw = await conn.post("/subscriptions/batch", body, headers)
            if status in (404, 405) and not ids:
                return None
            if status != 200:
                raise RuntimeError(f"the batch answered {status}: {raw[:200]!r}")
            results = orjson.loads(raw)["subscriptions"]
            refused = [r for r in results if "id" not in r]
            if refused:
                raise RuntimeError(f"{len(refused)} refused, the first: {refused[0]}")
            ids += [r["id"] for r in results]
    finally:
        conn.close()
    return ids


async def first_event(url: str, publisher: str) -> float:
    """Publish one event; the ``perf_counter`` time its 202 arrived (it is matched first)."""
    headers = {"Authorization": f"Bearer {publisher}", "Content-Type": "application/n-triples"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=600) as client:
        r = await client.post("/events", content=f'_:m <{PROBE}> "0" .'.encode())
        r.raise_for_status()
    return time.perf_counter()


def rss_mib(pid: int) -> tuple[float, float]:
    """Resident memory (MiB) of the server's main process and of its children (workers)."""
    return _proc.rss_mib(pid), sum(_proc.rss_mib(c) for c in _proc.children(pid))


async def register_all(
    url: str,
    port: int,
    tokens: dict[str, str],
    subs: list[str],
    pid: int,
    args: argparse.Namespace,
    reference: float,
) -> list[str]:
    """The registration phase: two probes, ``--single`` subscriptions one a request from
    ``--clients`` connections, the rest in bulk (or singly, on a server without the bulk
    endpoint); rates, and resident memory per subscription. After each, one event is
    published: the seconds until it is acknowledged (matched against every subscription
    answered: a server that indexes after answering does it first) are the phase's
    "indexed" time. Returns the probes' ids."""
    token = tokens["subscriber"]
    probe = f"SELECT ?v WHERE {{ ?m <{PROBE}> ?v }}"
    base_main, base_workers = rss_mib(pid)
    probes = await register_singly(port, token, [probe, probe], 1)
    single, rest = subs[: args.single], subs[args.single :]
    phases = [("single", single)] if single else []
    phases += [("bulk", rest)] if rest else []
    for mode, texts in phases:
        t0 = time.perf_counter()
        cpu0 = _cpu_seconds(pid)
        ids = None
        if mode == "bulk":
            ids = await register_bulk(port, token, texts, args.bulk_chunk)
            if ids is None:
                mode = "single (no bulk endpoint)"
        if ids is None:
            ids = await register_singly(port, token, texts, args.clients)
        took = time.perf_counter() - t0
        main_cpu, worker_cpu = (a - b for a, b in zip(_cpu_seconds(pid), cpu0, strict=True))
        load = os.getloadavg()[0]
        indexed = await first_event(url, tokens["publisher"]) - t0
        main_all, workers_all = (a - b for a, b in zip(_cpu_seconds(pid), cpu0, strict=True))
        label = mode if mode != "single" else f"single x{args.clients}"
        print(
            f"registered {len(ids)} subscriptions over HTTP, {label}, in {took:.2f} s "
            f"({len(ids) / took:.0f}/s; server CPU main {main_cpu:.1f} s, workers "
            f"{worker_cpu:.1f} s; load average {load:.2f}); an event published then "
            f"acknowledged {indexed:.2f} s after the start ({len(ids) / indexed:.0f}/s; "
            f"CPU main {main_all:.1f} s, workers {workers_all:.1f} s)",
            flush=True,
        )
        record(
            "service",
            {
                "subs": args.subs,
                "mode": f"register {label}",
                "registered": len(ids),
                "subs_s": len(ids) / took,
                "main_cpu_s": main_cpu,
                "workers_cpu_s": worker_cpu,
                "indexed_s": indexed,
                "indexed_main_cpu_s": main_all,
                "indexed_workers_cpu_s": workers_all,
            },
            reference=reference,
        )
    main_mib, workers_mib = rss_mib(pid)
    per_sub = 1024 * ((main_mib - base_main) + (workers_mib - base_workers)) / max(len(subs), 1)
    print(
        f"resident memory: main process {main_mib:.0f} MiB, workers {workers_mib:.0f} MiB "
        f"together; {per_sub:.2f} KiB a subscription over the empty server (all processes)",
        flush=True,
    )
    record(
        "service",
        {
            "subs": args.subs,
            "mode": "memory",
            "rss_main_mib": main_mib,
            "rss_workers_mib": workers_mib,
            "rss_kib_per_sub": per_sub,
        },
        reference=reference,
    )
    return probes


async def settle(pid: int, quiet: float = 0.05, polls: int = 3, most: float = 600) -> float:
    """Wait until the server's processes use under ``quiet`` CPU seconds a second for
    ``polls`` seconds in a row (at most ``most`` seconds); the seconds waited."""
    start, calm = time.perf_counter(), 0
    before = sum(_cpu_seconds(pid))
    while calm < polls and time.perf_counter() - start < most:
        await asyncio.sleep(1.0)
        now = sum(_cpu_seconds(pid))
        calm = calm + 1 if now - before < quiet else 0
        before = now
    return time.perf_counter() - start


async def restart(
    server: Served | None,
    data: Path,
    extra: list[str],
    log: IO[bytes],
    publisher: str,
    args: argparse.Namespace,
    reference: float,
) -> Served:
    """Once the server has settled (its workers' idle work done: the snapshot's parts
    written, the index saved), stop it and start it again on the same data directory
    (``server`` ``None``: start it on a data directory made before): seconds until
    ``/health`` answers, and until a first event is acknowledged (the workers loaded),
    with the CPU seconds of the server's processes and its resident memory then."""
    if server is not None:
        settled = await settle(server.process.pid)
        print(f"the server settled {settled:.1f} s after the registrations", flush=True)
        stop(server.process)
    t0 = time.perf_counter()
    served = serve(data, extra, log=log, wait=600)
    up = time.perf_counter() - t0
    headers = {"Authorization": f"Bearer {publisher}", "Content-Type": "application/n-triples"}
    async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=600) as client:
        body = f'_:m <{PROBE}> "0" .'.encode()
        (await client.post("/events", content=body)).raise_for_status()
    ready = time.perf_counter() - t0
    load = os.getloadavg()[0]
    main_cpu, workers_cpu = _cpu_seconds(served.process.pid)
    main_mib, workers_mib = rss_mib(served.process.pid)
    per_sub = 1024 * (main_mib + workers_mib) / max(args.subs, 1)
    print(
        f"restart from the data directory: /health after {up:.1f} s, the first event "
        f"acknowledged after {ready:.1f} s (server CPU main {main_cpu:.1f} s, workers "
        f"{workers_cpu:.1f} s; load average {load:.2f}); resident memory then: main "
        f"{main_mib:.0f} MiB, workers {workers_mib:.0f} MiB, {per_sub:.2f} KiB a "
        "subscription (all processes)",
        flush=True,
    )
    record(
        "service",
        {
            "subs": args.subs,
            "mode": "restart",
            "health_s": up,
            "ready_s": ready,
            "main_cpu_s": main_cpu,
            "workers_cpu_s": workers_cpu,
            "rss_main_mib": main_mib,
            "rss_workers_mib": workers_mib,
            "rss_kib_per_sub": per_sub,
        },
        reference=reference,
    )
    return served


def stored_probes(data: Path) -> tuple[list[str], str]:
    """The probe subscriptions of a data directory an earlier run made, and their owner."""
    db = sqlite3.connect(f"file:{data / 'semps.sqlite3'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT id, owner FROM subscriptions WHERE text LIKE ? ORDER BY rowid",
            (f"%{PROBE}%",),
        ).fetchall()
    finally:
        db.close()
    if not rows:
        raise SystemExit(f"{data} holds no probe subscription: not made by this bench")
    return [r[0] for r in rows], rows[0][1]


def subscriber_token(data: Path, owner: str) -> str:
    """A subscriber token for ``owner`` (the probes' owner) on ``data``."""
    argv = ["token", "create", "--role", "subscriber", "--subject", owner]
    argv += ["--data-dir", str(data.resolve())]
    return subprocess.run(
        [*SEMPS, *argv], capture_output=True, cwd=OUTSIDE, text=True, check=True
    ).stdout.strip()


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds of the server's main process and of its children (the workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    children = _proc.children(pid)

    def cpu(p: int) -> float:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            return 0.0

    return cpu(pid), sum(cpu(c) for c in children)


def main() -> None:
    parser = argparse.ArgumentParser(description="semps service benchmark")
    parser.add_argument("--subs", type=int, default=10_000)
    parser.add_argument("--publishers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument(
        "--single", type=int, default=10_000, help="subscriptions registered one a request"
    )
    parser.add_argument("--clients", type=int, default=32, help="connections registering them")
    parser.add_argument(
        "--bulk-chunk", type=int, default=100_000, help="subscriptions a bulk request"
    )
    parser.add_argument(
        "--match-timeout",
        type=float,
        default=0,
        help="the server's watchdog budget, seconds (0: its default; raise it on a loaded "
        "machine, where the default kills and reloads workers mid-run)",
    )
    parser.add_argument(
        "--restart", action="store_true", help="restart on the data directory before publishing"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="start on this data directory (an earlier run's, of as many --subs) instead of "
        "registering: the start is timed as a restart",
    )
    workers_option(parser)
    parser.add_argument(
        "--modes",
        default="single,batch,in-process",
        help="which runs, comma-separated (default: all three)",
    )
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    stamp("start")
    try:  # the server's event loop (uvicorn's), for the clients too: their CPU shares the cores
        import uvloop
    except ImportError:
        asyncio.run(run(args))
    else:
        uvloop.run(run(args))
    stamp("end")


if __name__ == "__main__":
    main()
