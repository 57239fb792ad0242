"""Noisy-neighbour benchmark of the broker service (not a test; nothing here is asserted).

A real ``semps serve`` (its default 2 matching workers) with the synthetic ontology of
bench/semantic.py plus a transitive property, ``--subs`` ordinary subscriptions from its
generator, and for ``--seconds``:

- a well-behaved publisher posting one generated event at a steady ``--rate`` (open loop:
  each post leaves on schedule, whether or not the previous one was answered), each
  carrying a probe number;
- a well-behaved subscriber reading the Server-Sent Events stream of a probe subscription;
- ``/health`` polled every 0.2 s;
- an attacker (its own subscriber and publisher tokens) sending every hostile input of
  issue 12, registrations once, the rest in rounds ``--attack-pause`` seconds apart; and,
  registered before, ``--family`` subscriptions of one family (a two-step path to a value
  over a bound) with an event each round whose join for each of them has 216,000 rows.

Reported: the good publisher's POST->202 p50/p99/max and refusals, /health latency max,
5xx responses (anyone's), each hostile input's answers (status and error name), lost
notifications (acknowledged probe events missing from the subscriber's stream, ids not
gapless), and the time from SIGTERM to exit, against the issue's targets.

With ``--phases`` (or ``--phases-only``), issue 38's attacks follow, each alone for
``--phase-seconds`` beside the good publisher and /health, with a line of figures each
(bench/_issue38.py): ontology edits that wedged the broker (a 20,000-deep chain, a
2,500-long subPropertyOf cycle, 1,500 someValuesFrom), a 15 MB merge, four concurrent GET
/ontology, 128 MB and 64 MB headers, 1,100 idle connections (``--nofile 1024`` runs the
server under that file limit), 1,100 connections from five addresses kept alive between
requests, 200 slowloris connections, a composite flood, a revoked
token's streams, token guesses, a subscriber's four concurrent cross-product queries of
a 5,000-triple graph beside an admin's one-triple edits (their latencies in the notes).

    .venv/bin/python bench/noisy.py [--subs 1000] [--seconds 30] [--rate 50]
        [--attack-pause 1.0] [--workers 0] [--family 2000] [--skip TEXT ...] [--only TEXT ...]
        [--phases | --phases-only] [--phase-seconds 10] [--only-phase TEXT ...] [--nofile N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
import semantic as gen  # noqa: E402
from _common import answer, create_tokens, ntriples, quantile, serve, workers_option  # noqa: E402
from _issue38 import Ctx, report_phases, run_phases  # noqa: E402
from _results import record  # noqa: E402

EX = "http://ex/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
PROBE = "http://bench.example/probe"
NT = {"Content-Type": "application/n-triples"}


# --- the hostile inputs ---------------------------------------------------------------------


def chain(links: int) -> bytes:
    node = EX + "component/assembly/part-number-"
    lines = [f"<{node}{i:05d}> <{EX}partOf> <{node}{i + 1:05d}> ." for i in range(links)]
    return "\n".join(lines).encode()


def family(n: int) -> list[str]:
    """``n`` subscriptions of one family (a two-step path to a value above a bound): the
    families' compiled pass counts them together, and each match's solutions are found
    one by one."""
    path = f"?x <{EX}link> ?y . ?y <{EX}link> ?z . ?z <{EX}v> ?w"
    return [f"SELECT * {{ {path} FILTER(?w > {i}) }}" for i in range(n)]


def mesh(nodes: int) -> bytes:
    """Every node linked to every node, each with a value above every family member's
    bound: a family member's join has ``nodes ** 3`` rows (60: 216,000)."""
    node = EX + "mesh/"
    lines = [f"<{node}{i}> <{EX}link> <{node}{j}> ." for i in range(nodes) for j in range(nodes)]
    value = '"5000"^^<http://www.w3.org/2001/XMLSchema#integer>'
    lines += [f"<{node}{i}> <{EX}v> {value} ." for i in range(nodes)]
    return "\n".join(lines).encode()


def filtered(expression: str) -> str:
    return f"SELECT ?x {{ ?x <{EX}p> ?y FILTER({expression}) }}"


def _nested_xml() -> bytes:
    head = f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="{EX}">\n<rdf:Description>'
    levels = 32_000  # 1.2 MB
    body = '<ex:p rdf:parseType="Resource">' * levels + "</ex:p>" * levels
    return (head + body + "</rdf:Description>\n</rdf:RDF>").encode()


def _nested_turtle() -> bytes:
    sub = f"<{RDFS}subClassOf>"
    return (f"<{EX}C> {sub} " + f"[ {sub} " * 30_000 + f"<{EX}D>" + " ]" * 30_000 + " .").encode()


