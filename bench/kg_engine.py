"""The knowledge graph engine's figures: bulk load (closure included), bytes per triple, a
one-triple update's latency, SQLite against pyoxigraph's on-disk store, and matching
telemetry against a building campus.

The campus is brick-kg-a's model (three buildings, 1,486 triples) copied with fresh IRIs
until it holds about ``--triples`` asserted triples; subscriptions are brick-kg-a's,
copied with their numeric FILTER thresholds varied (each copy its own shape); events are
telemetry of 1-3 readings of random points of the campus.

    .venv/bin/python bench/kg_engine.py --triples 1000000 --subscriptions 1000 --events 2000

(bench/knowledge_graph.py, the issue's campus benchmark, is another engineer's.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import tempfile
import time
from pathlib import Path

WORKLOAD = Path(__file__).resolve().parents[2] / "shared" / "workloads" / "brick-kg-a"
SITE = "http://example.org/site/hq#"
BRICK = "https://brickschema.org/schema/Brick#"
PREFIXES = (
    "@prefix bms: <http://example.org/bms#> . "
    "@prefix brick: <https://brickschema.org/schema/Brick#> . "
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ."
)


def campus(copies: int) -> bytes:
    """``copies`` of the model, each under its own site namespace (N-Triples)."""
    from semps.documents import read_triples
    from semps.terms import n3

    model = read_triples((WORKLOAD / "graph" / "site.ttl").read_bytes(), filename="site.ttl")
    lines = [f"{n3(s)} <{p}> {n3(o)} .\n" for s, p, o in model]
    text = "".join(lines)
    return "".join(
        text.replace(SITE, f"http://example.org/site/b{i}#") for i in range(copies)
    ).encode()


def points(copies: int) -> list[str]:
    text = (WORKLOAD / "graph" / "site.ttl").read_text()
    names = sorted(set(re.findall(r"site:([A-Za-z0-9-]+\.[A-Za-z0-9-]+) ", text)))
    return [f"http://example.org/site/b{i}#{n}" for i in range(copies) for n in names]


def events(copies: int, n: int, rng: random.Random) -> list[bytes]:
    pool = points(copies)
    out = []
    for k in range(n):
        body = [PREFIXES]
        for _ in range(rng.randint(1, 3)):
            value = round(rng.uniform(40, 95), 1)
            body.append(
                f"<{rng.choice(pool)}> bms:lastReading [ brick:value {value:.1f}e0 ; "
                f'bms:observedAt "2024-09-12T{k % 24:02d}:00:00Z"^^xsd:dateTime ] .'
            )
        out.append("\n".join(body).encode())
    return out


def subscriptions(n: int, rng: random.Random) -> list[tuple[str, str]]:
    base = sorted((p.stem, p.read_text()) for p in (WORKLOAD / "subscriptions").glob("*.rq"))
    out = []
    for i in range(n):
        name, text = base[i % len(base)]
        varied = re.sub(
            r"([<>]=?) (\d+)\)", lambda m: f"{m[1]} {int(m[2]) + rng.randint(-5, 5)})", text
        )
        out.append((f"{name}-{i}", varied))
    return out


def load_sqlite(data: bytes, folder: Path) -> dict[str, float]:
    from semps.graph.graph import DATABASE, KnowledgeGraph, connect
    from semps.limits import Limits
    from semps.ontology import load_expansion

    expansion = load_expansion(WORKLOAD / "ontology.owl")
    limits = Limits(max_load_triples=1 << 40, max_edit_inferred=1 << 40)
    graph = KnowledgeGraph.open(connect(folder / DATABASE), expansion, limits=limits)
    t0 = time.perf_counter()
    change = graph.load(data, media_type="application/n-triples")
    load = time.perf_counter() - t0
    asserted = change.summary()["inserted"]
    assert graph.store is not None
    sizes = graph.store.size()
    file_bytes = sum(p.stat().st_size for p in folder.iterdir())
    latencies = []
    for k in range(50):
        t0 = time.perf_counter()
        graph.update(
            f"INSERT DATA {{ <http://example.org/x{k}> <{BRICK}isPointOf> "
            "<http://example.org/site/b0#HQ-AHU-1> }"
        )
        latencies.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    graph.compact()
    t0 = time.perf_counter()
    again = KnowledgeGraph.open(connect(folder / DATABASE), expansion, limits=limits)
    reopen = time.perf_counter() - t0
    latencies.sort()
    return {
        "asserted": asserted,
        "closure": len(graph),
        "load_s": round(load, 2),
        "load_triples_per_s": round(asserted / load),
        "file_bytes_per_asserted_triple": round(file_bytes / asserted, 1),
        "file_bytes_per_closure_triple": round(file_bytes / len(graph), 1),
        "segment_bytes_per_closure_triple": round(sizes["segment_bytes"] / len(graph), 2),
        "update_median_ms": round(1000 * latencies[len(latencies) // 2], 2),
        "update_p90_ms": round(1000 * latencies[int(len(latencies) * 0.9)], 2),
        "reopen_s": round(reopen, 2),
        "reopen_closure": len(again),
    }


def load_oxigraph(data: bytes, folder: Path, closure: bytes | None) -> dict[str, float]:
    import pyoxigraph as ox

    store = ox.Store(str(folder))
    t0 = time.perf_counter()
    store.bulk_load(data, format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    load = time.perf_counter() - t0
    out = {"load_asserted_s": round(load, 2)}
    if closure is not None:
        t0 = time.perf_counter()
        store.bulk_load(closure, format=ox.RdfFormat.N_TRIPLES)
        store.flush()
        out["load_closure_s"] = round(time.perf_counter() - t0, 2)
    n = len(store)
    out["quads"] = n
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    out["bytes_per_quad"] = round(size / n, 1)
    latencies = []
    for k in range(50):
        t0 = time.perf_counter()
        store.update(
            f"INSERT DATA {{ <http://example.org/x{k}> <{BRICK}isPointOf> <http://ex/o> }}"
        )
        store.flush()
        latencies.append(time.perf_counter() - t0)
    latencies.sort()
    out["update_median_ms"] = round(1000 * latencies[len(latencies) // 2], 2)
    return out


def matching(copies: int, n_subs: int, n_events: int, rng: random.Random) -> dict[str, float]:
    from semps.graph.graph import KnowledgeGraph
    from semps.ingest.rdf import read_event
    from semps.limits import Limits
    from semps.matcher.base import MatchContext, Subscription
    from semps.matcher.semantic import SemanticMatcher
    from semps.ontology import load_expansion

    expansion = load_expansion(WORKLOAD / "ontology.owl")
    graph = KnowledgeGraph(
        expansion, limits=Limits(max_load_triples=1 << 40, max_edit_inferred=1 << 40)
    )
    graph.load(campus(copies), media_type="application/n-triples")
    matcher = SemanticMatcher()
    for sub_id, text in subscriptions(n_subs, rng):
        matcher.add(Subscription(sub_id, "semantic", text))
    docs = events(copies, n_events, rng)
    evs = [read_event(d, event_id=f"e{i}", media_type="text/turtle") for i, d in enumerate(docs)]
    contexts = [MatchContext(e, expansion, graph=graph.view) for e in evs[:20]]
    matcher.count_batch(contexts)  # warm: ASK counts, caches
    t0 = time.perf_counter()
    matched = 0
    for e in evs:
        matched += len(matcher.count_batch([MatchContext(e, expansion, graph=graph.view)])[0])
    took = time.perf_counter() - t0
    return {
        "graph_triples": len(graph),
        "subscriptions": n_subs,
        "events": n_events,
        "events_per_s_one_core": round(n_events / took),
        "matches_per_event": round(matched / n_events, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--subscriptions", type=int, default=1000)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--only", choices=["store", "match"], default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    copies = max(1, args.triples // 1486)
    report: dict[str, object] = {"load_average": os.getloadavg()[0]}
    if args.only in (None, "store"):
        data = campus(copies)
        with tempfile.TemporaryDirectory() as tmp:
            report["sqlite"] = load_sqlite(data, Path(tmp))
        with tempfile.TemporaryDirectory() as tmp:
            report["oxigraph"] = load_oxigraph(data, Path(tmp), None)
    if args.only in (None, "match"):
        report["match"] = matching(copies, args.subscriptions, args.events, rng)
    report["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
