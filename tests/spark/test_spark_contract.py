"""The matcher contract in the Spark execution mode: for every stateless registered matcher,
bulk matching on a real local Spark session (broadcast, and partitioned by a mined placement)
gives, per event, the solution counts a matcher built fresh in process gives."""

from __future__ import annotations

import random

import pytest
from matcher_samples import WORKLOADS

from semps.errors import SparkError
from semps.matcher.base import MatchContext
from semps.matcher.registry import available, create_matcher, get_matcher_class
from semps.ontology import Expansion
from semps.spark.bulk import match_events
from semps.spark.placed import subscription_items
from semps.spark.placement import mine_placement

pytestmark = pytest.mark.spark

STATELESS = [k for k in available() if not get_matcher_class(k).stateful]


@pytest.mark.parametrize("kind", STATELESS)
@pytest.mark.parametrize("placed", [False, True], ids=["broadcast", "placement"])
def test_spark_counts_equal_a_fresh_matcher(spark, kind: str, placed: bool) -> None:  # type: ignore[no-untyped-def]
    subs, events = WORKLOADS[kind](random.Random(7), 120)
    matcher = create_matcher(kind)
    for sub in subs:
        matcher.add(sub)
    want = {
        e.id: counts
        for e, counts in zip(
            events, matcher.count_batch([MatchContext(e) for e in events]), strict=True
        )
    }
    placement = None
    if placed:
        items = subscription_items(subs)
        if not any(items):  # region subscriptions carry no items: nothing to place by
            with pytest.raises(SparkError, match="no subscription has attribute items"):
                mine_placement(spark, items, partitions=3)
            return
        placement = mine_placement(spark, items, partitions=3, min_support=0.05, virtual=1)
    rdd = spark.sparkContext.parallelize(events, 3)
    got = dict(match_events(rdd, subs, Expansion(), placement=placement).collect())
    assert {e: c for e, c in got.items() if c} == {e: c for e, c in want.items() if c}