def _nested_json() -> bytes:
    level = '{"http://ex/p": '
    return (
        '{"@id": "http://ex/a", "http://ex/p": ' + level * 30_000 + "1" + "}" * 30_000 + "}"
    ).encode()


@dataclass(frozen=True)
class Hostile:
    """One hostile request: who sends it, and whether it repeats every round."""

    name: str
    who: str  # "attacker" (subscriber), "rogue" (publisher), "admin"
    method: str
    path: str
    body: bytes = b""
    headers: dict[str, Any] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    repeat: bool = True


def hostile_inputs(port: int) -> list[Hostile]:
    typed = "\n".join(f"<{EX}n{i}> <{RDF}type> <{EX}C{i % 5}> ." for i in range(20)).encode()
    query_159k = "SELECT * { " + " . ".join(f"?s{i} <{EX}p> ?o{i}" for i in range(5500)) + " }"
    regex = 'SELECT ?x {{ ?x <{}name> ?y FILTER regex(?y, "{}") }}'
    notes = "/subscriptions/{attacker_sub}/notifications"

    def sub(name: str, text: str, **params: str) -> Hostile:
        return Hostile(name, "attacker", "POST", "/subscriptions", text.encode(), params=params)

    def sub_once(name: str, text: str) -> Hostile:
        return Hostile(name, "attacker", "POST", "/subscriptions", text.encode(), repeat=False)

    def event(name: str, body: bytes, media: str = "application/n-triples") -> Hostile:
        return Hostile(name, "rogue", "POST", "/events", body, {"Content-Type": media})

    return [
        sub_once("regex ^(a+)+$ subscription", regex.format(EX, "^(a+)+$")),
        sub_once("regex ^(\\w+\\s?)*$ subscription", regex.format(EX, r"^(\\w+\\s?)*$")),
        event("37 a's and '!' literal", f'<{EX}a> <{EX}name> "{"a" * 37}!" .'.encode()),
        event(
            "'Alice Smith ... nine!' literal",
            f'<{EX}a> <{EX}name> "Alice Smith works for department nine!" .'.encode(),
        ),
        sub_once(
            "1,000-pattern subscription",
            "SELECT * { " + " . ".join(f"?s{i} a ?c{i}" for i in range(1000)) + " }",
        ),
        event("typed event (20 rdf:type)", typed),
        event("500-link transitive chain (51 KB)", chain(500)),
        event("1,000-link transitive chain", chain(1000)),
        sub_once(
            "3 disconnected patterns",
            f"SELECT * {{ ?a <{EX}q> ?b . ?c <{EX}q> ?d . ?e <{EX}q> ?f }}",
        ),
        event("60-node mesh x the family (216k rows)", mesh(60)),
        event(
            "200-triple event (cross product)",
            "\n".join(f"<{EX}x{i}> <{EX}q> <{EX}y{i}> ." for i in range(200)).encode(),
        ),
        sub("159 KB query", query_159k),
        event("nested RDF/XML 1.2 MB", _nested_xml(), "application/rdf+xml"),
        Hostile(
            "nested Turtle ontology (PUT)",
            "admin",
            "PUT",
            "/ontology",
            _nested_turtle(),
            {"Content-Type": "text/turtle"},
        ),
        event("nested JSON-LD", _nested_json(), "application/ld+json"),
        sub_once("FILTER of 500 || terms", filtered(" || ".join(f"?y = {i}" for i in range(500)))),
        sub("FILTER of 50k nested ()", filtered("(" * 50_000 + "?y" + ")" * 50_000)),
        sub("FILTER of 30k nested ()", filtered("(" * 30_000 + "?y" + ")" * 30_000)),
        Hostile(
            "Last-Event-ID: ²",
            "attacker",
            "GET",
            notes,
            headers={"Last-Event-ID": "²".encode()},
        ),
        Hostile(
            "Last-Event-ID: 2^63", "attacker", "GET", notes, headers={"Last-Event-ID": str(2**63)}
        ),
        Hostile("?after=2^63", "attacker", "GET", notes, params={"after": str(2**63)}),
        sub("callback to 127.0.0.1", "SELECT ?x { ?x ?p ?o }", callback="http://127.0.0.1:9/hook"),
        sub(
            "callback to the broker's port",
            "SELECT ?x { ?x ?p ?o }",
            callback=f"http://127.0.0.1:{port}/events",
        ),
        sub("callback with %00", "SELECT ?x { ?x ?p ?o }", callback="http://example.com/%00hook"),
        sub(
            "callback with user:pw@",
            "SELECT ?x { ?x ?p ?o }",
            callback="http://user:pw@example.com/",
        ),
    ]


