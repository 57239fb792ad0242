"""Each correction of a workload's expected answers (tests/oracle_corrections.py) is what
Oxigraph answers over the same closure, and differs from what rdflib answered."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest
from oracle_corrections import CORRECTIONS
from semps_test_support import WORKLOADS

from semps.cli.match import event_files, read_events
from semps.ontology import load_expansion
from semps.ontology.closure import close
from semps.terms import Literal

PAIRS = [
    (case, event, subscription, count)
    for case, events in CORRECTIONS.items()
    for event, fixes in events.items()
    for subscription, count in fixes.items()
]


def _node(t: object) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(t, Literal):
        if t.lang:
            return ox.Literal(t.lexical, language=t.lang)
        return ox.Literal(t.lexical, datatype=ox.NamedNode(t.datatype))
    assert isinstance(t, str)
    return ox.BlankNode(t[2:]) if t.startswith("_:") else ox.NamedNode(t)


@pytest.mark.parametrize(("case", "event", "subscription", "count"), PAIRS)
def test_a_correction_is_oxigraph_s_answer_not_rdflib_s(
    case: str, event: str, subscription: str, count: int
) -> None:
    folder = WORKLOADS / case
    expansion = load_expansion(folder / "ontology.owl")
    (found,) = [e for e in read_events(event_files(folder / "events"), None) if e.id == event]
    store = ox.Store()
    for s, p, o in close(expansion, found.triples):
        store.add(ox.Quad(_node(s), _node(p), _node(o)))
    query = (folder / "subscriptions" / f"{subscription}.rq").read_text()
    assert len(list(store.query(query))) == count  # type: ignore[arg-type]
    lines = (folder / "expected.jsonl").read_text().splitlines()
    (rdflib_record,) = [r for r in map(json.loads, lines) if r["event"] == event]
    assert rdflib_record["solutions"].get(subscription, 0) != count
