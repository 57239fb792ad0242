"""The knowledge graph through a real `semps serve`, against the independent oracle
(tests/kg_oracle.py: owlrl's closure, pyoxigraph's SPARQL), on random cases
(tests/kg_strategies.py): the ontology PUT, the graph PUT, subscriptions registered over
HTTP, then

- each SPARQL Update POSTed to ``/graph`` notifies every subscription whose answers it
  changes with ``sols(after) - sols(before)`` as ``solutions`` and ``sols(before) -
  sols(after)`` as ``removed``, as recomputing before and after each update gives;
- each event published notifies the solutions it adds over the graph;
- each event published with ``retain=true`` is a change of the graph: its notifications
  are the change's, removed solutions included.

One server serves every example (each resets the ontology, the graph and the
subscriptions); the examples are few, as each goes through HTTP, the pipeline and a
commit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from graph_service import NT, ServiceSystem, changes, ntriples
from hypothesis import HealthCheck, given, settings
from kg_oracle import GraphOracle, assert_changes, canonical_counter, expected_changes
from kg_strategies import ChangeCase, EventCase, change_cases, event_cases, oracle_texts, texts
from semps_test_support import Server

pytestmark = [pytest.mark.server, pytest.mark.slow]

EXAMPLES = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceSystem]:
    # Notifications carry every solution the oracle counts (the default keeps the first
    # 100, the count exact): random paths and unions add hundreds.
    server = Server(tmp_path_factory.mktemp("kg") / "data", extra=("--max-solutions", "100000"))
    yield ServiceSystem(server)
    server.stop()


def _same(found: Counter | None, expected: Counter | None) -> tuple[Counter, Counter]:
    return canonical_counter(found or Counter()), canonical_counter(expected or Counter())


@EXAMPLES
@given(case=change_cases())
def test_an_update_over_http_notifies_what_recomputing_before_and_after_gives(
    service: ServiceSystem, case: ChangeCase
) -> None:
    updates = [u.text for u in case.updates]
    found = service.change(case.ontology, case.graph, updates, texts(case.queries))
    expected = expected_changes(case.ontology, case.graphs(), oracle_texts(case.queries))
    steps = [f"update {i}: {update.text}" for i, update in enumerate(case.updates)]
    assert_changes(found, expected, texts(case.queries), steps)


@EXAMPLES
@given(case=event_cases())
def test_an_event_published_notifies_the_solutions_it_adds_over_the_graph(
    service: ServiceSystem, case: EventCase
) -> None:
    found = service.added(case.ontology, case.graph, case.events, texts(case.queries))
    oracle = GraphOracle(case.ontology, case.graph)
    for i, (event, ours) in enumerate(zip(case.events, found, strict=True)):
        want = oracle.added(event, oracle_texts(case.queries))
        for qid, q in case.queries.items():
            got, expected = _same(ours.get(qid), want.get(qid))
            assert got == expected, f"event {i} {list(event)}\n{q.text}"


@EXAMPLES
@given(case=event_cases())
def test_a_retained_event_notifies_what_it_adds_and_removes(
    service: ServiceSystem, case: EventCase
) -> None:
    """Each event kept in the graph: the oracle's graphs are the graph, then the graph with
    each event in turn (its blank nodes its own: renamed apart, as the service renames
    them)."""
    stream = service._reset(case.ontology, case.graph, texts(case.queries))
    graphs = [list(case.graph)]
    with service.server.client("publisher") as pub:
        found = []
        for i, event in enumerate(case.events):
            posted = pub.post("/events?retain=true", content=ntriples(event), headers=NT)
            assert posted.status_code == 202, posted.text
            found.append(changes(stream, posted.json()["id"]))
            renamed = [tuple(_apart(t, f"r{i}") for t in triple) for triple in event]
            graphs.append([*graphs[-1], *renamed])
    stream.client.close()
    expected = expected_changes(case.ontology, graphs, oracle_texts(case.queries))
    steps = [f"event {i} {list(event)}" for i, event in enumerate(case.events)]
    assert_changes(found, expected, texts(case.queries), steps)


def _apart(term: object, label: str) -> object:
    """A blank node renamed apart with ``label`` (an event's own nodes)."""
    if isinstance(term, str) and term.startswith("_:"):
        return f"_:{label}{term[2:]}"
    return term
