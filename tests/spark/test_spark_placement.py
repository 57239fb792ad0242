"""Placement mined from the subscription history.

The placement rules are plain Python and are specified here without Spark; the mining is
checked against a brute-force count of frequent itemsets, and the placement's promise (no
event misses a partition holding a subscription it matches) against the workloads' answers.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import zlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import Case

from semps.errors import SparkError
from semps.ingest.json_event import read_json_event
from semps.matcher.content.brute import matches
from semps.matcher.content.parse import parse_subscription
from semps.matcher.values import Subscription
from semps.ontology import Expansion
from semps.spark import shipped_index
from semps.spark.placed import (
    PlacedPlan,
    event_items,
    match_placed,
    placed_parts,
    subscription_items,
)
from semps.spark.placement import (
    Placement,
    balance,
    choose_n,
    delivery_plan,
    mine_placement,
    place_all,
    stable_hash,
    virtual_itemsets,
)
from semps.spark.report import ferry, placement_report
from semps.spark.sources import load_events

ITEMS = [f"a{i}" for i in range(8)]


def test_a_subscription_takes_its_least_supported_frequent_itemset() -> None:
    p = Placement(2, 16, {("a", "b"): 10, ("b", "c"): 3, ("c", "d"): 3}, virtual=(("x", "y"),))
    rng = random.Random(0)
    assert p.choose(frozenset("abc"), rng) == ("b", "c")
    assert {p.choose(frozenset("abcd"), random.Random(s)) for s in range(20)} == {
        ("b", "c"),
        ("c", "d"),
    }  # ties are broken at random


def test_a_subscription_without_a_frequent_itemset_takes_a_virtual_one() -> None:
    p = Placement(2, 16, {("a", "b"): 10}, virtual=(("x", "y"), ("u", "v")))
    chosen = {p.choose(frozenset("aq"), random.Random(s)) for s in range(20)}
    assert chosen == {("x", "y"), ("u", "v")}


def test_an_event_reaches_its_itemsets_and_every_virtual_one() -> None:
    p = Placement(1, 1000, {("a",): 5, ("b",): 4, ("c",): 1}, virtual=(("z",),))
    assert p.route(frozenset("ab")) == {
        stable_hash("a") % 1000,
        stable_hash("b") % 1000,
        stable_hash("z") % 1000,
    }


def test_keys_hash_the_sorted_attributes_the_same_way_in_every_process() -> None:
    p = Placement(2, 1 << 30, {("a", "b"): 1})
    assert p.keys(("a", "b")) == (stable_hash("a\x1fb") % (1 << 30),)
    # Python salts str hashes per process; placement keys must not depend on the process.
    code = "from semps.spark.placement import stable_hash; print(stable_hash('a\\x1fb'))"
    for salt in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert int(out.stdout) == stable_hash("a\x1fb") == zlib.crc32(b"a\x1fb")


def test_a_spread_itemset_uses_its_permutations_then_salted_copies() -> None:
    p = Placement(2, 1 << 30, {("a", "b"): 1}, spread={("a", "b"): 3})
    keys = p.keys(("a", "b"))
    assert len(keys) == 3
    assert stable_hash("a\x1fb") % (1 << 30) in keys
    assert stable_hash("b\x1fa") % (1 << 30) in keys
    one = Placement(1, 1 << 30, {("a",): 1}, spread={("a",): 2})
    assert len(one.keys(("a",))) == 2  # N = 1 has one permutation: a salted copy spreads it


def test_balance_spreads_the_itemsets_of_an_overloaded_partition() -> None:
    p = Placement(1, 4, {("a",): 90, ("b",): 5, ("c",): 5})
    history = [frozenset("a")] * 90 + [frozenset("b")] * 5 + [frozenset("c")] * 5
    balanced = balance(p, history, overload=1.5)
    assert balanced.spread.get(("a",), 1) > 1
    loads = Counter(place_all(balanced, history))
    assert max(loads.values()) < 90


def test_choose_n_takes_the_size_with_most_itemsets() -> None:
    assert choose_n({1: 5, 2: 9, 3: 2}) == 2
    with pytest.raises(SparkError, match="lower the minimum support"):
        choose_n({})


def test_virtual_itemsets_are_infrequent_and_of_size_n() -> None:
    frequent = {("a0", "a1"): 5}
    virtual = virtual_itemsets(ITEMS, 2, frequent, 4, seed=3)
    assert len(virtual) == 4
    assert all(len(v) == 2 and v not in frequent and list(v) == sorted(v) for v in virtual)


def test_delivery_is_direct_within_the_forwarding_degree_else_through_k_leaders() -> None:
    assert delivery_plan(["s1", "s2", "s3"], 3) == [("s1", []), ("s2", []), ("s3", [])]
    plan = delivery_plan([f"s{i}" for i in range(10)], 3)
    assert len(plan) == 3  # K = D groups
    assert sorted([leader, *relays] for leader, relays in plan) == sorted(
        [[f"s{i}" for i in range(k, 10, 3)] for k in range(3)]
    )


item_sets = st.frozensets(st.sampled_from(ITEMS), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    history=st.lists(item_sets, min_size=1, max_size=30),
    event=item_sets,
    n=st.integers(1, 3),
    partitions=st.integers(1, 12),
    spread=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_no_event_misses_a_partition_holding_a_subscription_it_can_match(
    history, event, n, partitions, spread, seed
) -> None:
    rng = random.Random(seed)
    combos = list(itertools.combinations(ITEMS, n))
    frequent = {c: rng.randint(1, 9) for c in rng.sample(combos, min(len(combos), 6))}
    virtual = tuple(c for c in combos if c not in frequent)[:2]
    p = Placement(n, partitions, frequent, virtual)
    if spread:
        p = balance(p, history, overload=1.0, seed=seed)
    where = place_all(p, history, seed=seed)
    reached = p.route(event)
    for items, part in zip(history, where, strict=True):
        if items <= event:  # a subscription can only match events carrying its items
            assert part in reached


def brute_force_frequent(history: list[frozenset[str]], min_count: int) -> dict:
    universe = sorted(set().union(*history))
    found = {}
    for size in range(1, len(universe) + 1):
        any_found = False
        for combo in itertools.combinations(universe, size):
            support = sum(1 for t in history if t.issuperset(combo))
            if support >= min_count:
                found[combo] = support
                any_found = True
        if not any_found:
            break
    return found


@pytest.mark.spark
def test_mining_finds_the_brute_force_frequent_itemsets_of_the_busiest_size(spark) -> None:
    rng = random.Random(7)
    history = [frozenset(rng.sample(ITEMS[:6], rng.randint(1, 4))) for _ in range(60)]
    placement = mine_placement(spark, history, partitions=8, min_support=0.2, virtual=2)
    oracle = brute_force_frequent(history, min_count=12)  # 0.2 of 60
    sizes = Counter(len(k) for k in oracle)
    assert placement.n == choose_n(sizes)
    assert dict(placement.itemsets) == {k: v for k, v in oracle.items() if len(k) == placement.n}
    assert all(v not in oracle for v in placement.virtual)


@pytest.mark.spark
def test_mining_takes_transactions_with_repeated_items(spark) -> None:
    history = [["p", "q", "p"], ["q", "p", "q"], ["p", "r"]]
    placement = mine_placement(spark, history, partitions=4, min_support=0.5)
    # supports count transactions, not repeated items: p 3, q 2, {p, q} 2; size 1 wins
    assert placement.n == 1
    assert placement.itemsets == {("p",): 3, ("q",): 2}


@pytest.mark.spark
def test_mining_a_sample_counts_the_sample_and_still_places_every_subscription_soundly(
    spark,
) -> None:
    rng = random.Random(3)
    history = [frozenset(rng.sample(ITEMS, rng.randint(1, 3))) for _ in range(400)]
    placement = mine_placement(spark, history, partitions=8, min_support=0.1, sample=50)
    # supports are counted in the 50 sampled transactions, not the 400
    assert placement.itemsets and max(placement.itemsets.values()) <= 50
    parts = place_all(placement, history)
    # an event carrying a subscription's items reaches the partition holding it
    assert all(part in placement.route(items) for items, part in zip(history, parts, strict=True))


@pytest.mark.spark
def test_every_lubm_match_is_on_a_partition_its_event_reaches(spark, lubm: Case) -> None:
    placement = mine_placement(
        spark, subscription_items(lubm.subscriptions), partitions=8, overload=1.2
    )
    where = dict(
        zip(
            (s.id for s in lubm.subscriptions),
            place_all(placement, subscription_items(lubm.subscriptions)),
            strict=True,
        )
    )
    assert len(where) == len(lubm.subscriptions)  # each subscription on exactly one partition
    kinds = ["semantic"]
    events = load_events(spark, str(lubm.events)).collect()
    for event in events:
        reached = placement.route(event_items(event, kinds, lubm.expansion))
        for sub_id in lubm.expected[event.id]:
            assert where[sub_id] in reached, (event.id, sub_id)


@pytest.mark.spark
def test_the_report_compares_mined_placement_with_ferry_and_broadcast(
    spark, synthetic: Case, tmp_path
) -> None:
    items = subscription_items(synthetic.subscriptions)
    placement = mine_placement(spark, items, partitions=6, min_support=0.03)
    events = load_events(spark, str(synthetic.events))
    report = placement_report(placement, synthetic.subscriptions, events, synthetic.expansion)
    figures = report.as_dict()["strategies"]
    for name in ("mined", "ferry", "broadcast"):
        assert sum(figures[name]["subscriptions_per_partition"]) == len(synthetic.subscriptions)
    assert figures["ferry"]["subscriptions_per_partition"] == [
        Counter(ferry(items, 6)).get(k, 0) for k in range(6)
    ]
    assert figures["broadcast"]["mean_replication"] == 6
    assert 1 <= figures["mined"]["mean_replication"] <= 6
    delivered = report.delivery["direct"] + report.delivery["relayed"] + report.delivery["leaders"]
    assert delivered == sum(len(c) for c in synthetic.expected.values())
    report.plot(tmp_path / "placement.png")
    assert (tmp_path / "placement.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ferry" in report.text()


def test_a_worker_matches_each_event_on_the_partitions_it_reaches_alone_as_brute_force_says() -> (
    None
):
    # Telemetry-like: subscriptions of 1-2 constraints over 40 attributes, events carrying 1-3
    # of them, so an event reaches a few of the 16 partitions and its worker builds only those.
    rng = random.Random(5)
    attrs = [f"t{i}" for i in range(40)]
    subs = []
    for i in range(300):
        constraints = []
        for attr in rng.sample(attrs, rng.randint(1, 2)):
            low = round(rng.random() * 0.5, 2)
            constraints.append({"attr": attr, "op": "between", "low": low, "high": low + 0.5})
        subs.append(Subscription(f"s{i:03d}", "content", json.dumps({"constraints": constraints})))
    docs = [
        {
            "id": f"e{i:02d}",
            "values": {a: rng.random() for a in rng.sample(attrs[:6], rng.randint(1, 3))},
        }
        for i in range(30)
    ]
    items = subscription_items(subs)
    support = Counter(item for found in items for item in found)
    placement = balance(Placement(1, 16, {(a,): c for a, c in support.items()}), items)
    index = shipped_index.ShippedIndex(
        "placed-test", placed_parts(subs, placement, items, 0), Expansion()
    )
    events = [read_json_event(json.dumps(d).encode()) for d in docs]
    reached = set().union(
        *(placement.route(event_items(e, ["content"], Expansion())) for e in events)
    )
    assert len(reached) < placement.partitions  # narrow: some partitions are never reached

    plan = PlacedPlan(placement, ("content",), Expansion())
    got = dict(match_placed(index, plan, events))

    parsed = [parse_subscription(s.text, sub_id=s.id) for s in subs]
    want = {
        d["id"]: {s.id: 1 for s in parsed if matches(s, {k: (v,) for k, v in d["values"].items()})}
        for d in docs
    }
    assert sum(map(len, want.values())) > 10  # not trivially empty
    assert got == want
    built = {part for token, part in shipped_index._BUILT if token == "placed-test"}
    assert built == reached & set(index.parts)  # no index built for a partition never reached
