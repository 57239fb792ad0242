"""The cyclic GC around matching batches (semps.gcpolicy): off during a batch, cyclic
garbage collected before a later one, survivors frozen; and the facts that schedule relies
on (registering and removing subscriptions make no cyclic garbage)."""

from __future__ import annotations

import gc
import pickle
import weakref
from collections.abc import Iterator

import pytest

from semps.event import Event
from semps.gcpolicy import BatchCollector
from semps.matcher.partab import to_partab
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.values import Subscription
from semps.ontology.store import OntologyStore
from semps.terms import RDF_TYPE


class Node:
    def __init__(self) -> None:
        self.other: object = self  # a cycle: only the collector frees it


@pytest.fixture(autouse=True)
def collector_state() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_the_collector_is_off_during_a_batch_and_back_after() -> None:
    gc.enable()
    with BatchCollector().batch():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with BatchCollector().batch():
        pass
    assert not gc.isenabled()


def test_a_batchs_cyclic_garbage_is_collected_before_the_next_batch() -> None:
    collector = BatchCollector(slack=0)
    with collector.batch():
        ref = weakref.ref(Node())
    assert ref() is not None  # the cycle outlives its batch: nothing collected meanwhile
    with collector.batch():
        assert ref() is None


def test_what_survives_a_collection_is_frozen() -> None:
    gc.unfreeze()
    kept = [Node() for _ in range(10)]
    with BatchCollector(slack=0).batch():
        assert gc.get_freeze_count() >= len(kept)


def test_below_the_slack_no_collection_runs() -> None:
    gc.collect()
    with BatchCollector(slack=10**9).batch():
        ref = weakref.ref(Node())
    with BatchCollector(slack=10**9).batch():
        assert ref() is not None


def _frozen_garbage() -> weakref.ref[Node]:
    """A cycle frozen while alive, then let go: only a full collection frees it."""
    node = Node()
    gc.freeze()
    ref = weakref.ref(node)
    del node
    return ref


def test_frozen_cyclic_garbage_waits_for_a_full_collection() -> None:
    with BatchCollector(slack=0, growth=10**9).batch():  # sets the baseline
        pass
    ref = _frozen_garbage()
    with BatchCollector(slack=0, growth=10**9).batch():
        assert ref() is not None  # frozen: the young collection does not see it


def test_a_full_collection_runs_once_the_frozen_objects_have_grown() -> None:
    collector = BatchCollector(slack=0, growth=0)  # any growth at all
    with collector.batch():
        pass
    ref = _frozen_garbage()
    Node()  # something new to freeze: the frozen objects grow
    with collector.batch():
        assert ref() is None


def test_only_a_full_collection_is_announced() -> None:
    calls: list[int] = []
    with BatchCollector(slack=0, growth=10**9).batch(lambda: calls.append(1)):
        pass  # the baseline: no full collection
    with BatchCollector(slack=0, growth=10**9).batch(lambda: calls.append(1)):
        pass
    assert calls == []
    collector = BatchCollector(slack=0, growth=0)
    with collector.batch(lambda: calls.append(1)):
        pass
    Node()
    with collector.batch(lambda: calls.append(2)):
        pass
    assert calls == [1, 2]


def test_a_replaced_ontology_snapshot_makes_no_cyclic_garbage() -> None:
    """What a worker receives (an unpickled snapshot), used to close an event, dropped."""
    store = OntologyStore()
    store.load(
        b"<http://ex/C1> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://ex/C0> .\n"
        b"<http://ex/q> <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> <http://ex/p> .",
        format="application/n-triples",
    )
    event = Event(
        "e",
        (("http://ex/a", RDF_TYPE, "http://ex/C1"), ("http://ex/a", "http://ex/q", "http://ex/b")),
    )
    gc.collect()
    gc.disable()
    expansion = pickle.loads(pickle.dumps(store.expansion()))
    assert len(to_partab(event, expansion).pairs) == 3
    del expansion
    assert gc.collect() == 0


def test_registering_and_removing_subscriptions_make_no_cyclic_garbage() -> None:
    texts = [
        "SELECT * WHERE { ?x a <http://ex/C> . ?x <http://ex/p> ?v FILTER(?v > 3) }",
        'SELECT ?x WHERE { ?x <http://ex/s> ?s FILTER(CONTAINS(?s, "red")) }',
        "SELECT * WHERE { ?x <http://ex/p> <http://ex/n1> . ?x <http://ex/q> ?y }",
        "ASK { ?x <http://ex/p> ?y OPTIONAL { ?y <http://ex/q> ?z } }",
    ]
    matcher = SemanticMatcher()
    gc.collect()
    gc.disable()
    for i in range(200):
        matcher.add(
            Subscription(f"s{i}", "semantic", texts[i % len(texts)].replace("C>", f"C{i}>"))
        )
    assert gc.collect() == 0
    gc.disable()
    for i in range(200):
        matcher.remove(f"s{i}")
    assert gc.collect() == 0


def test_the_frozen_objects_are_counted_by_what_each_freeze_adds() -> None:
    """Past the baseline no batch walks the frozen objects (a worker holding a knowledge
    graph's replica freezes millions): the count grows by what each freeze adds, and a full
    collection comes once the objects kept since have passed ``growth`` times the base."""
    calls: list[str] = []
    collector = BatchCollector(slack=0, growth=2)
    with collector.batch(lambda: calls.append("baseline")):
        pass
    base = gc.get_freeze_count()
    walk = gc.get_freeze_count
    gc.get_freeze_count = _no_walk  # type: ignore[assignment]
    try:
        kept = [[i] for i in range(base // 2)]  # half the base: no full collection yet
        with collector.batch(lambda: calls.append("half")):
            pass
        kept += [[i] for i in range(base)]  # past twice the base
    finally:
        gc.get_freeze_count = walk  # type: ignore[assignment]
    with collector.batch(lambda: calls.append("grown")):
        pass
    assert calls == ["grown"]
    assert len(kept) > base


def _no_walk() -> int:
    raise AssertionError("the frozen objects were walked")
