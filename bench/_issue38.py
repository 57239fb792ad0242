"""Issue 38's attacks as phases of bench/noisy.py (not a test): each runs alone for a few
seconds beside the good publisher and /health, so each gets its own latency figures.

An attack is a coroutine ``attack(ctx, stop)`` that keeps attacking until ``stop``
(``time.perf_counter()``) and counts the answers it got in ``ctx.answers`` (status and
error name, or the exception's name).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from _common import answer, quantile
from _results import record

EX = "http://ex/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
NT = {"Content-Type": "application/n-triples"}


@dataclass
class Ctx:
    """What an attack may use: the clients by role, the server's address and tokens."""

    clients: dict[str, httpx.AsyncClient]
    url: str
    port: int
    tokens: dict[str, str]
    answers: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


async def _send(ctx: Ctx, who: str, method: str, path: str, **kw: object) -> httpx.Response | None:
    try:
        reply = await ctx.clients[who].request(method, path, **kw)  # type: ignore[arg-type]
    except httpx.HTTPError as exc:
        ctx.answers[type(exc).__name__] += 1
        return None
    ctx.answers[answer(reply)] += 1
    return reply


# -- documents ------------------------------------------------------------------------------


def chain(links: int) -> bytes:
    return "\n".join(
        f"<{EX}C{i}> <{RDFS}subClassOf> <{EX}C{i + 1}> ." for i in range(links)
    ).encode()


def cycle(length: int) -> bytes:
    return "\n".join(
        f"<{EX}q{i}> <{RDFS}subPropertyOf> <{EX}q{(i + 1) % length}> ." for i in range(length)
    ).encode()


def some_values(count: int) -> bytes:
    lines = [
        f"_:r{i} <{OWL}onProperty> <{EX}q> .\n_:r{i} <{OWL}someValuesFrom> <{EX}C{i}> ."
        for i in range(count)
    ]
    return chain(count) + b"\n" + "\n".join(lines).encode()


def labels(megabytes: int) -> bytes:
    """About ``megabytes`` MB of new classes, each declared and labelled (a big, valid
    merge: 15 MB is 119k triples). Labels alone would be facts about individuals, which
    the ontology refuses (400 bad_ontology: they belong in the knowledge graph)."""
    line = (
        f"<{EX}L%d> <{RDF}type> <{OWL}Class> .\n"
        f'<{EX}L%d> <{RDFS}label> "{"a label of some length " * 3}%d" .'
    )
    out, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        text = line % (i, i, i)
        out.append(text)
        size += len(text) + 1
        i += 1
    return "\n".join(out).encode()


# -- the attacks ----------------------------------------------------------------------------


def repeat_put(document: bytes, method: str = "PUT") -> Callable[[Ctx, float], Awaitable[None]]:
    async def attack(ctx: Ctx, stop: float) -> None:
        while time.perf_counter() < stop:
            await _send(ctx, "admin", method, "/ontology", content=document, headers=NT)
            await asyncio.sleep(0.2)

    return attack


async def label_merge(ctx: Ctx, stop: float) -> None:
    """One 15 MB merge (accepted: it is valid and within the limits), then nothing."""
    start = time.perf_counter()
    await _send(ctx, "admin", "POST", "/ontology", content=labels(15), headers=NT)
    ctx.notes.append(f"the 15 MB merge took {time.perf_counter() - start:.1f} s")
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))


async def ontology_reads(ctx: Ctx, stop: float) -> None:
    """Four readers of GET /ontology at once, again and again (a 116k-triple ontology after
    the label merge)."""

    async def reader() -> None:
        while time.perf_counter() < stop:
            reply = await _send(ctx, "good", "GET", "/ontology")
            if reply is not None:
                ctx.notes.append(f"{len(reply.content)} bytes")

    await asyncio.gather(*(reader() for _ in range(4)))
    sizes = sorted({n for n in ctx.notes if n.endswith("bytes")})
    ctx.notes[:] = [f"GET /ontology answered {sizes[-1] if sizes else 'nothing'}"]


async def _huge_header(ctx: Ctx, megabytes: int) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", ctx.port)
    except OSError as exc:
        ctx.answers[type(exc).__name__] += 1
        return
    try:
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ")
        block = b"a" * (1 << 20)
        for _ in range(megabytes):
            writer.write(block)
            await writer.drain()
        writer.write(b"\r\n\r\n")
        await writer.drain()
        status = (await reader.readline()).split()
        ctx.answers[status[1].decode() if len(status) > 1 else "closed"] += 1
    except (ConnectionError, OSError):
        ctx.answers["reset (refused while sending)"] += 1
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def huge_headers(ctx: Ctx, stop: float) -> None:
    """A 128 MB header, then four 64 MB headers at once, again and again."""
    while time.perf_counter() < stop:
        await _huge_header(ctx, 128)
        await asyncio.gather(*(_huge_header(ctx, 64) for _ in range(4)))


