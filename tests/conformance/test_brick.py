"""Brick buildings (../shared/workloads/brick-a): real building models under the Brick 1.4
ontology.

- The workload's 112 subscriptions give its expected answers (rdflib over the owlrl closure,
  cross-checked with a second reasoner; see the workload's README).
- The subscriptions in ``brick_algebra/`` are what facilities apps write beyond basic graph
  patterns (``brick:feeds+``, ``brick:hasPart+``, OPTIONAL labels and units, UNION of
  classes, MINUS, NOT EXISTS, BIND, VALUES, variable predicates): semps answers exactly
  what pyoxigraph answers over the same closed event, through ``semps match`` too. Brick
  declares no transitive property and many events state ``isFedBy`` or ``isPartOf`` only:
  ``feeds+`` and ``hasPart+`` must follow the edges the closure adds (the inverses), so their
  answers differ from the same query over the raw event.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path

import pyoxigraph as ox
import pytest
from semps_test_support import WORKLOADS, from_oxigraph, to_oxigraph

from semps.cli.match import build_matcher, event_files, load_subscriptions
from semps.event import Event
from semps.ingest.rdf import read_events
from semps.matcher.base import MatchContext
from semps.matcher.results import result_line
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.values import Subscription
from semps.ontology import load_expansion
from semps.ontology.expansion import Expansion
from semps.terms import XSD, Literal

FOLDER = WORKLOADS / "brick-a"
ALGEBRA = Path(__file__).parent / "brick_algebra"


@cache
def _expansion() -> Expansion:
    return load_expansion(FOLDER / "ontology.owl")


@cache
def _events() -> tuple[Event, ...]:
    return tuple(read_events(event_files(FOLDER / "events"), None))


def _algebra_subscriptions() -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted(ALGEBRA.glob("*.rq"))}


def test_the_workload_subscriptions_give_the_expected_answers() -> None:
    expected = {
        row["event"]: row
        for row in map(json.loads, (FOLDER / "expected.jsonl").read_text().splitlines())
    }
    matcher = build_matcher(load_subscriptions(FOLDER / "subscriptions"), workers=1)
    assert len(_events()) == len(expected) == 51
    for event in _events():
        matched = {
            m.subscription: m.count for m in matcher.match(MatchContext(event, _expansion()))
        }
        assert json.loads(result_line(event.id, matched)) == expected[event.id], event.id


def _canonical(solution: Mapping[str, object]) -> frozenset[tuple[str, object]]:
    """A solution with its numbers compared by value (pyoxigraph stores
    ``"6.2e+01"^^xsd:double`` as ``"62"``)."""
    return frozenset((v, _value(t)) for v, t in solution.items())


def _value(term: object) -> object:
    if isinstance(term, Literal) and term.datatype in (XSD + "double", XSD + "float"):
        return (term.datatype, float(term.lexical))
    if isinstance(term, Literal) and term.datatype in (XSD + "decimal", XSD + "integer"):
        return (term.datatype, Decimal(term.lexical))
    return term


def _store(triples: list[tuple[object, object, object]]) -> ox.Store:
    store = ox.Store()
    store.bulk_extend(
        ox.Quad(to_oxigraph(s), ox.NamedNode(str(p)), to_oxigraph(o)) for s, p, o in triples
    )
    return store


def _answers(store: ox.Store, text: str) -> Counter:
    result = store.query(text)
    if isinstance(result, ox.QueryBoolean):
        return Counter([frozenset()]) if bool(result) else Counter()
    names = [v.value for v in result.variables]
    return Counter(
        _canonical({n: from_oxigraph(sol[n]) for n in names if sol[n] is not None})
        for sol in result
    )


def _closed(event: Event) -> list[tuple[object, object, object]]:
    by_prop = EventPairs(MatchContext(event, _expansion()).parts).by_prop
    return [(s, p, o) for p, rows in by_prop.items() for s, o in rows]


@cache
def _oracle() -> dict[str, dict[str, Counter]]:
    """Per event, each algebra subscription's solutions by pyoxigraph over the closure."""
    out = {}
    for event in _events():
        store = _store(_closed(event))
        found = {sid: _answers(store, text) for sid, text in _algebra_subscriptions().items()}
        out[event.id] = {sid: rows for sid, rows in found.items() if rows}
    return out


@pytest.fixture(scope="module")
def algebra_matcher() -> SemanticMatcher:
    matcher = SemanticMatcher(solution_limit=100_000)
    for sid, text in _algebra_subscriptions().items():
        matcher.add(Subscription(sid, "semantic", text))
    return matcher


def test_algebra_subscriptions_answer_what_pyoxigraph_answers_over_the_closure(
    algebra_matcher: SemanticMatcher,
) -> None:
    oracle = _oracle()
    for event in _events():
        found = algebra_matcher.match(MatchContext(event, _expansion()))
        ours = {m.subscription: Counter(map(_canonical, m.solutions)) for m in found}
        assert ours == oracle[event.id], event.id


def test_every_algebra_subscription_matches_some_event() -> None:
    matched = {sid for answers in _oracle().values() for sid in answers}
    assert matched == set(_algebra_subscriptions())


@pytest.mark.parametrize("sid", ["p07-feeds-chains", "p03-part-chains", "p05-fed-by-upstream"])
def test_paths_follow_edges_only_the_closure_has(sid: str) -> None:
    text = _algebra_subscriptions()[sid]
    oracle = _oracle()
    differs = [
        e.id
        for e in _events()
        if _answers(_store(list(e.triples)), text) != oracle[e.id].get(sid, Counter())
    ]
    assert differs, "the closure adds no edge this path follows: the test shows nothing"


def _semps(*command: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``semps <command>`` run as a process over the Brick ontology, queries and events."""
    inputs = ["--ontology", str(FOLDER / "ontology.owl"), "--subscriptions", str(ALGEBRA)]
    argv = [sys.executable, "-m", "semps", *command, *inputs, "--events", str(FOLDER / "events")]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def test_semps_match_prints_the_oracle_counts(tmp_path: Path) -> None:
    result = _semps("match")
    assert result.returncode == 0, result.stderr
    printed = {
        row["event"]: row["solutions"] for row in map(json.loads, result.stdout.splitlines())
    }
    oracle = _oracle()
    assert printed == {
        eid: {sid: sum(rows.values()) for sid, rows in answers.items()}
        for eid, answers in oracle.items()
    }


@pytest.mark.spark
def test_semps_spark_match_prints_the_oracle_counts() -> None:
    """Spark's bulk job runs the same matcher: the same language, the same answers."""
    result = _semps("spark", "match", "--master", "local[2]", timeout=600)
    assert result.returncode == 0, result.stderr
    printed = {
        row["event"]: row["solutions"] for row in map(json.loads, result.stdout.splitlines())
    }
    assert printed == {
        eid: {sid: sum(rows.values()) for sid, rows in answers.items()}
        for eid, answers in _oracle().items()
    }
