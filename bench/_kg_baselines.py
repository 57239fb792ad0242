"""The methods bench/knowledge_graph.py compares semps with (not a test), on samples:

- **naive**: each subscription a pyoxigraph query over the closed graph plus the closed
  event (its answers over the graph alone kept from before: only the query over graph +
  event is timed), extrapolated from a sample of subscriptions to all of them;
- **SEPA's**: each event kept in the store as an update of the graph, then every
  subscription re-evaluated over the store and its answers compared with the last ones
  (added and removed solutions), extrapolated likewise.

The graph is closed once by semps' own closure (each file of the campus alone: a building
never refers to another), each event alone (its joins with the graph are the queries').
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from statistics import median

import pyoxigraph as ox

from semps.documents import N_TRIPLES, read_triples
from semps.graph.formats import serialize
from semps.limits import Limits
from semps.ontology import Expansion
from semps.ontology.closure import close

#: Closures of whole files of the campus go far beyond an event's limits.
_LIMITS = Limits(max_closure_triples=10**9, max_closure_ratio=1000)


def _closed_quads(expansion: Expansion, path: Path, prefix: str) -> list[ox.Quad]:
    """The closure of one N-Triples file, its blank nodes renamed apart with ``prefix``."""
    data = path.read_bytes()
    triples = read_triples(data, media_type=N_TRIPLES, max_bytes=len(data), limits=_LIMITS)
    closed = close(expansion, triples, limits=_LIMITS)
    document = serialize(closed, N_TRIPLES)
    return [
        ox.Quad(*(_renamed(x, prefix) for x in (t.subject, t.predicate, t.object)))
        for t in ox.parse(document, format=ox.RdfFormat.N_TRIPLES)
    ]


def _renamed(term: ox.NamedNode | ox.BlankNode | ox.Literal, prefix: str) -> object:
    return ox.BlankNode(prefix + term.value) if isinstance(term, ox.BlankNode) else term


def _answers(store: ox.Store, text: str) -> Counter:
    result = store.query(text)
    if isinstance(result, ox.QueryBoolean):
        return Counter([()]) if bool(result) else Counter()
    names = [v.value for v in result.variables]  # type: ignore[union-attr]
    return Counter(tuple(str(row[n]) for n in names) for row in result)  # type: ignore[union-attr]


def naive_and_sepa(folder: Path, sample_subs: int, sample_events: int) -> Iterator[str]:
    from semps.ontology import load_expansion

    started = time.perf_counter()
    expansion = load_expansion(folder / "ontology.owl")
    store = ox.Store()
    for i, path in enumerate(sorted((folder / "graph").iterdir())):
        store.bulk_extend(_closed_quads(expansion, path, f"g{i}x"))
    yield f"baselines: graph closed by semps and loaded in pyoxigraph: {len(store):,} quads, " + (
        f"{time.perf_counter() - started:.0f} s"
    )
    subs = sorted((folder / "subscriptions").iterdir())
    rng = random.Random(7)
    texts = [p.read_text() for p in rng.sample(subs, min(sample_subs, len(subs)))]
    events = sorted((folder / "events").iterdir())[:sample_events]
    before = [_answers(store, t) for t in texts]
    per_event, per_query, matches = [], [], 0
    for i, path in enumerate(events):
        quads = _closed_quads(expansion, path, f"e{i}x")
        store.extend(quads)
        t0 = time.perf_counter()
        after = []
        for text in texts:
            t1 = time.perf_counter()
            after.append(_answers(store, text))
            per_query.append(time.perf_counter() - t1)
        per_event.append(time.perf_counter() - t0)
        matches += sum(1 for a, b in zip(after, before, strict=True) if a - b)
        for q in quads:
            store.remove(q)
    scale = len(subs) / len(texts)
    mean = sum(per_event) / len(per_event)
    yield (
        f"naive (a pyoxigraph query per subscription over graph + event): {1 / (mean * scale):.3g}"
        f" events/s, {mean * scale:,.0f} s an event at {len(subs):,} subscriptions "
        f"({1000 * mean / len(texts):.1f} ms a query, median {1000 * median(per_query):.1f}; "
        f"{len(texts)} subscriptions x {len(events)} events sampled, {matches} matches)"
    )
    last, per_update, changes = before, [], 0
    for i, path in enumerate(events):
        store.extend(_closed_quads(expansion, path, f"u{i}x"))  # retained: the graph grows
        t0 = time.perf_counter()
        now = [_answers(store, t) for t in texts]
        changes += sum(1 for a, b in zip(now, last, strict=True) if (a - b) or (b - a))
        per_update.append(time.perf_counter() - t0)
        last = now
    mean = sum(per_update) / len(per_update)
    yield (
        f"SEPA (every subscription re-evaluated after each update): {1 / (mean * scale):.3g} "
        f"updates/s, {mean * scale:,.0f} s an update at {len(subs):,} subscriptions "
        f"({changes} changed answers in the sample)"
    )
