"""The cyclic GC around matching batches (semps.gcpolicy): off during a batch, cyclic
garbage collected before a later one, survivors frozen; and the facts that schedule relies
on (registering and removing subscriptions make no cyclic garbage)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from semps.gcpolicy import BatchCollector
from semps.matcher.base import Subscription
from semps.matcher.semantic import SemanticMatcher


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


def test_thaw_makes_the_next_batch_collect_everything() -> None:
    collector = BatchCollector(slack=10**9, growth=10**9)
    with collector.batch():
        pass
    ref = _frozen_garbage()
    collector.thaw()
    with collector.batch():
        assert ref() is None


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
