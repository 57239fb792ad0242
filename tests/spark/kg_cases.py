"""Random knowledge-graph cases (``tests/kg_strategies.py``) as the files the commands read,
and the answers the oracle (``tests/kg_oracle.py``: owlrl's OWL 2 RL closure, pyoxigraph's
SPARQL) gives for them as ``semps match`` lines."""

from __future__ import annotations

import json
from pathlib import Path

from kg_oracle import GraphOracle
from kg_strategies import EventCase

from semps.terms import n3


def _ntriples(triples: object) -> str:
    return "".join(f"{n3(s)} {n3(p)} {n3(o)} .\n" for s, p, o in triples)  # type: ignore[attr-defined]


def write_case(case: EventCase, folder: Path) -> dict[str, Path]:
    """``case`` as files under ``folder``: ``ontology.nt``, ``graph/graph.nt``,
    ``events/e<i>.nt`` and ``subscriptions/q<i>.rq``; their paths by role."""
    paths = {
        "ontology": folder / "ontology.nt",
        "graph": folder / "graph",
        "events": folder / "events",
        "subscriptions": folder / "subscriptions",
    }
    for key in ("graph", "events", "subscriptions"):
        paths[key].mkdir(parents=True)
    paths["ontology"].write_text(_ntriples(case.ontology))
    (paths["graph"] / "graph.nt").write_text(_ntriples(case.graph))
    for i, event in enumerate(case.events):
        (paths["events"] / f"e{i}.nt").write_text(_ntriples(event))
    for qid, query in case.queries.items():
        (paths["subscriptions"] / f"{qid}.rq").write_text(query.text)
    return paths


def oracle_lines(case: EventCase) -> list[dict]:
    """The oracle's answer to each event of ``case`` as a ``semps match`` line: the
    subscriptions it adds solutions to, and how many (``sols(Q, closure(O+K+E)) -
    sols(Q, closure(O+K))``, a multiset difference)."""
    oracle = GraphOracle(case.ontology, case.graph)
    texts = {qid: q.oracle_text for qid, q in case.queries.items()}
    lines = []
    for i, event in enumerate(case.events):
        added = oracle.added(event, texts, label=f"e{i}")
        counts = {qid: sum(rows.values()) for qid, rows in sorted(added.items())}
        lines.append({"event": f"e{i}", "matches": sorted(counts), "solutions": counts})
    return lines


def read_lines(text: str) -> list[dict]:
    """JSON lines, parsed."""
    return [json.loads(line) for line in text.splitlines()]
