"""Knowledge-graph matching against the independent oracle, on random cases.

For random ontologies (within the OWL 2 RL rules semps supports), knowledge graphs, events,
updates and subscriptions (OPTIONAL, UNION, MINUS, FILTER (NOT) EXISTS, property paths,
FILTERs, ASK, DISTINCT, projection), every system of ``tests/kg_systems.py`` answers what
the oracle (``tests/kg_oracle.py``: owlrl's closure, pyoxigraph's SPARQL) answers:

- an event adds ``sols(Q, closure(O+K+E)) - sols(Q, closure(O+K))`` (a multiset
  difference) to each subscription, the graph unchanged by it;
- an update of the graph adds ``sols(after) - sols(before)`` and removes
  ``sols(before) - sols(after)``, update after update.

The engines under test are ``SYSTEMS`` (semps in process, :mod:`kg_semps`; with none
registered those tests skip, saying so); ``REFERENCES`` holds a brute-force rdflib system,
so the properties run now and check the oracle against a second SPARQL engine.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, event, given, settings
from kg_oracle import GraphOracle, assert_changes, canonical_counter, expected_changes
from kg_strategies import (
    ChangeCase,
    EventCase,
    Query,
    change_cases,
    event_cases,
    oracle_texts,
    texts,
)
from kg_systems import REFERENCES, SYSTEMS, KgSystem

NO_ENGINE = (
    "no knowledge-graph engine registered yet: add its KgSystem adapter to SYSTEMS in "
    "tests/kg_systems.py"
)


def _systems() -> list:
    params = [pytest.param(s, id=s.name) for s in SYSTEMS]
    if not params:
        params.append(pytest.param(None, id="engine", marks=pytest.mark.skip(reason=NO_ENGINE)))
    return params


def _references() -> list:
    return [pytest.param(s, id=s.name) for s in REFERENCES]


#: A reference checks the oracle (pyoxigraph's answers against rdflib's), not semps' engine,
#: and it closes the whole graph again with owlrl for each question (3-5 times semps' time a
#: case: most of this file's time), so it draws a quarter of the cases semps' engine does;
#: the oracle's known corners are pinned one by one in test_kg_oracle.py.
REFERENCE_SHARE = 4


def _compared(system: KgSystem, queries: dict[str, Query]) -> dict[str, Query]:
    """The queries compared for ``system``: those without a feature it declares it gets
    wrong."""
    kept = {qid: q for qid, q in queries.items() if not q.features & system.deviations}
    for q in queries.values():
        for feature in sorted(q.features & system.deviations):
            event(f"left out for {system.name}: {feature}")
    return kept


def _same(found: Counter | None, expected: Counter | None) -> tuple[Counter, Counter]:
    return canonical_counter(found or Counter()), canonical_counter(expected or Counter())


def examples(n: int) -> settings:
    """Hypothesis settings for ``n`` cases (each builds a graph: no deadline)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _event_adds_what_the_oracle_adds(system: KgSystem, case: EventCase) -> None:
    queries = _compared(system, case.queries)
    found = system.added(case.ontology, case.graph, case.events, texts(queries))
    oracle = GraphOracle(case.ontology, case.graph)
    assert len(found) == len(case.events)
    for i, (ev, ours) in enumerate(zip(case.events, found, strict=True)):
        expected = oracle.added(ev, oracle_texts(queries), label=f"e{i}")
        for qid, q in queries.items():
            got, want = _same(ours.get(qid), expected.get(qid))
            assert got == want, f"event {i} {list(ev)}\n{q.text}"
        event(f"solutions added: {'some' if expected else 'none'}")


@pytest.mark.parametrize("system", _systems())
@examples(60)
@given(case=event_cases())
def test_an_event_adds_the_solutions_the_oracle_adds(system: KgSystem, case: EventCase) -> None:
    _event_adds_what_the_oracle_adds(system, case)


@pytest.mark.parametrize("system", _references())
@examples(60 // REFERENCE_SHARE)
@given(case=event_cases())
def test_a_reference_adds_the_solutions_the_oracle_adds(system: KgSystem, case: EventCase) -> None:
    _event_adds_what_the_oracle_adds(system, case)


def _update_changes_what_the_oracle_changes(system: KgSystem, case: ChangeCase) -> None:
    queries = _compared(system, case.queries)
    updates = [u.text for u in case.updates]
    found = system.change(case.ontology, case.graph, updates, texts(queries))
    expected = expected_changes(case.ontology, case.graphs(), oracle_texts(queries))
    assert len(found) == len(case.updates)
    steps = [f"update {i}: {update.text}" for i, update in enumerate(case.updates)]
    assert_changes(found, expected, texts(queries), steps)
    removes = any(want[qid][1] for want in expected for qid in queries)
    event("removes solutions" if removes else "removes none")


@pytest.mark.parametrize("system", _systems())
@examples(40)
@given(case=change_cases())
def test_an_update_adds_and_removes_the_solutions_the_oracle_does(
    system: KgSystem, case: ChangeCase
) -> None:
    _update_changes_what_the_oracle_changes(system, case)


@pytest.mark.parametrize("system", _references())
@examples(40 // REFERENCE_SHARE)
@given(case=change_cases())
def test_a_reference_adds_and_removes_the_solutions_the_oracle_does(
    system: KgSystem, case: ChangeCase
) -> None:
    _update_changes_what_the_oracle_changes(system, case)
