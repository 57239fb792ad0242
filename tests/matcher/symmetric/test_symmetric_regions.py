"""Symmetric (region) matching: overlap is symmetric, a point is a region, attributes left
out are unbounded, and the predicate table (single publications) and the sweep (batches)
answer exactly like brute force under inserts, updates and deletes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import NotFound, SubscriptionError, SubscriptionSyntaxError
from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.symmetric import (
    BruteForceRegions,
    RegionIndex,
    RegionSubscription,
    SymmetricMatcher,
    overlaps,
    parse_region_subscription,
)
from semps.matcher.values import Subscription

GRID = [0, 0.5, 1, 1.5, 2]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def intervals(draw: st.DrawFn) -> tuple[float, float]:
    low = draw(st.one_of(st.sampled_from(GRID), st.floats(0, 2)))
    return (low, low + draw(st.one_of(st.sampled_from([0, 0, 0.5, 1]), st.floats(0, 1))))


regions = st.dictionaries(st.sampled_from(["x", "y", "z"]), intervals(), min_size=1)


@given(a=regions, b=regions)
def test_overlap_is_symmetric(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert overlaps(a, b) == overlaps(b, a)


@given(a=regions, value=st.floats(-1, 3))
def test_a_point_is_a_region_of_one_value(a: dict[str, Any], value: float) -> None:
    """Forward matching (region vs value) is the overlap with ``[v, v]``."""
    inside = all(low <= value <= high for low, high in a.values())
    assert overlaps(a, {k: (value, value) for k in a}) == inside


def test_the_contract_example_and_unbounded_attributes() -> None:
    sub = {"x": (0.1, 0.3), "y": (0.5, 0.5)}
    assert overlaps(sub, {"x": (0.2, 0.4)})  # y left out: unbounded
    assert overlaps(sub, {"x": (0.3, 0.3), "y": (0.5, 0.9)})  # closed ends touch
    assert not overlaps(sub, {"x": (0.31, 0.4)})
    assert overlaps(sub, {"z": (7, 8)})  # no attribute in common


@SETTINGS
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.integers(0, 15), regions),
            st.tuples(st.just("remove"), st.integers(0, 15), st.none()),
            st.tuples(st.just("match"), st.lists(regions, min_size=1, max_size=15), st.none()),
        ),
        max_size=60,
    ),
    delta_min=st.sampled_from([0, 1, 4, 10_000]),
)
def test_single_and_batch_matching_equal_brute_force(
    ops: list[tuple[str, Any, Any]], delta_min: int
) -> None:
    index, oracle = RegionIndex(delta_min=delta_min), BruteForceRegions()
    for op, arg, region in ops:
        if op == "add":
            sub = RegionSubscription(f"s{arg}", region)
            index.add(sub)
            oracle.add(sub)
        elif op == "remove" and oracle.subscriptions:
            victim = sorted(oracle.subscriptions)[arg % len(oracle)]
            index.remove(victim)
            oracle.remove(victim)
        elif op == "match":
            want = [oracle.match(r) for r in arg]
            assert [index.match(r) for r in arg] == want
            assert index.match_batch(arg) == want
        assert len(index) == len(oracle)


def test_lengths_far_apart_stay_exact_in_the_sweep() -> None:
    """Length classes: a long region must be found by publications far from its low end."""
    index = RegionIndex()
    index.add(RegionSubscription("long", {"x": (0.0, 100.0)}))
    index.add(RegionSubscription("short", {"x": (50.0, 50.001)}))
    index.add(RegionSubscription("point", {"x": (75.0, 75.0)}))
    index.add(RegionSubscription("other", {"y": (0.0, 1.0)}))
    assert index.match_batch([{"x": (99.0, 99.5)}, {"x": (75, 75)}, {"y": (5, 6)}]) == [
        ["long", "other"],
        ["long", "other", "point"],
        ["long", "point", "short"],
    ]


def test_a_batch_that_overflows_the_pair_buffer_is_retried() -> None:
    index = RegionIndex()
    index.min_capacity = 1
    for i in range(40):
        index.add(RegionSubscription(f"s{i:02d}", {"x": (i / 40, i / 40 + 0.5)}))
    publications = [{"x": (j / 10, j / 10)} for j in range(10)]
    assert index.match_batch(publications) == [index.match(p) for p in publications]
    assert sum(map(len, index.match_batch(publications))) > 100


def test_the_matcher_reads_only_publications() -> None:
    matcher = SymmetricMatcher()
    matcher.add(Subscription("s1", "symmetric", '{"region": {"x": [0.1, 0.3], "y": [0.5, 0.5]}}'))
    publication = Event("e1", regions={"x": (0.2, 0.4)})
    content = Event("e2", values={"x": 0.2})
    assert [m.subscription for m in matcher.match(MatchContext(publication))] == ["s1"]
    assert matcher.match(MatchContext(content)) == []  # no region: not a publication
    batch = matcher.match_batch([MatchContext(publication), MatchContext(content)])
    assert [[m.subscription for m in ms] for ms in batch] == [["s1"], []]
    matcher.remove("s1")
    with pytest.raises(NotFound):
        matcher.remove("s1")


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ('{"region": {"x": [0.3, 0.1]}}', SubscriptionError, "region attribute 'x' has low 0.3 > high 0.1"),  # noqa: E501
        ('{"region": {}}', SubscriptionError, "region must name at least one attribute"),
        ('{"region": {"x": [1]}}', SubscriptionError, "region attribute 'x' must be [low, high] numbers, not an array"),  # noqa: E501
        ('{"region": {"x": [0, 1]}, "values": {}}', SubscriptionError, "unknown key 'values' (expected id, region)"),  # noqa: E501
        ('{"region": {"x": [0, 1]', SubscriptionSyntaxError, "1:24: invalid JSON: Expecting ',' delimiter"),  # noqa: E501
        ("[]", SubscriptionError, 'a region subscription is a JSON object with "region"'),
    ],
)  # fmt: skip
def test_bad_regions_are_refused_with_the_reason(
    text: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as err:
        parse_region_subscription(text, sub_id="s")
    assert str(err.value) == message
