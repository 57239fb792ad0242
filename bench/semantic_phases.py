"""Per-phase cost of the semantic matcher at 100k subscriptions (not a test): counter
filtering, verification, the whole in-process match (what the broker runs) and the
counts-only ``count_batch`` (what ``semps match`` and Spark run), milliseconds per event,
best of 3; the events are closed under the ontology once, beforehand. Check out two
commits' ``matcher/`` in turn to compare them back to back.

    .venv/bin/python bench/semantic_phases.py [--subs 100000] [--events 400]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import record  # noqa: E402
from semantic import compile_axioms, event, ontology, subscription  # noqa: E402

from semps.matcher.base import MatchContext  # noqa: E402
from semps.matcher.semantic import SemanticMatcher  # noqa: E402
from semps.matcher.semantic.pairs import EventPairs  # noqa: E402
from semps.matcher.semantic.verify import verify  # noqa: E402
from semps.matcher.values import Subscription


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subs", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=400)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    rng = random.Random(1)
    expansion = compile_axioms(ontology(rng))
    texts = [subscription(rng) for _ in range(args.subs)]
    events = [event(rng, rng.randint(20, 50)) for _ in range(args.events)]
    matcher = SemanticMatcher()
    for i, text in enumerate(texts):
        matcher.add(Subscription(f"s{i}", "semantic", text))
    gc.freeze()
    contexts = [MatchContext(e, expansion) for e in events]
    parts = [c.parts for c in contexts]
    n = len(events)

    def best(run: Callable[[], object]) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return 1000 * min(times) / n

    pairs = [EventPairs(p) for p in parts]
    candidates = [matcher.index.counter_filter(p) for p in pairs]
    counter = best(lambda: [matcher.index.counter_filter(p) for p in pairs])
    verifying = best(
        lambda: [
            [verify(c, p) for c in cs]
            for cs, p in zip(candidates, [EventPairs(p) for p in parts], strict=True)
        ]
    )
    whole = best(lambda: [matcher.match(c) for c in contexts])
    counts = best(lambda: matcher.count_batch(contexts))
    print(
        f"counter {counter:.3f} ms, verify every candidate {verifying:.3f} ms, "
        f"match {whole:.3f} ms per event -> {1000 / whole:.0f} events/s, "
        f"count_batch {counts:.3f} ms -> {1000 / counts:.0f} events/s"
    )
    record(
        "semantic_phases",
        {
            "subs": args.subs,
            "events": n,
            "counter_ms": counter,
            "verify_ms": verifying,
            "match_ms": whole,
            "match_events_s": 1000 / whole,
            "count_batch_ms": counts,
            "count_batch_events_s": 1000 / counts,
        },
    )


if __name__ == "__main__":
    main()
