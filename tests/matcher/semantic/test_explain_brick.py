"""Explain on the shared workloads against their own oracles: on the Brick telemetry case
(brick-kg-a), for every subscription and several events, explain's verdict and count are
those of ``expected.jsonl`` (pyoxigraph over the closure by the ``reasonable`` reasoner; an
event notifies the solutions it adds to the graph's); on the cases without a graph (brick-a,
synthetic-s7: every event against every subscription; LUBM's joins of type patterns written
first, queries 2 and 9, on one department), those of theirs (SPARQL over owlrl's closure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semps.cli.graphs import load_graph
from semps.ingest.rdf import read_events
from semps.matcher.semantic.explain import explain
from semps.matcher.values import Subscription
from semps.ontology.compile import compile_axioms
from semps.ontology.load import ontology_triples
from semps.ontology.split import split

EVENTS = ["k00-tel", "k01-vav", "k04-tel", "k08-new", "k09-alm", "k13-eqp"]


@pytest.fixture(scope="module")
def case(workloads: Path) -> dict[str, object]:
    folder = workloads / "brick-kg-a"
    found = split(ontology_triples(folder / "ontology.owl"))
    expansion = compile_axioms(found.axioms)
    graph = load_graph(folder / "graph" / "site.ttl", expansion, found.facts, None)
    expected = {
        row["event"]: row["solutions"]
        for row in map(json.loads, (folder / "expected.jsonl").read_text().splitlines())
    }
    return {"folder": folder, "expansion": expansion, "graph": graph, "expected": expected}


@pytest.mark.parametrize("event_id", EVENTS)
def test_explain_gives_the_oracle_s_counts_on_the_brick_telemetry_case(
    case: dict, event_id: str
) -> None:
    folder: Path = case["folder"]
    (path,) = (folder / "events").glob(f"{event_id}.*")
    (event,) = read_events([path], None)
    want = case["expected"][event_id]
    for rq in sorted((folder / "subscriptions").glob("*.rq")):
        sub = Subscription(rq.stem, "semantic", rq.read_text())
        found = explain(sub, event, case["expansion"], graph=case["graph"])
        assert (found.matched, found.count) == (rq.stem in want, want.get(rq.stem, 0)), rq.stem
        assert found.matched or found.reasons, rq.stem


@pytest.mark.parametrize(
    ("name", "events", "subscriptions"),
    [("brick-a", "*", "*"), ("synthetic-s7", "*", "*"), ("lubm-u0", "u0-d00", "q0[29]")],
)
def test_explain_gives_the_oracle_s_counts_on_the_cases_without_a_graph(
    workloads: Path, name: str, events: str, subscriptions: str
) -> None:
    folder = workloads / name
    found = split(ontology_triples(folder / "ontology.owl"))
    expansion = compile_axioms(found.axioms)
    expected = {
        row["event"]: row["solutions"]
        for row in map(json.loads, (folder / "expected.jsonl").read_text().splitlines())
    }
    subs = [
        Subscription(rq.stem, "semantic", rq.read_text())
        for rq in sorted((folder / "subscriptions").glob(f"{subscriptions}.rq"))
    ]
    for path in sorted((folder / "events").glob(f"{events}.*")):
        (event,) = read_events([path], None)
        want = expected[event.id]
        for sub in subs:
            x = explain(sub, event, expansion, axioms=found.axioms)
            assert (x.matched, x.count) == (sub.id in want, want.get(sub.id, 0)), (event.id, sub)
            assert x.matched or x.reasons, (event.id, sub.id)