# --- the run --------------------------------------------------------------------------------


@dataclass
class Tally:
    """Everything the clients saw."""

    acks: list[float] = field(default_factory=list)
    acknowledged: set[int] = field(default_factory=set)
    good_refused: Counter[str] = field(default_factory=Counter)
    received: list[tuple[int, int]] = field(default_factory=list)
    health: list[float] = field(default_factory=list)
    health_failures: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    answers: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    slowest: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    details: dict[tuple[str, str], str] = field(default_factory=dict)
    streams: Counter[str] = field(default_factory=Counter)


async def good_publisher(
    client: httpx.AsyncClient, args: argparse.Namespace, tally: Tally, stop: float, first: int = 0
) -> None:
    rng = random.Random(3)
    bodies = [ntriples(gen.event(rng, rng.randint(20, 50))) for _ in range(500)]
    tasks: list[asyncio.Task[None]] = []

    async def post(n: int) -> None:
        body = f'{bodies[n % len(bodies)]}\n_:m <{PROBE}> "{n}" .'.encode()
        start = time.perf_counter()
        try:
            reply = await client.post("/events", content=body, headers=NT)
        except httpx.HTTPError as exc:
            tally.good_refused[type(exc).__name__] += 1
            return
        tally.statuses[reply.status_code] += 1
        if reply.status_code == 202:
            tally.acks.append(time.perf_counter() - start)
            tally.acknowledged.add(n)
        else:
            tally.good_refused[answer(reply, matched=True)] += 1

    begin, n = time.perf_counter(), 0
    while (now := time.perf_counter()) < stop:
        tasks.append(asyncio.create_task(post(first + n)))
        n += 1
        await asyncio.sleep(max(0.0, begin + n / args.rate - now))
    await asyncio.gather(*tasks)


async def good_subscriber(client: httpx.AsyncClient, sub_id: str, tally: Tally) -> None:
    note_id = 0
    async with client.stream("GET", f"/subscriptions/{sub_id}/notifications") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("id: "):
                note_id = int(line[4:])
            elif line.startswith("data: "):
                for solution in json.loads(line[6:])["solutions"]:
                    tally.received.append((note_id, int(solution["v"].strip('"'))))


async def health(url: str, tally: Tally, stop: float) -> None:
    async with httpx.AsyncClient(timeout=5) as client:
        while time.perf_counter() < stop:
            start = time.perf_counter()
            try:
                reply = await client.get(url + "/health")
                tally.statuses[reply.status_code] += 1
                if reply.status_code != 200:
                    tally.health_failures += 1
            except httpx.HTTPError:
                tally.health_failures += 1
            tally.health.append(time.perf_counter() - start)
            await asyncio.sleep(0.2)


async def silent_streams(port: int, token: str, sub_id: str, tally: Tally, stop: float) -> None:
    """40 SSE streams replaying from 0 that never read past the status line."""
    request = (
        f"GET /subscriptions/{sub_id}/notifications HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {token}\r\nLast-Event-ID: 0\r\n\r\n"
    ).encode()
    writers = []
    for _ in range(40):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=4096)
        writer.write(request)
        writers.append(writer)
        status = (await reader.readline()).split()
        tally.streams[status[1].decode() if len(status) > 1 else "closed"] += 1
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))
    for writer in writers:
        writer.close()


async def attacker(
    clients: dict[str, httpx.AsyncClient],
    inputs: list[Hostile],
    attacker_sub: str,
    args: argparse.Namespace,
    tally: Tally,
    stop: float,
) -> int:
    rounds = 0
    while time.perf_counter() < stop:
        for h in inputs:
            if (rounds and not h.repeat) or time.perf_counter() >= stop:
                continue
            client = clients[h.who]
            request = client.build_request(
                h.method,
                h.path.format(attacker_sub=attacker_sub),
                content=h.body or None,
                headers=h.headers,
                params=h.params,
            )
            start = time.perf_counter()
            try:
                reply = await client.send(request)
            except httpx.HTTPError as exc:
                tally.answers[h.name][type(exc).__name__] += 1
                continue
            tally.slowest[h.name] = max(tally.slowest[h.name], time.perf_counter() - start)
            tally.statuses[reply.status_code] += 1
            said = answer(reply, matched=True)
            tally.answers[h.name][said] += 1
            if reply.status_code >= 400:
                tally.details.setdefault((h.name, said), reply.text)
        rounds += 1
        await asyncio.sleep(args.attack_pause)
    return rounds