async def idle_flood(ctx: Ctx, stop: float) -> None:
    """1,100 connections that never send a byte, held (reopened when closed) until stop."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    writers: list[asyncio.StreamWriter] = []
    for _ in range(1100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", ctx.port)
            writers.append(writer)
            ctx.answers["opened"] += 1
        except OSError as exc:
            ctx.answers[type(exc).__name__] += 1
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))
    closed = sum(w.is_closing() or w.transport.get_extra_info("socket") is None for w in writers)
    ctx.notes.append(f"{len(writers)} opened")
    del closed
    for writer in writers:
        writer.close()


async def kept_alive_flood(ctx: Ctx, stop: float) -> None:
    """1,100 connections from five loopback addresses (127.0.0.2-6: more than one address's
    max_client_connections), each asking for /health every 3 s and waiting in between,
    reopened when closed; and a newcomer's connection every 0.5 s (its answers in the
    notes: before issue 38's fix for it, 503 overloaded while the flood lasted)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))

    async def holder(n: int) -> None:
        address = f"127.0.0.{2 + n % 5}"
        while time.perf_counter() < stop:
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", ctx.port, local_addr=(address, 0)
                )
            except OSError as exc:
                ctx.answers[type(exc).__name__] += 1
                await asyncio.sleep(0.5)
                continue
            try:
                while time.perf_counter() < stop:
                    writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                    await writer.drain()
                    status = (await reader.readline()).split()
                    if len(status) < 2:
                        ctx.answers["closed"] += 1
                        break
                    ctx.answers[status[1].decode()] += 1
                    length = 0
                    while (line := await reader.readline()) not in (b"\r\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    await reader.readexactly(length)
                    await asyncio.sleep(3)
            except (ConnectionError, OSError, asyncio.IncompleteReadError):
                ctx.answers["closed"] += 1
            finally:
                writer.close()

    async def newcomer() -> None:
        seen: Counter[str] = Counter()
        async with httpx.AsyncClient(base_url=ctx.url, timeout=60) as fresh:
            while time.perf_counter() < stop:
                try:
                    reply = await fresh.get("/health", headers={"Connection": "close"})
                    seen[answer(reply)] += 1
                except httpx.HTTPError as exc:
                    seen[type(exc).__name__] += 1
                await asyncio.sleep(0.5)
        shown = ", ".join(f"{a} x{c}" for a, c in sorted(seen.items()))
        ctx.notes.append(f"a newcomer's connections: {shown}")

    await asyncio.gather(newcomer(), *(holder(n) for n in range(1100)))


async def slowloris(ctx: Ctx, stop: float) -> None:
    """200 connections trickling a request head a byte every 0.5 s."""

    async def trickle() -> None:
        while time.perf_counter() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", ctx.port)
            except OSError as exc:
                ctx.answers[type(exc).__name__] += 1
                await asyncio.sleep(0.5)
                continue
            try:
                for byte in b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10_000:
                    if time.perf_counter() >= stop:
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(0.5)
                    if reader.at_eof():
                        break
                status = (await asyncio.wait_for(reader.readline(), 1.0)).split()
                ctx.answers[status[1].decode() if len(status) > 1 else "closed"] += 1
            except (ConnectionError, OSError, TimeoutError):
                ctx.answers["closed"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(trickle() for _ in range(200)))


async def composite_flood(ctx: Ctx, stop: float) -> None:
    """99,500 chained definitions (refused: max_definitions), the issue's OverflowError
    registration (refused), then the 1,000 a subscriber may hold, fed 5 events a second
    (1,000 notifications each)."""
    sub = "attacker"
    base = await _send(
        ctx,
        sub,
        "POST",
        "/subscriptions",
        params={"name": "pa"},
        content=f"SELECT ?s WHERE {{ ?s <{EX}hit> ?o }}",
    )
    await _send(
        ctx,
        sub,
        "POST",
        "/subscriptions",
        params={"name": "pb"},
        content=f"SELECT ?s WHERE {{ ?s <{EX}other> ?o }}",
    )

    def chained(n: int) -> str:
        lines = ["create event x0 = pa or pb;"]
        lines += [f"create event x{i} = x{i - 1} or pb;" for i in range(1, n)]
        return "\n".join(lines)

    composite = {"kind": "composite"}
    await _send(ctx, sub, "POST", "/subscriptions", params=composite, content=chained(99_500))
    overflow = (
        "create event kk = pa or pb;\ncreate event kk2 = 99999999999999999999 times pb in pa, pc;"
    )
    await _send(ctx, sub, "POST", "/subscriptions", params=composite, content=overflow)
    await _send(ctx, sub, "POST", "/subscriptions", params=composite, content=chained(1_000))
    if base is None:
        return
    while time.perf_counter() < stop:
        body = f"<{EX}a> <{EX}hit> <{EX}b> .".encode()
        await _send(ctx, "rogue", "POST", "/events", content=body, headers=NT)
        await asyncio.sleep(0.2)


async def token_guesses(ctx: Ctx, stop: float) -> None:
    """50 bad bearer tokens a second (401, then 429 once the address is over the limit)."""
    n = 0
    async with httpx.AsyncClient(base_url=ctx.url, timeout=60) as anon:
        while time.perf_counter() < stop:
            n += 1
            try:
                reply = await anon.get(
                    "/subscriptions", headers={"Authorization": f"Bearer guess-{n:08d}"}
                )
                ctx.answers[answer(reply)] += 1
            except httpx.HTTPError as exc:
                ctx.answers[type(exc).__name__] += 1
            await asyncio.sleep(0.02)


async def revoked_streams(ctx: Ctx, stop: float) -> None:
    """Ten SSE streams of a token that is then revoked: how long until each has ended."""
    admin = ctx.clients["admin"]
    made = (await admin.post("/tokens", json={"role": "subscriber", "subject": "revokee"})).json()
    auth = {"Authorization": f"Bearer {made['token']}"}
    async with httpx.AsyncClient(base_url=ctx.url, headers=auth, timeout=None) as victim:
        sub_id = (await victim.post("/subscriptions", content="SELECT ?s { ?s ?p ?o }")).json()[
            "id"
        ]
        ended: list[float] = []
        revoked = asyncio.Event()
        at = [0.0]

        async def stream() -> None:
            async with victim.stream("GET", f"/subscriptions/{sub_id}/notifications") as s:
                async for line in s.aiter_lines():
                    if line == "event: end":
                        ctx.answers["ended with event: end"] += 1
                ended.append(time.perf_counter() - at[0] if revoked.is_set() else -1.0)

        streams = [asyncio.create_task(stream()) for _ in range(10)]
        await asyncio.sleep(1.0)
        at[0] = time.perf_counter()
        revoked.set()
        await admin.delete(f"/tokens/{made['id']}")
        await asyncio.wait(streams, timeout=max(1.0, stop - time.perf_counter()))
        for task in streams:
            task.cancel()
    if ended:
        ctx.notes.append(
            f"{len(ended)} of 10 ended, the last {max(ended):.2f} s after the revocation"
        )
    else:
        ctx.notes.append("no stream ended")
    await asyncio.sleep(max(0.0, stop - time.perf_counter()))


#: The subscriber's worst query: a cross product of the graph with itself.
CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


async def graph_query_flood(ctx: Ctx, stop: float) -> None:
    """A 5,000-triple graph; the attacker (a subscriber) sends its worst query four at a
    time, again and again, while the admin makes one-triple INSERT DATA edits one after
    the other: the edits' latencies in the notes (before issue 38's fix they waited for
    each query, 9 s apiece)."""
    graph = "".join(f"<{EX}g{i}> <{EX}link> <{EX}g{i + 1}> .\n" for i in range(5000)).encode()
    await _send(ctx, "admin", "PUT", "/graph", content=graph, headers=NT)
    edits: list[float] = []

    async def attacker() -> None:
        while time.perf_counter() < stop:
            await _send(ctx, "attacker", "GET", "/query", params={"query": CROSS})

    async def admin() -> None:
        n = 0
        while time.perf_counter() < stop:
            n += 1
            update = f"INSERT DATA {{ <{EX}e{n}> <{EX}edited> <{EX}x> }}"
            start = time.perf_counter()
            reply = await _send(
                ctx,
                "admin",
                "POST",
                "/graph",
                content=update,
                headers={"Content-Type": "application/sparql-update"},
            )
            if reply is not None and reply.status_code == 200:
                edits.append((time.perf_counter() - start) * 1000)

    await asyncio.gather(admin(), *(attacker() for _ in range(4)))
    edits.sort()
    if edits:
        p50, top = edits[len(edits) // 2], edits[-1]
        ctx.notes.append(f"admin INSERT DATA x{len(edits)}: p50 {p50:.0f} ms, max {top:.0f} ms")
    else:
        ctx.notes.append("admin INSERT DATA: none answered")


#: (name, attack) in the order they run.
PHASES: list[tuple[str, Callable[[Ctx, float], Awaitable[None]]]] = [
    ("ontology: 20,000-deep subClassOf chain (PUT)", repeat_put(chain(20_000))),
    ("ontology: 2,500-long subPropertyOf cycle (PUT)", repeat_put(cycle(2_500))),
    ("ontology: 1,500 someValuesFrom over a chain (PUT)", repeat_put(some_values(1_500))),
    ("ontology: 15 MB label merge (POST, accepted)", label_merge),
    ("ontology: 4 concurrent GET /ontology (116k triples)", ontology_reads),
    ("HTTP: 128 MB header, then 4 x 64 MB", huge_headers),
    ("HTTP: 1,100 idle connections", idle_flood),
    ("HTTP: 1,100 kept-alive connections from 5 addresses", kept_alive_flood),
    ("HTTP: 200 slowloris connections", slowloris),
    ("composites: 99,500 chained, overflow, 1,000 fed", composite_flood),
    ("tokens: 10 streams of a revoked token", revoked_streams),
    ("graph: 4 concurrent cross-product queries, admin edits", graph_query_flood),
    # last: from then on the bench's address is refused for tokens it has not used yet
    ("tokens: 50 guesses a second", token_guesses),
]


# -- the phases' run and report (bench/noisy.py --phases) -----------------------------------


@dataclass
class PhaseResult:
    """One attack's phase: the good side's figures (a ``noisy.Tally``) and its answers."""

    name: str
    tally: Any
    ctx: Ctx


PHASE_RESULTS: list[PhaseResult] = []


async def run_phases(
    args: Any,
    ctx: Ctx,
    tally: Any,
    publisher: Callable[..., Awaitable[None]],
    health: Callable[..., Awaitable[None]],
) -> None:
    """Each attack alone for ``--phase-seconds``, beside the good ``publisher`` and
    ``health`` (figures kept per phase; acknowledged probes join ``tally``'s)."""
    first = 1_000_000
    for name, attack in PHASES:
        if args.only_phase and not any(t in name for t in args.only_phase):
            continue
        phase = type(tally)()
        mine = Ctx(ctx.clients, ctx.url, ctx.port, ctx.tokens)
        stop = time.perf_counter() + args.phase_seconds
        print(f"phase: {name}", flush=True)
        await asyncio.gather(
            publisher(ctx.clients["publisher"], args, phase, stop, first),
            health(ctx.url, phase, stop),
            attack(mine, stop),
        )
        first += 1_000_000
        tally.acknowledged |= phase.acknowledged
        for key, count in phase.good_refused.items():
            tally.good_refused[key] += count
        tally.statuses.update(phase.statuses)
        PHASE_RESULTS.append(PhaseResult(name, phase, mine))


def report_phases(args: Any) -> None:
    """A line per phase (good POST->202 p50/p99/max ms, /health max ms, refusals, whether
    the targets were met, the attack's answers), and a row each in noisy.csv."""
    if not PHASE_RESULTS:
        return
    print(
        f"\n{'issue 38 attack (alone, beside the good side)':<52} {'p50':>5} {'p99':>6} "
        f"{'max':>6} {'health':>7} {'refused':>8}  attack's answers"
    )
    for result in PHASE_RESULTS:
        t = result.tally
        p50, p99 = quantile(t.acks, 0.5), quantile(t.acks, 0.99)
        top, health_max = quantile(t.acks, 1.0), quantile(t.health, 1.0)
        refused = sum(t.good_refused.values()) + t.health_failures
        met = p99 <= 250 and top <= 1000 and health_max <= 1000 and not refused
        answers = ", ".join(f"{a} x{c}" for a, c in sorted(result.ctx.answers.items()))
        notes = "; ".join(result.ctx.notes)
        print(
            f"{result.name:<52} {p50:>5.0f} {p99:>6.0f} {top:>6.0f} {health_max:>7.0f} "
            f"{refused:>8}  {'met' if met else 'NOT MET'}: {answers}"
            + (f"; {notes}" if notes else "")
        )
        record(
            "noisy",
            {
                "subs": args.subs,
                "family": args.family,
                "phase": result.name,
                "good_p50_ms": p50,
                "good_p99_ms": p99,
                "good_max_ms": top,
                "good_refused": refused,
                "health_max_ms": health_max,
            },
        )
