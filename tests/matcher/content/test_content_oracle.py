"""Every content algorithm answers exactly like brute force, on random workloads with random
inserts, updates and deletes: values on a small grid (so equality points and interval ends
are hit often), strings, missing attributes, several values per attribute, tiny and large
bucket counts and slot blocks, HCEM's pass and its cell bitsets under every memory budget,
deltas that are merged at once or never, and interface limits that force aggregation."""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import SubscriptionError
from semps.matcher.content import (
    BruteForceIndex,
    ContentIndex,
    HcemIndex,
    PredicateTableIndex,
    ReinIndex,
)
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.interfaces import overlap

ATTRS = ["a", "b", "c", "d"]
GRID = [0, 0.5, 1, 1.5, 2, 2.5, 3]
STRINGS = ["x", "y", "z"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

numbers = st.one_of(st.sampled_from(GRID), st.floats(-0.5, 3.5, allow_nan=False))
values = st.one_of(numbers, st.sampled_from(STRINGS))


@st.composite
def constraints(draw: st.DrawFn) -> Constraint:
    attr = draw(st.sampled_from(ATTRS))
    op = draw(st.sampled_from([">=", "<=", "=", "=", "between"]))
    if op == "between":
        low = draw(st.sampled_from(GRID))
        return Constraint(attr, op, low=low, high=low + draw(st.sampled_from([0, 0.5, 1, 2])))
    if op == "=":
        return Constraint(
            attr, op, draw(st.one_of(st.sampled_from(GRID), st.sampled_from(STRINGS)))
        )
    return Constraint(attr, op, draw(st.sampled_from(GRID)))


@st.composite
def subscriptions(draw: st.DrawFn) -> ContentSubscription:
    sub_id = f"s{draw(st.integers(0, 25))}"
    cs = draw(st.lists(constraints(), min_size=1, max_size=4))
    interface = draw(st.sampled_from(["i", "j", None]))
    try:
        return ContentSubscription(sub_id, tuple(cs), interface)
    except SubscriptionError:  # constraints that can never hold together: keep the first
        return ContentSubscription(sub_id, tuple(cs[:1]), interface)


views = st.dictionaries(
    st.sampled_from(ATTRS), st.lists(values, min_size=1, max_size=3), max_size=len(ATTRS)
)

operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), subscriptions()),
        st.tuples(st.just("remove"), st.integers(0, 25)),
        st.tuples(st.just("match"), st.lists(views, min_size=1, max_size=20)),
    ),
    min_size=1,
    max_size=60,
)


@st.composite
def indexes(draw: st.DrawFn) -> list[ContentIndex]:
    def shared() -> dict[str, Any]:
        return {"delta_min": draw(st.sampled_from([0, 1, 3, 10_000]))}

    def buckets() -> dict[str, Any]:
        return {
            "buckets": draw(st.sampled_from([1, 2, 7, 64])),
            "block": draw(st.sampled_from([1, 3, 4096])),
        }

    limit = draw(st.sampled_from([None, 1, 2, 3]))
    return [
        PredicateTableIndex(interface_limit=limit, **shared()),
        ReinIndex(**buckets(), **shared()),
        HcemIndex(
            max_batch=draw(st.sampled_from([1, 5, 64])),
            min_batch=draw(st.sampled_from([1, 16, 10**6])),  # 10**6: cell bitsets only
            cells=draw(st.sampled_from([1, 3, 64])),
            bits_per_predicate=draw(st.sampled_from([0, 64, 4096])),
            bucket_size=draw(st.sampled_from([1, 4, 256])),
            **buckets(),
            **shared(),
        ),
    ]  # fmt: skip


def run(ops: list[tuple[str, Any]], under_test: list[ContentIndex], rebuild: bool) -> None:
    oracle = BruteForceIndex()
    for op, arg in ops:
        if op == "add":
            for index in [oracle, *under_test]:
                index.add(arg)
        elif op == "remove":
            live = sorted(oracle.subscriptions)
            if live:
                victim = live[arg % len(live)]
                for index in [oracle, *under_test]:
                    index.remove(victim)
        else:
            want = [oracle.match(v) for v in arg]
            for index in under_test:
                if rebuild:
                    index.rebuild()  # type: ignore[attr-defined]
                    assert index.built == len(index.table)  # type: ignore[attr-defined]
                assert index.match_batch(arg) == want, index.name
                assert [index.match(v) for v in arg] == want, index.name
        for index in under_test:
            assert len(index) == len(oracle)