async def _until(predicate: Callable[[], bool], seconds: float) -> None:
    deadline = time.perf_counter() + seconds
    while not predicate() and time.perf_counter() < deadline:
        await asyncio.sleep(0.1)


async def run(
    args: argparse.Namespace, server: subprocess.Popen[bytes], url: str, tok: dict[str, str]
) -> Tally:
    port = int(url.rsplit(":", 1)[1])

    def client(role: str, timeout: float = 60) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        auth = {"Authorization": f"Bearer {tok[role]}"}
        return httpx.AsyncClient(base_url=url, headers=auth, timeout=timeout, limits=limits)

    clients = {role: client(role) for role in tok}
    admin, good_sub, attacker_sub_client = clients["admin"], clients["good"], clients["attacker"]
    onto = "\n".join(f"<{s}> <{p}> <{o}> ." for s, p, o in gen.ontology(random.Random(7)))
    onto += f"\n<{EX}partOf> <{RDF}type> <{OWL}TransitiveProperty> ."
    (await admin.put("/ontology", content=onto.encode(), headers=NT)).raise_for_status()
    rng = random.Random(1)
    sem = asyncio.Semaphore(8)

    async def register(text: str) -> None:
        async with sem:
            (await clients["ordinary"].post("/subscriptions", content=text)).raise_for_status()

    t0 = time.perf_counter()
    await asyncio.gather(*(register(gen.subscription(rng)) for _ in range(args.subs)))
    print(f"registered {args.subs} ordinary subscriptions in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()

    async def enrol(text: str) -> None:
        async with sem:
            (await attacker_sub_client.post("/subscriptions", content=text)).raise_for_status()

    await asyncio.gather(*(enrol(text) for text in family(args.family)))
    took = time.perf_counter() - t0
    print(f"the attacker registered a family of {args.family} subscriptions in {took:.1f} s")
    probe = (
        await good_sub.post("/subscriptions", content=f"SELECT ?v WHERE {{ ?m <{PROBE}> ?v }}")
    ).json()["id"]
    target = (
        await attacker_sub_client.post(
            "/subscriptions", content=f"SELECT ?x {{ ?x <{EX}name> ?y }}"
        )
    ).json()["id"]
    # Warm up (each worker compiles its kernels on its first events): not measured.
    warm = random.Random(5)
    for _ in range(40):
        body = ntriples(gen.event(warm, warm.randint(20, 50))).encode()
        (await clients["publisher"].post("/events", content=body, headers=NT)).raise_for_status()
    tally = Tally()
    listener = asyncio.create_task(good_subscriber(client("good", timeout=None), probe, tally))  # type: ignore[arg-type]
    await asyncio.sleep(0.5)
    results: list[object] = [None] * 4
    if not args.phases_only:
        stop = time.perf_counter() + args.seconds
        inputs = [
            h
            for h in hostile_inputs(port)
            if not any(t in h.name for t in args.skip)
            and (not args.only or any(t in h.name for t in args.only))
        ]
        tasks: list[Awaitable[object]] = [
            good_publisher(clients["publisher"], args, tally, stop),
            health(url, tally, stop),
            silent_streams(port, tok["attacker"], target, tally, stop),
            attacker(clients, inputs, target, args, tally, stop),
        ]
        results = await asyncio.gather(*tasks)
        tally.answers["(rounds of the attack)"][str(results[3])] += 1
    if args.phases or args.phases_only:
        ctx = Ctx(clients, url, port, tok)
        await run_phases(args, ctx, tally, good_publisher, health)
    await _until(lambda: tally.acknowledged <= {v for _, v in tally.received}, 30.0)
    listener.cancel()
    for c in clients.values():
        await c.aclose()
    return tally


def report(args: argparse.Namespace, tally: Tally, sigterm: float | None) -> None:
    print(f"\n{'hostile input':<36} {'answers (status error x count)':<44} {'slowest':>8}")
    for name, answers in tally.answers.items():
        shown = ", ".join(f"{a} x{c}" for a, c in sorted(answers.items()))
        print(f"{name:<36} {shown:<44} {1000 * tally.slowest.get(name, 0.0):>6.0f}ms")
    shown = ", ".join(f"{a} x{c}" for a, c in sorted(tally.streams.items()))
    print(f"{'40 SSE streams that never read':<36} {shown:<44}")
    print("\nfirst error body of each refusal:")
    for (name, said), text in tally.details.items():
        print(f"  {name} -> {said}: {text[:160]}")
    received = {v for _, v in tally.received}
    lost = sorted(tally.acknowledged - received)
    ids = [i for i, _ in tally.received]
    gapless = ids == list(range(1, len(ids) + 1))
    five = sum(c for s, c in tally.statuses.items() if s >= 500)
    p99, top = quantile(tally.acks, 0.99), quantile(tally.acks, 1.0)
    health_max = quantile(tally.health, 1.0)
    rows: list[tuple[Any, ...]] = [
        ("good POST->202 p50", f"{quantile(tally.acks, 0.5):.0f} ms", ""),
        ("good POST->202 p99", f"{p99:.0f} ms", "<= 250 ms", p99 <= 250),
        ("good POST->202 max", f"{top:.0f} ms", "<= 1000 ms", top <= 1000),
        (
            "good events acknowledged",
            f"{len(tally.acks)} of {len(tally.acks) + sum(tally.good_refused.values())}",
            "",
        ),
        (
            "good events refused",
            ", ".join(f"{a} x{c}" for a, c in tally.good_refused.items()) or "0",
            "0",
            not tally.good_refused,
        ),
        (
            "/health max (every 0.2 s)",
            f"{health_max:.0f} ms ({tally.health_failures} failed)",
            "<= 1000 ms",
            health_max <= 1000 and not tally.health_failures,
        ),
        ("5xx responses", str(five), "0", five == 0),
        (
            "lost notifications",
            f"{len(lost)} (ids {'gapless' if gapless else 'NOT gapless'})",
            "0",
            not lost and gapless,
        ),
        (
            "SIGTERM -> exit",
            "did not exit" if sigterm is None else f"{sigterm:.2f} s",
            "<= 10 s",
            sigterm is not None and sigterm <= 10,
        ),
    ]
    print(f"\n{'figure':<28} {'value':<36} {'target':<10} met")
    for name, value, target, *met in rows:
        print(f"{name:<28} {value:<36} {target:<10} {('yes' if met[0] else 'NO') if met else ''}")
    if lost:
        print(f"lost probe numbers (first 20): {lost[:20]}")
    if args.phases_only:
        return  # the phases' rows are recorded by report_phases
    record(
        "noisy",
        {
            "subs": args.subs,
            "family": args.family,
            "good_p50_ms": quantile(tally.acks, 0.5),
            "good_p99_ms": p99,
            "good_max_ms": top,
            "good_refused": sum(tally.good_refused.values()),
            "health_max_ms": health_max,
            "errors_5xx": five,
            "lost": len(lost),
            "sigterm_s": "" if sigterm is None else sigterm,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="semps noisy-neighbour benchmark")
    parser.add_argument("--subs", type=int, default=1000)
    parser.add_argument(
        "--family", type=int, default=2000, help="the attacker's subscriptions of one family"
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=50.0, help="good events per second")
    parser.add_argument("--attack-pause", type=float, default=1.0, help="seconds between rounds")
    workers_option(parser)
    parser.add_argument(
        "--phases", action="store_true", help="then run issue 38's attacks, one at a time"
    )
    parser.add_argument(
        "--phases-only", action="store_true", help="only issue 38's attacks, one at a time"
    )
    parser.add_argument("--phase-seconds", type=float, default=10.0, help="seconds per attack")
    parser.add_argument(
        "--only-phase",
        action="append",
        default=[],
        metavar="TEXT",
        help="run only the issue-38 attacks whose name contains TEXT (repeatable)",
    )
    parser.add_argument(
        "--nofile", type=int, default=0, help="run the server under this file limit (prlimit)"
    )
    for flag, verb in (("--skip", "leave out"), ("--only", "send only")):
        parser.add_argument(
            flag,
            action="append",
            default=[],
            metavar="TEXT",
            help=f"{verb} the hostile inputs whose name contains TEXT (repeatable)",
        )
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    data = Path(tempfile.mkdtemp(prefix="semps-noisy-"))
    roles = {
        "admin": "admin",
        "publisher": "publisher",
        "rogue": "publisher",
        "good": "subscriber",
        "ordinary": "subscriber",
        "attacker": "subscriber",
    }
    tok = create_tokens(data, roles)
    extra = ["--workers", str(args.workers)] if args.workers else []
    print(f"server log: {data / 'server.log'}", flush=True)
    with (data / "server.log").open("ab") as log:
        prefix = ["prlimit", f"--nofile={args.nofile}:{args.nofile}", "--"] if args.nofile else []
        server, url, _ = serve(data, extra, log, prefix)
    sigterm: float | None = None
    try:
        tally = asyncio.run(run(args, server, url, tok))
    finally:
        start = time.perf_counter()
        server.terminate()
        try:
            server.wait(timeout=30)
            sigterm = time.perf_counter() - start
        except subprocess.TimeoutExpired:
            server.kill()
    report(args, tally, sigterm)
    report_phases(args)


if __name__ == "__main__":
    main()
