"""The merged subscription index: shared patterns stored once, inserts and deletes leave it
as if built fresh, counter filtering never drops a match, and the parallel path answers
exactly like the single-worker path."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.errors import NotFound, SubscriptionLimitExceeded, SubscriptionSyntaxError
from semps.event import Event
from semps.ingest.sparql import parse_query
from semps.limits import Limits
from semps.matcher.base import MatchContext
from semps.matcher.partab import to_partab
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.plan import plan_partitions
from semps.matcher.semantic.verify import verify
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://ex/"
QUERIES = [
    f"SELECT * {{ ?x <{EX}p> ?y }}",
    f"SELECT * {{ ?x <{EX}p> <{EX}b> }}",
    f"SELECT * {{ ?x <{EX}p> ?y . ?y <{EX}q> ?z }}",
    f"SELECT * {{ ?x a <{EX}C> ; <{EX}q> ?z }}",
    f"SELECT DISTINCT ?x {{ ?x <{EX}p> ?y . ?x <{EX}p> ?w }}",
    f"ASK {{ <{EX}a> <{EX}q> ?z }}",
    f"SELECT * {{ ?x <{EX}p> ?x }}",
]
TRIPLES = [(EX + s, EX + p, EX + o) for s in "abc" for p in "pq" for o in "abc"] + [
    (EX + s, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", EX + "C") for s in "ab"
]


def run(matcher: SemanticMatcher, event: Event) -> dict[str, int]:
    return {m.subscription: m.count for m in matcher.match(MatchContext(event))}


def test_a_shared_pattern_is_stored_once() -> None:
    m = SemanticMatcher()
    for i in range(50):
        m.add(Subscription(f"s{i}", "semantic", QUERIES[0]))
    assert list(m.index.hm_prop[EX + "p"]) == [("*", "*")]
    assert len(m.index.hm_prop[EX + "p"][("*", "*")].slots) == 50


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 9), st.sampled_from(QUERIES)), max_size=40),
    st.lists(st.sampled_from(TRIPLES), min_size=1, max_size=12),
)
def test_any_inserts_and_deletes_answer_like_a_fresh_index(ops, triples) -> None:
    """Matching between the changes too: what the index caches per container (its rows
    for the counter filter) must follow every insert and delete."""
    live: dict[str, str] = {}
    churned = SemanticMatcher()
    event = Event("e", tuple(dict.fromkeys(triples)))
    for insert, n, text in ops:
        churned.count_batch([MatchContext(event)])
        sub_id = f"s{n}"
        if insert:
            churned.add(Subscription(sub_id, "semantic", text))
            live[sub_id] = text
        elif sub_id in live:
            churned.remove(sub_id)
            del live[sub_id]
    fresh = SemanticMatcher()
    for sub_id, text in live.items():
        fresh.add(Subscription(sub_id, "semantic", text))
    assert run(churned, event) == run(fresh, event)
    # The counts-only path (bulk jobs) reads the same churned index.
    assert churned.count_batch([MatchContext(event)]) == [run(fresh, event)]
    assert len(churned) == len(live)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(TRIPLES), min_size=1, max_size=12), st.sampled_from(QUERIES))
def test_counter_filtering_never_drops_a_match(triples, text) -> None:
    """Brute force: verify every subscription without filtering first."""
    m = SemanticMatcher()
    m.add(Subscription("s", "semantic", text))
    event = Event("e", tuple(dict.fromkeys(triples)))
    pairs = EventPairs(to_partab(event))
    brute = verify(compile_query("s", parse_query(text)), pairs)
    survivors = [c.id for c in m.index.counter_filter(pairs)]
    assert (brute is not None) <= ("s" in survivors)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(TRIPLES), min_size=1, max_size=12),
    st.lists(st.sampled_from(QUERIES), min_size=1, max_size=8),
    st.lists(st.integers(0, 7), max_size=4),
)
def test_anchored_counters_keep_exactly_the_seeds_survivors(triples, texts, removed) -> None:
    """Counting only for subscriptions whose anchor was hit changes nothing: the survivors
    are those of a counter for every subscription an SC lists, even after deletions."""
    m = SemanticMatcher()
    for i, text in enumerate(texts):
        m.add(Subscription(f"s{i}", "semantic", text))
    for i in removed:
        if f"s{i}" in m.index.subscriptions:
            m.remove(f"s{i}")
    pairs = EventPairs(to_partab(Event("e", tuple(dict.fromkeys(triples)))))
    anchored = [c.id for c in m.index.counter_filter(pairs)]
    assert anchored == [c.id for c in m.index.counter_filter_all(pairs)]


def test_subscriptions_differing_only_in_id_are_verified_once_per_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from semps.matcher.semantic import verdicts as module

    calls: list[str] = []

    def counting(sub, pairs, limit, budget, event):  # type: ignore[no-untyped-def]
        calls.append(sub.id)
        return verify(sub, pairs, limit, budget, event)

    monkeypatch.setattr(module, "verify", counting)
    regex = f'SELECT ?x {{ ?x <{EX}p> ?y FILTER(regex(str(?y), "b$")) }}'
    m = SemanticMatcher()
    for i in range(3):
        m.add(Subscription(f"same{i}", "semantic", regex))
    m.add(Subscription("renamed", "semantic", regex.replace("?x", "?z")))
    event = Event("e", ((EX + "a", EX + "p", EX + "b"),))
    assert run(m, event) == {"same0": 1, "same1": 1, "same2": 1, "renamed": 1}
    assert len(calls) == 2  # one shape for same0-2, another for the renamed variable
    m.remove("same0")
    m.remove("same1")
    assert run(m, event) == {"same2": 1, "renamed": 1}


def test_remove_unknown_and_bad_text() -> None:
    m = SemanticMatcher()
    with pytest.raises(NotFound, match="no semantic subscription 'nope'"):
        m.remove("nope")
    m.add(Subscription("s", "semantic", QUERIES[0]))
    with pytest.raises(SubscriptionSyntaxError):
        m.add(Subscription("s", "semantic", "SELECT * {"))
    assert len(m) == 1  # the failed replacement left the old one in place


def test_a_text_registered_again_answers_under_each_id_and_outlives_its_first_id() -> None:
    m = SemanticMatcher()
    for i in range(3):
        m.add(Subscription(f"s{i}", "semantic", QUERIES[2]))
    m.remove("s0")
    event = Event("e", triples=tuple(TRIPLES))
    fresh = SemanticMatcher()
    fresh.add(Subscription("s1", "semantic", QUERIES[2]))
    assert run(m, event) == {"s1": run(fresh, event)["s1"], "s2": run(fresh, event)["s1"]}


def test_a_literal_type_counts_beside_a_node_typed_by_a_class() -> None:
    m = SemanticMatcher()
    m.add(Subscription("lit", "semantic", 'SELECT * { ?x a "lit" }'))
    m.add(Subscription("any", "semantic", "SELECT * { ?x a ?c }"))
    lit = Literal("lit", XSD + "string")
    event = Event("e", triples=((EX + "a", RDF_TYPE, lit), (EX + "b", RDF_TYPE, EX + "C")))
    assert run(m, event) == {"lit": 1, "any": 2}


def test_a_text_accepted_before_is_read_again_under_new_limits() -> None:
    m = SemanticMatcher()
    m.add(Subscription("s1", "semantic", QUERIES[2]))  # two patterns
    m.limits = Limits(max_patterns=1)
    with pytest.raises(SubscriptionLimitExceeded):
        m.add(Subscription("s2", "semantic", QUERIES[2]))
    assert len(m) == 1


@pytest.mark.parametrize("prc_num", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("n", [0, 1, 7, 100])
def test_plan_covers_every_candidate_exactly_once(n: int, prc_num: int) -> None:
    scans = plan_partitions(n, prc_num)
    assert sorted({s.worker for s in scans}) == list(range(prc_num if n or prc_num else 1))
    rng = random.Random(n * 31 + prc_num)
    seen: list[int] = []
    for part in {s.part for s in scans}:
        mine = [s for s in scans if s.part == part]
        lo, hi = mine[0].start, mine[0].stop
        while lo < hi:  # two scanners of a part claim from opposite ends in random order
            s = rng.choice(mine)
            if s.direction == "forward":
                seen.append(lo)
                lo += 1
            else:
                hi -= 1
                seen.append(hi)
    assert sorted(seen) == list(range(n))
    if prc_num % 2 == 0:
        assert len({s.part for s in scans}) == prc_num // 2
    elif prc_num > 1:
        assert len({s.part for s in scans}) == prc_num


@contextmanager
def one_and_two_workers(
    seed: int, subscriptions: int, events: int
) -> Iterator[tuple[SemanticMatcher, SemanticMatcher, list[Event], list[MatchContext]]]:
    """A one-worker and a two-worker matcher holding the same random subscriptions, and random
    events with their contexts under one ontology snapshot (so batches go to the workers)."""
    rng = random.Random(seed)
    subs = [Subscription(f"s{i:03}", "semantic", rng.choice(QUERIES)) for i in range(subscriptions)]
    batch = [Event(f"e{i}", tuple(rng.sample(TRIPLES, 8))) for i in range(events)]
    expansion = compile_axioms([])
    contexts = [MatchContext(e, expansion) for e in batch]
    one, two = SemanticMatcher(workers=1), SemanticMatcher(workers=2)
    try:
        for sub in subs:
            one.add(sub)
            two.add(sub)
        yield one, two, batch, contexts
    finally:
        two.close()


def test_two_workers_answer_exactly_like_one() -> None:
    with one_and_two_workers(7, 300, 20) as (one, two, _, contexts):
        single = [one.match(c) for c in contexts]
        assert [two.match(c) for c in contexts] == single
        assert two.match_batch(contexts) == single
        two.remove("s000")
        one.remove("s000")
        assert two.match_batch(contexts) == [one.match(c) for c in contexts]


def test_forked_workers_count_exactly_like_one() -> None:
    with one_and_two_workers(11, 200, 9) as (one, two, _, contexts):
        expected = one.count_batch(contexts)
        assert two.count_batch(contexts) == expected
        assert two._pool is not None
        # Forked when this process has no other thread (a full test run may leave some).
        assert two._pool.forked or threading.active_count() > 1
        two.add(Subscription("late", "semantic", QUERIES[0]))  # forwarded to the workers
        one.add(Subscription("late", "semantic", QUERIES[0]))
        assert two.count_batch(contexts) == one.count_batch(contexts)


def test_result_lines_are_the_counts_lines_with_one_or_two_workers() -> None:
    from semps.matcher.results import result_line

    with one_and_two_workers(5, 120, 7) as (one, two, events, contexts):
        want = [
            result_line(e.id, c) for e, c in zip(events, one.count_batch(contexts), strict=True)
        ]
        assert one.result_lines(contexts) == want
        assert two.result_lines(contexts) == want