@pytest.mark.parametrize("rebuild", [False, True], ids=["with-delta", "rebuilt"])
@SETTINGS
@given(ops=operations, under_test=indexes())
def test_every_algorithm_equals_brute_force_under_churn(
    ops: list[tuple[str, Any]], under_test: list[ContentIndex], rebuild: bool
) -> None:
    """Also with every structure rebuilt before each match (no delta: only the structure
    answers)."""
    run(ops, under_test, rebuild=rebuild)


def test_every_algorithm_equals_brute_force_on_larger_random_workloads() -> None:
    """Hypothesis shrinks towards small cases; these seeded runs keep larger tables (dozens
    of subscriptions, hundreds of events) in the suite too."""
    for seed in range(12):
        rng = random.Random(seed)
        ops: list[tuple[str, Any]] = []
        for _ in range(120):
            roll = rng.random()
            if roll < 0.55:
                ops.append(("add", _random_sub(rng)))
            elif roll < 0.75:
                ops.append(("remove", rng.randrange(26)))
            else:
                ops.append(("match", [_random_view(rng) for _ in range(rng.randint(1, 40))]))
        under_test = [
            PredicateTableIndex(interface_limit=rng.choice([None, 1, 2]), delta_min=3),
            ReinIndex(buckets=rng.choice([1, 5, 100]), block=rng.choice([1, 4, 4096]), delta_min=3),
            HcemIndex(
                buckets=rng.choice([1, 5, 100]), block=rng.choice([1, 4]), delta_min=3, min_batch=1
            ),
            HcemIndex(  # the cell bitsets for every batch
                min_batch=10**6,
                delta_min=3,
                bits_per_predicate=rng.choice([0, 64, 4096]),
                cells=rng.choice([2, 8]),
                bucket_size=rng.choice([1, 3, 256]),
            ),
        ]
        run(ops, under_test, rebuild=False)


def _random_sub(rng: random.Random) -> ContentSubscription:
    cs = []
    for attr in rng.sample(ATTRS, rng.randint(1, 3)):
        op = rng.choice([">=", "<=", "=", "between"])
        if op == "between":
            low = rng.choice(GRID)
            cs.append(Constraint(attr, op, low=low, high=low + rng.choice([0, 0.5, 1, 2])))
        elif op == "=":
            cs.append(Constraint(attr, op, rng.choice([*GRID, *STRINGS])))
        else:
            cs.append(Constraint(attr, op, rng.choice(GRID)))
    return ContentSubscription(f"s{rng.randrange(26)}", tuple(cs), rng.choice(["i", "j", None]))


def _random_view(rng: random.Random) -> dict[str, list[Any]]:
    view: dict[str, list[Any]] = {}
    for attr in ATTRS:
        if rng.random() < 0.85:
            n = rng.choice([1, 1, 1, 2])
            view[attr] = [
                rng.choice([rng.choice(GRID), rng.uniform(-0.5, 3.5), rng.choice(STRINGS)])
                for _ in range(n)
            ]
    return view


@SETTINGS
@given(
    subs=st.lists(subscriptions(), min_size=1, max_size=30),
    limit=st.integers(1, 3),
    removals=st.lists(st.integers(0, 25), max_size=10),
)
def test_aggregation_keeps_interfaces_within_their_limit(
    subs: list[ContentSubscription], limit: int, removals: list[int]
) -> None:
    """An interface holds at most ``limit`` entries unless no two of them overlap, and its
    entries stand for exactly its subscriptions."""
    index = PredicateTableIndex(interface_limit=limit, delta_min=0)
    for s in subs:
        index.add(s)
    for r in removals:
        live = sorted(index.interfaces.subscriptions)
        if live:
            index.remove(live[r % len(live)])
    lists = index.interfaces
    for uids in lists.interfaces.values():
        entries = [lists.entries[u] for u in uids]
        if len(entries) > limit:
            assert all(
                overlap(a.conditions, b.conditions) == 0 for a, b in combinations(entries, 2)
            )
    members = sorted(m for e in lists.entries.values() for m in e.members)
    assert members == sorted(lists.subscriptions)


def test_an_aggregate_is_re_checked_member_by_member() -> None:
    index = PredicateTableIndex(interface_limit=1, delta_min=0)
    index.add(ContentSubscription("s1", (Constraint("a", "between", low=0, high=1),), "i"))
    index.add(ContentSubscription("s2", (Constraint("a", "between", low=2, high=3),), "i"))
    index.add(ContentSubscription("s3", (Constraint("a", "between", low=0.5, high=2.5),), "i"))
    assert len(index.interfaces.interfaces["i"]) == 1  # one aggregate covering [0, 3]
    assert index.match({"a": [1.75]}) == ["s3"]  # inside the hull, outside s1 and s2
    assert index.match({"a": [0.75]}) == ["s1", "s3"]
    index.remove("s3")
    assert index.match({"a": [1.75]}) == []
