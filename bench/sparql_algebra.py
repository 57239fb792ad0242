"""Benchmark: subscriptions beyond basic graph patterns vs their required part (not a test;
nothing here is asserted).

For N subscriptions (100k by default) drawn like bench/semantic.py's (1-3 patterns mixing
variables, node constants and type constraints over its synthetic ontology), each *variant*
registers N subscriptions that share the same required parts:

- ``required``: the basic graph pattern alone (today's fast path);
- ``optional``: the same with ``OPTIONAL { ?x <p> ?o }`` added (never prunes);
- ``union``: ``{ R } UNION { R2 }`` of two required parts (indexed per branch);
- ``path``: the first ``?x <p> ?y`` pattern as ``?x <p>+ ?y`` (its first step anchors).

Reported per variant: registration rate, counter-filter candidates per event, matches per
event and matching throughput through :meth:`SemanticMatcher.result_lines` (what ``semps
match`` calls per batch, one worker), the events closed beforehand (the closure is the same
for every variant).

    .venv/bin/python bench/sparql_algebra.py [--subscriptions 100000] [--events 300]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# bench/semantic.py's synthetic ontology and vocabulary
from semantic import EX, N_CLASSES, N_NODES, N_PROPS, ontology  # noqa: E402

from semps.event import Event  # noqa: E402
from semps.matcher.base import MatchContext  # noqa: E402
from semps.matcher.semantic import SemanticMatcher  # noqa: E402
from semps.matcher.semantic._kernels import warm  # noqa: E402
from semps.matcher.semantic.pairs import EventPairs  # noqa: E402
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms  # noqa: E402
from semps.terms import RDF_TYPE  # noqa: E402


def event(rng: random.Random, n: int, k: int) -> Event:
    nodes = [f"{EX}n{rng.randrange(N_NODES)}" for _ in range(max(4, n // 4))]
    triples: set[tuple[str, str, str]] = set()
    while len(triples) < n:
        s = rng.choice(nodes)
        if rng.random() < 0.3:
            triples.add((s, RDF_TYPE, f"{EX}C{rng.randrange(N_CLASSES)}"))
        else:
            triples.add((s, f"{EX}p{rng.randrange(N_PROPS)}", rng.choice(nodes)))
    return Event(f"e{k}", tuple(triples))


def required_part(rng: random.Random) -> str:
    """2-3 patterns on ?x, ?y: a property pattern first, then a node constant (selective:
    about 1% of the subscriptions match an event), then maybe a type."""
    patterns = [
        f"?x <{EX}p{rng.randrange(N_PROPS)}> ?y",
        f"?y <{EX}p{rng.randrange(N_PROPS)}> <{EX}n{rng.randrange(N_NODES)}>",
    ]
    if rng.random() < 0.5:
        patterns.append(f"?x a <{EX}C{rng.randrange(N_CLASSES)}>")
    return " . ".join(patterns)


def variant(kind: str, rng: random.Random, part: str) -> str:
    if kind == "required":
        return f"SELECT * {{ {part} }}"
    if kind == "optional":
        return f"SELECT * {{ {part} OPTIONAL {{ ?x <{EX}p{rng.randrange(N_PROPS)}> ?o }} }}"
    if kind == "union":
        return f"SELECT * {{ {{ {part} }} UNION {{ {required_part(rng)} }} }}"
    first, sep, rest = part.partition(" . ")
    s, p, o = first.split(" ")
    return f"SELECT * {{ {s} {p}+ {o}{' . ' if sep else ''}{rest} }}"


def run(kind: str, n: int, contexts: list[MatchContext], events: list[Event]) -> None:
    rng = random.Random(7)
    parts = [required_part(rng) for _ in range(n)]
    texts = [variant(kind, random.Random(i), p) for i, p in enumerate(parts)]
    matcher = SemanticMatcher()
    gc.collect()
    start = time.perf_counter()
    for i, text in enumerate(texts):
        matcher.add(Subscription(f"s{i}", "semantic", text))
    registered = time.perf_counter() - start
    candidates = sum(
        len(matcher.index.counter_filter(EventPairs(c.parts))) for c in contexts
    ) / len(contexts)
    warm()  # load the compiled counter-filter kernels before timing
    matcher.result_lines(contexts[:5])
    gc.collect()
    start = time.perf_counter()
    lines = matcher.result_lines(contexts)
    elapsed = time.perf_counter() - start
    matches = sum(line.count('": ') - 1 for line in lines) / len(lines)
    print(
        f"{kind:9} {n:>7,} subs  register {n / registered:9,.0f}/s  "
        f"candidates/event {candidates:8.1f}  matches/event {matches:8.1f}  "
        f"{len(events) / elapsed:8.1f} events/s  ({1e3 * elapsed / len(events):.2f} ms/event)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscriptions", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--triples", type=int, default=40)
    parser.add_argument("--variants", default="required,optional,union,path")
    args = parser.parse_args()
    rng = random.Random(1)
    expansion = compile_axioms(ontology(rng))
    events = [event(rng, args.triples, k) for k in range(args.events)]
    contexts = [MatchContext(e, expansion) for e in events]
    for c in contexts:
        _ = c.parts  # close every event once, before any timing
    for kind in args.variants.split(","):
        run(kind, args.subscriptions, contexts, events)


if __name__ == "__main__":
    main()
