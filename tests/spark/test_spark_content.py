"""Content and region subscriptions in bulk on Spark: JSON events, the broker's content and
symmetric matchers in the workers, answers equal to brute force (with and without the mined
placement)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from semps.matcher.content.brute import matches
from semps.matcher.content.parse import parse_subscription
from semps.matcher.values import Subscription
from semps.ontology import Expansion
from semps.spark.bulk import match_events
from semps.spark.placed import subscription_items
from semps.spark.placement import mine_placement
from semps.spark.sources import load_events, raise_load_errors, source_kind

pytestmark = pytest.mark.spark

ATTRS = [f"a{i}" for i in range(6)]


def content_workload(rng: random.Random, n_subs: int, n_events: int):  # type: ignore[no-untyped-def]
    subs = []
    for i in range(n_subs):
        constraints = []
        for attr in rng.sample(ATTRS, rng.randint(1, 3)):
            low = round(rng.random() * 0.6, 2)
            if rng.random() < 0.2:
                constraints.append({"attr": attr, "op": "=", "value": rng.choice([1, 2, "x"])})
            else:
                constraints.append({"attr": attr, "op": "between", "low": low, "high": low + 0.4})
        subs.append(Subscription(f"s{i:03d}", "content", json.dumps({"constraints": constraints})))
    events = []
    for i in range(n_events):
        values: dict[str, object] = {}
        for attr in rng.sample(ATTRS, rng.randint(1, 6)):
            values[attr] = rng.choice([1, 2, "x"]) if rng.random() < 0.2 else rng.random()
        events.append({"id": f"e{i:03d}", "values": values})
    return subs, events


def test_content_subscriptions_match_json_events_as_brute_force_says(spark, tmp_path: Path) -> None:
    rng = random.Random(11)
    subs, docs = content_workload(rng, 120, 80)
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert source_kind(str(path)) == "events"
    events = load_events(spark, str(path))
    raise_load_errors(events)
    parsed = [parse_subscription(s.text, sub_id=s.id) for s in subs]
    want = {
        d["id"]: {s.id: 1 for s in parsed if matches(s, {k: (v,) for k, v in d["values"].items()})}
        for d in docs
    }
    assert sum(map(len, want.values())) > 20  # the workload is not trivially empty
    assert dict(match_events(events, subs, Expansion()).collect()) == want
    placement = mine_placement(spark, subscription_items(subs), partitions=5, min_support=0.1)
    placed = match_events(events, subs, Expansion(), placement=placement)
    assert dict(placed.collect()) == want


def test_region_subscriptions_match_publications_that_overlap(spark, tmp_path: Path) -> None:
    subs = [
        Subscription("left", "symmetric", '{"region": {"x": [0.0, 0.3]}}'),
        Subscription("box", "symmetric", '{"region": {"x": [0.2, 0.5], "y": [0.5, 0.5]}}'),
        Subscription("far", "symmetric", '{"region": {"z": [5, 6]}}'),
    ]
    docs = [
        {"id": "p1", "region": {"x": [0.25, 0.26]}},  # overlaps left and box; far: no z
        {"id": "p2", "region": {"x": [0.4, 0.9], "y": [0.0, 0.4]}},  # box misses on y, left on x
        {"id": "p3", "region": {"z": [6, 7]}},  # shares only z with far
    ]
    path = tmp_path / "publications.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    got = dict(match_events(load_events(spark, str(path)), subs, Expansion()).collect())
    assert got == {
        "p1": {"left": 1, "box": 1, "far": 1},
        "p2": {"far": 1},  # no attribute in common: nothing keeps them apart
        "p3": {"left": 1, "box": 1, "far": 1},
    }


def test_a_bad_json_event_line_is_named(spark, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": "e1", "values": {"a": 1}}\n{"id": "e2", "values": {"a": true}}\n')
    with pytest.raises(Exception, match=r"^events\.jsonl:2:.*'a' must be a number or a string"):
        raise_load_errors(load_events(spark, str(path)))
