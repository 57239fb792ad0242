"""Matching against a knowledge graph in process, CPU time an event (not a test; issue 33).

The graph opened from a data directory (``semps graph load ... --data-dir DATA``) or read
from a folder, the first N subscriptions of a ``knowledge_graph.py write`` folder
registered, 20 events of warm-up, then ``count_batch`` over the first M events; prints the
CPU seconds of each phase and the CPU an event. ``DUMP=FILE`` writes each event's counts
(JSON lines) to compare two commits' answers (run one with ``PYTHONPATH=`` its checkout);
``PROFILE=FILE`` writes a cProfile of the matching alone. The collector is frozen before
the matching, as ``semps match`` does (a full collection over the subscriptions, at a
random point of the matching, made runs differ threefold).

    .venv/bin/python bench/kg_inprocess.py DIR N M [GRAPH_OR_DATA_DIR]
"""

from __future__ import annotations

import cProfile
import gc
import json
import os
import sys
import time
from pathlib import Path

from semps.cli.graphs import load_graph
from semps.ingest.rdf import read_events
from semps.matcher.base import MatchContext, Subscription
from semps.matcher.semantic import SemanticMatcher
from semps.ontology.load import load_expansion


def main() -> None:
    folder, n_subs, n_events = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    graph = Path(sys.argv[4]) if len(sys.argv) > 4 else folder / "graph"
    t0 = time.process_time()
    expansion = load_expansion(folder / "ontology.owl")
    view = load_graph(graph, expansion, [], None)
    t1 = time.process_time()
    print(f"graph {t1 - t0:.1f} s CPU, {len(view)} triples", flush=True)
    matcher = SemanticMatcher()
    files = sorted((folder / "subscriptions").glob("*.rq"))[:n_subs]
    for f in files:
        matcher.add(Subscription(f.stem, "semantic", f.read_text()))
    matcher.graph_matching()
    t2 = time.process_time()
    print(f"registered {len(files)} in {t2 - t1:.1f} s CPU", flush=True)
    paths = sorted((folder / "events").glob("*.nt"))[:n_events]
    events = list(read_events(paths, None))
    matcher.count_batch([MatchContext(e, expansion, graph=view) for e in events[:20]])
    contexts = [MatchContext(e, expansion, graph=view) for e in events]
    gc.collect()
    gc.freeze()  # as `semps match` does between batches (semps.gcpolicy)
    profile = os.environ.get("PROFILE")
    profiler = cProfile.Profile() if profile else None
    t3 = time.process_time()
    if profiler is not None:
        profiler.enable()
    counts = matcher.count_batch(contexts)
    t4 = time.process_time()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    found = sum(len(c) for c in counts)
    per = 1e3 * (t4 - t3) / max(1, len(contexts))
    print(f"matched {len(contexts)} events: {per:.3f} ms CPU an event, {found} matches")
    dump = os.environ.get("DUMP")
    if dump:
        with open(dump, "w") as out:
            for e, c in zip(events, counts, strict=True):
                out.write(json.dumps({"event": e.id, "solutions": dict(sorted(c.items()))}) + "\n")


if __name__ == "__main__":
    main()
