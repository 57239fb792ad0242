"""Benchmark of the semantic matcher (not a test; nothing here is asserted).

Synthetic ontology (class and property hierarchies with equivalences and inverses), events
of 20-50 triples, 1k/10k/100k subscriptions of 1-5 patterns mixing variables, constants and
type constraints. Reports registration rate, index bytes per subscription, events/s, p50/p99
per-event latency with 1 and 2 workers, and the naive method users fall back on (every
subscription as a SPARQL query over each event in pyoxigraph, on a sample, extrapolated).

    .venv/bin/python bench/semantic.py [--sizes 1000,10000,100000] [--events 500]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import tracemalloc

from _results import record  # bench/ is on the path: this file runs as a script

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.ontology.closure import close
from semps.terms import OWL, RDF_TYPE, RDFS, XSD, Literal

EX = "http://bench.example/"
N_CLASSES, N_PROPS, N_NODES = 60, 40, 2000


def ontology(rng: random.Random) -> list:
    axioms = []
    for i in range(1, N_CLASSES):
        axioms.append((f"{EX}C{i}", RDFS + "subClassOf", f"{EX}C{rng.randrange(i)}"))
    for i in range(1, N_PROPS):
        if rng.random() < 0.6:
            axioms.append((f"{EX}p{i}", RDFS + "subPropertyOf", f"{EX}p{rng.randrange(i)}"))
    for i in range(0, N_PROPS, 10):
        axioms.append((f"{EX}p{i}", OWL + "inverseOf", f"{EX}inv{i}"))
    axioms.append((f"{EX}Alias", OWL + "equivalentClass", f"{EX}C3"))
    return axioms


def event(rng: random.Random, n: int) -> Event:
    nodes = [f"{EX}n{rng.randrange(N_NODES)}" for _ in range(max(4, n // 4))]
    triples = set()
    while len(triples) < n:
        s = rng.choice(nodes)
        roll = rng.random()
        if roll < 0.25:
            triples.add((s, RDF_TYPE, f"{EX}C{rng.randrange(N_CLASSES)}"))
        elif roll < 0.45:
            triples.add(
                (s, f"{EX}d{rng.randrange(5)}", Literal(str(rng.randrange(100)), XSD + "integer"))
            )
        else:
            triples.add((s, f"{EX}p{rng.randrange(N_PROPS)}", rng.choice(nodes)))
    return Event(f"e{rng.randrange(10**9)}", tuple(triples))


def subscription(rng: random.Random) -> str:
    """1-5 patterns in a chain ?a -> ?b -> ...; the first is anchored on a constant node or
    value (as real subscriptions are: "bids on *this* auction"), the rest mix property
    patterns, type constraints and literal values."""
    variables = ["?a", "?b", "?c", "?d", "?e"]
    if rng.random() < 0.7:
        patterns = [f"?a <{EX}p{rng.randrange(N_PROPS)}> <{EX}n{rng.randrange(N_NODES)}>"]
    else:
        patterns = [f"?a <{EX}d{rng.randrange(5)}> {rng.randrange(100)}"]
    for i in range(1, rng.randint(1, 5)):
        s = variables[rng.randrange(i)]
        roll = rng.random()
        if roll < 0.4:
            patterns.append(f"{s} a <{EX}C{rng.randrange(N_CLASSES)}>")
        elif roll < 0.55:
            patterns.append(f"{s} <{EX}d{rng.randrange(5)}> ?v{i}")
        else:
            patterns.append(f"{s} <{EX}p{rng.randrange(N_PROPS)}> {variables[i]}")
    return "SELECT * WHERE { " + " . ".join(patterns) + " }"


def measure(size: int, n_events: int, workers: int, rng_seed: int = 1) -> dict:
    rng = random.Random(rng_seed)
    expansion = compile_axioms(ontology(rng))
    texts = [subscription(rng) for _ in range(size)]
    events = [event(rng, rng.randint(20, 50)) for _ in range(n_events)]
    subs = [Subscription(f"s{i}", "semantic", text) for i, text in enumerate(texts)]
    matcher = SemanticMatcher(workers=workers)
    t0 = time.perf_counter()
    for sub in subs:
        matcher.add(sub)
    reg = time.perf_counter() - t0
    matcher.close()
    tracemalloc.start()  # memory on a second build: tracemalloc slows registration down
    matcher = SemanticMatcher(workers=workers)
    for sub in subs:
        matcher.add(sub)
    mem = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    gc.freeze()  # the index is long-lived: keep the cyclic GC from rescanning it
    contexts = [MatchContext(e, expansion) for e in events]
    matcher.match_batch(contexts[:4])  # start workers, warm caches
    lat, matches = [], 0
    for c in contexts:
        t = time.perf_counter()
        matches += len(matcher.match(c))
        lat.append(time.perf_counter() - t)
    t = time.perf_counter()
    batched = 0
    for i in range(0, len(events), 32):  # batches of 32, as `semps match` sends them
        chunk = events[i : i + 32]
        batched += sum(map(len, matcher.match_batch([MatchContext(e, expansion) for e in chunk])))
    batch_rate = len(events) / (time.perf_counter() - t)
    assert batched == matches
    matcher.close()
    lat.sort()
    return {
        "subs": size,
        "workers": workers,
        "reg_per_s": size / reg,
        "bytes_per_sub": mem / size,
        "events_per_s": len(events) / sum(lat),
        "batch_events_per_s": batch_rate,
        "p50_ms": 1000 * lat[len(lat) // 2],
        "p99_ms": 1000 * lat[int(len(lat) * 0.99) - 1],
        "matches_per_event": matches / len(events),
        "texts": texts,
        "events": events,
        "expansion": expansion,
    }


def naive(result: dict, sample_subs: int = 200, sample_events: int = 20) -> float:
    """Seconds per event for the naive method: closure + every subscription as a SPARQL
    query in pyoxigraph (a sample of subscriptions, scaled to all)."""
    import pyoxigraph as ox

    def term(t: object) -> object:
        if isinstance(t, Literal):
            return ox.Literal(t.lexical, datatype=ox.NamedNode(t.datatype))
        return ox.NamedNode(t)

    texts = result["texts"][:sample_subs]
    t0 = time.perf_counter()
    for e in result["events"][:sample_events]:
        store = ox.Store()
        store.extend(
            [
                ox.Quad(term(s), term(p), term(o))
                for s, p, o in close(result["expansion"], e.triples)
            ]
        )
        for text in texts:
            list(store.query(text))
    per_event = (time.perf_counter() - t0) / sample_events
    return per_event * result["subs"] / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--events", type=int, default=500)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    header = (
        f"{'subs':>7} {'wk':>2} {'reg/s':>8} {'B/sub':>6} {'ev/s':>7} {'batch ev/s':>10} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'m/ev':>5} {'naive ev/s':>10}"
    )
    print(header)
    for size in map(int, args.sizes.split(",")):
        for workers in (1, 2):
            r = measure(size, args.events, workers)
            naive_rate = 1 / naive(r) if workers == 1 else float("nan")
            print(
                f"{r['subs']:>7} {workers:>2} {r['reg_per_s']:>8.0f} {r['bytes_per_sub']:>6.0f} "
                f"{r['events_per_s']:>7.0f} {r['batch_events_per_s']:>10.0f} {r['p50_ms']:>7.2f} "
                f"{r['p99_ms']:>7.2f} {r['matches_per_event']:>5.1f} {naive_rate:>10.2f}",
                flush=True,
            )
            record(
                "semantic",
                {
                    "subs": r["subs"],
                    "workers": workers,
                    "reg_per_s": r["reg_per_s"],
                    "bytes_per_sub": r["bytes_per_sub"],
                    "events_s": r["events_per_s"],
                    "batch_events_s": r["batch_events_per_s"],
                    "p50_ms": r["p50_ms"],
                    "p99_ms": r["p99_ms"],
                    "matches_per_event": r["matches_per_event"],
                    "naive_events_s": "" if workers != 1 else naive_rate,
                },
            )


if __name__ == "__main__":
    main()
