"""HCEM's batch pass (rank prefix sets over REIN's lists), as the CLI drives it: events as
attribute -> one value, several threads over slot blocks, batches longer than one pass,
deleted slots, a delta of recent inserts, values outside every bucket domain, missing and
unknown attributes, strings, bools and huge integers -- always the brute force's answers."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import PATIENCE

from semps._types import Value
from semps.matcher.content import BruteForceIndex, HcemIndex
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.results import MatchColumns

ATTRS = ["a", "b", "c", "s"]
GRID = [-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 2.0]


def _sub(rng: random.Random, i: int) -> ContentSubscription:
    cs = []
    for attr in rng.sample(ATTRS, rng.randint(1, 3)):
        op = rng.choice([">=", "<=", "=", "between"])
        if attr == "s":
            cs.append(Constraint(attr, "=", rng.choice(["x", "y", 3])))
        elif op == "between":
            low = rng.choice(GRID)
            cs.append(Constraint(attr, op, low=low, high=low + rng.choice([0, 0.5, 1])))
        else:
            cs.append(Constraint(attr, op, rng.choice(GRID)))
    return ContentSubscription(f"s{i:04d}", tuple(cs))


def _values(rng: random.Random) -> dict[str, Value]:
    row: dict[str, Value] = {}
    for attr in [*ATTRS, "zz"]:
        if rng.random() < 0.85:
            row[attr] = rng.choice(
                [
                    rng.choice(GRID),
                    rng.uniform(-3, 3),
                    rng.choice(["x", "y", "w"]),
                    rng.choice([True, 3, 10**400, -(10**400)]),
                ]
            )
    return row


def _ids(columns: MatchColumns) -> list[list[str]]:
    out: list[list[str]] = [[] for _ in range(columns.events)]
    for e, s in zip(columns.event.tolist(), columns.subscription.tolist(), strict=True):
        out[e].append(columns.ids[s])
    return out


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    threads=st.sampled_from([1, 2, 3]),
    block=st.sampled_from([1, 5, 64]),
    buckets=st.sampled_from([1, 3, 50]),
    max_batch=st.sampled_from([7, 64, 1024]),
    delta=st.booleans(),
)
def test_columns_of_values_equal_brute_force(
    seed: int, threads: int, block: int, buckets: int, max_batch: int, delta: bool
) -> None:
    rng = random.Random(seed)
    index = HcemIndex(
        buckets=buckets, block=block, threads=threads, max_batch=max_batch, min_batch=2,
        delta_min=10**6 if delta else 0,
    )  # fmt: skip
    oracle = BruteForceIndex()
    subs = [_sub(rng, i) for i in range(rng.randint(1, 150))]
    for sub in subs[: len(subs) // 2]:
        index.add(sub)
        oracle.add(sub)
    index.rebuild()
    for sub in subs[len(subs) // 2 :]:  # a delta (delta_min large) or a rebuild
        index.add(sub)
        oracle.add(sub)
    for victim in rng.sample(subs, len(subs) // 5):
        index.remove(victim.id)
        oracle.remove(victim.id)
    rows = [_values(rng) for _ in range(rng.randint(1, 130))]
    want = [oracle.match({k: (v,) for k, v in row.items()}) for row in rows]
    assert _ids(index.match_columns_values(rows)) == want


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_large_pass_split_over_threads_equals_brute_force(threads: int) -> None:
    rng = random.Random(threads)
    index, oracle = HcemIndex(buckets=100, block=256, threads=threads), BruteForceIndex()
    for i in range(3000):
        lows = {a: rng.random() * 0.6 for a in "abc"}
        sub = ContentSubscription(
            f"s{i}", tuple(Constraint(a, "between", low=x, high=x + 0.4) for a, x in lows.items())
        )
        index.add(sub)
        oracle.add(sub)
    index.rebuild()
    rows: list[dict[str, Any]] = [{a: rng.random() for a in "abc"} for _ in range(300)]
    want = [oracle.match({k: (v,) for k, v in row.items()}) for row in rows]
    assert _ids(index.match_columns_values(rows)) == want
    assert index.match_batch([{k: [v] for k, v in row.items()} for row in rows]) == want


def test_a_forked_child_matches_with_threads_of_its_own() -> None:
    """The broker forks workers after building: a pool started in the parent has no threads
    in the child, which must start its own instead of waiting on them forever."""
    import multiprocessing

    index = HcemIndex(buckets=10, block=64, threads=2)
    for i in range(500):
        index.add(ContentSubscription(f"s{i}", (Constraint("a", ">=", i / 500),)))
    index.rebuild()
    rows: list[dict[str, Any]] = [{"a": x / 40} for x in range(40)]
    want = _ids(index.match_columns_values(rows))  # starts the parent's pool
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        got = pool.apply_async(_child_ids, (index, rows)).get(timeout=PATIENCE)
    assert got == want


def _child_ids(index: HcemIndex, rows: list[dict[str, Any]]) -> list[list[str]]:
    return _ids(index.match_columns_values(rows))
