"""Subscription registration speed: semps ``parse_query`` vs rdflib ``prepareQuery``.

Generates 1-5-pattern SELECT queries (half with a FILTER) and times both parsers on them.

    .venv/bin/python bench/sparql_parse.py --queries 5000 --rdflib 200
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from rdflib.plugins.sparql import prepareQuery

from semps.ingest.sparql import parse_query


def _query(rng: random.Random) -> str:
    lines = []
    for i in range(rng.randint(1, 5)):
        s = f"?v{rng.randint(0, i)}"
        o = f"?v{i + 1}" if rng.random() < 0.7 else f"ex:c{rng.randint(0, 50)}"
        lines.append(f"  {s} ex:p{rng.randint(0, 30)} {o} .")
    if rng.random() < 0.5:
        lines.append(f'  FILTER(?v1 > {rng.randint(0, 99)} || regex(str(?v0), "^a", "i"))')
    body = "\n".join(lines)
    return f"PREFIX ex: <http://example.org/>\nSELECT * WHERE {{\n{body}\n}}"


def _rate(parse: object, texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        parse(text)  # type: ignore[operator]
    return len(texts) / (time.perf_counter() - start)


def main() -> int:
    """Print parses per second for semps and rdflib."""
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--queries", type=int, default=5000)
    cli.add_argument("--rdflib", type=int, default=200, help="queries timed with rdflib")
    args = cli.parse_args()
    rng = random.Random(0)
    texts = [_query(rng) for _ in range(args.queries)]
    ours = _rate(parse_query, texts)
    theirs = _rate(prepareQuery, texts[: args.rdflib])
    print("command:", " ".join([sys.executable, *sys.argv]))
    print(f"semps parse_query:    {ours:10,.0f} queries/s ({args.queries} queries)")
    print(f"rdflib prepareQuery:  {theirs:10,.0f} queries/s ({args.rdflib} queries)")
    print(f"speed-up: {ours / theirs:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
