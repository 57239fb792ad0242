"""The cell bitsets (HCEM's path for events that come alone) answer exactly like brute force:
values on the bounds, just beside them and between them, open and closed intervals,
points, string equalities and strings no subscription names, missing attributes, several
values per attribute, subscriptions added and removed after the build (found, and gone, at
once), every memory budget from none (lists only) to a cell per bucket, one bucket per
bound, and equalities common enough to get a bucket of their own."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.errors import SubscriptionError
from semps.matcher.content import BruteForceIndex, HcemIndex
from semps.matcher.content.brute import matches
from semps.matcher.content.cells import CellBitsets
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.space import AttributeSpace
from semps.matcher.content.table import SlotTable

ATTRS = ["a", "b", "c", "s"]
GRID = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]
STRINGS = ["x", "y", "z"]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def constraints(draw: st.DrawFn) -> Constraint:
    attr = draw(st.sampled_from(ATTRS))
    op = draw(st.sampled_from([">=", "<=", "=", "between", "between"]))
    if attr == "s" or (op == "=" and draw(st.booleans())):
        return Constraint(attr, "=", draw(st.sampled_from([*STRINGS, 1.0])))
    if op == "between":
        low = draw(st.sampled_from(GRID))
        return Constraint(attr, op, low=low, high=low + draw(st.sampled_from([0, 0.25, 1, 3])))
    return Constraint(attr, op, draw(st.sampled_from(GRID)))


def subscription(i: int) -> st.SearchStrategy[ContentSubscription]:
    def make(cs: list[Constraint]) -> ContentSubscription:
        try:
            return ContentSubscription(f"s{i:03d}", tuple(cs))
        except SubscriptionError:  # constraints that can never hold together: keep one
            return ContentSubscription(f"s{i:03d}", tuple(cs[:1]))

    return st.lists(constraints(), min_size=1, max_size=3).map(make)


def near(x: float) -> st.SearchStrategy[float]:
    """A bound itself, or the doubles either side of it."""
    return st.sampled_from([x, math.nextafter(x, -math.inf), math.nextafter(x, math.inf)])


values = st.one_of(
    st.sampled_from(GRID).flatmap(near),
    st.floats(-2, 5, allow_nan=False),
    st.sampled_from([*STRINGS, "w", math.inf, -math.inf, True]),
)
views = st.dictionaries(
    st.sampled_from([*ATTRS, "zz"]), st.lists(values, min_size=1, max_size=3), max_size=5
)
budgets = st.fixed_dictionaries(
    {
        "cells": st.sampled_from([1, 2, 3, 16]),
        "bits_per_predicate": st.sampled_from([0, 8, 64, 4096]),
        "bucket_size": st.sampled_from([1, 2, 7, 256]),
    }
)


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[ContentSubscription], list[ContentSubscription]]:
    """Subscriptions present at the build, and those added after it (fresh ids and
    replacements of built ones)."""
    n = draw(st.integers(1, 40))
    built = [draw(subscription(i)) for i in range(n)]
    later = [draw(subscription(i)) for i in draw(st.lists(st.integers(0, n + 10), max_size=12))]
    return built, later


def _slots_to_ids(table: SlotTable, slots: np.ndarray) -> list[str]:
    return sorted(table.ids[s] for s in slots.tolist())


@SETTINGS
@given(
    work=workloads(),
    budget=budgets,
    removals=st.lists(st.integers(0, 60), max_size=8),
    events=st.lists(views, min_size=1, max_size=12),
)
def test_cell_bitsets_equal_brute_force_with_updates_after_the_build(
    work: tuple[list[ContentSubscription], list[ContentSubscription]],
    budget: dict[str, Any],
    removals: list[int],
    events: list[dict[str, list[Any]]],
) -> None:
    built, later = work
    space, table = AttributeSpace(), SlotTable()
    live: dict[str, ContentSubscription] = {}
    for sub in built:
        if sub.id in live:
            table.kill(sub.id)
        table.append(sub.id, *space.encode_conditions(sub.conditions()))
        live[sub.id] = sub
    table.compact()
    cells = CellBitsets(table, len(space), len(table), len(table) + 64, **budget)
    for sub in later:  # in the table only: the rows learn of them at the next match
        if sub.id in live:
            cells.kill(table.kill(sub.id))
        table.append(sub.id, *space.encode_conditions(sub.conditions()))
        live[sub.id] = sub
    for r in removals:
        if live:
            victim = sorted(live)[r % len(live)]
            cells.kill(table.kill(victim))
            del live[victim]
    for view in events:
        want = sorted(s.id for s in live.values() if matches(s, view))
        assert _slots_to_ids(table, cells.match(space.encode_view(view), table)) == want


def test_a_value_on_a_bound_is_inside_and_the_next_double_outside() -> None:
    subs = [
        ContentSubscription("closed", (Constraint("a", "between", low=0.5, high=1.5),)),
        ContentSubscription("point", (Constraint("a", "=", 1.5),)),
        ContentSubscription("open-up", (Constraint("a", ">=", 1.5),)),
        ContentSubscription("open-down", (Constraint("a", "<=", 0.5),)),
    ]
    index = HcemIndex(bits_per_predicate=4096, cells=4, bucket_size=1)
    for sub in subs:
        index.add(sub)
    index.rebuild()
    assert index.match({"a": [1.5]}) == ["closed", "open-up", "point"]
    assert index.match({"a": [math.nextafter(1.5, 2)]}) == ["open-up"]
    assert index.match({"a": [0.5]}) == ["closed", "open-down"]
    assert index.match({"a": [math.nextafter(0.5, 0)]}) == ["open-down"]
    assert index.match({"a": [math.inf]}) == ["open-up"]
    assert index.match({"b": [1.0]}) == []


def test_a_common_equality_gets_a_bucket_of_its_own() -> None:
    """Its bounds then need no check against the table: the event's value either is the
    equality's value (lows and highs hold) or lies above it (the highs fail)."""
    space, table = AttributeSpace(), SlotTable()
    for i in range(300):
        value = "red" if i % 3 else f"colour-{i}"
        table.append(f"s{i}", *space.encode_conditions({"c": value}))
    cells = CellBitsets(table, 1, 300, 300, cells=4, bits_per_predicate=64, bucket_size=16)
    eoff, edges, bbase, _, _, _, _, _, lo_at, _, _, _, single = cells.arrays[:13]
    red = space.codes(0)["red"]
    q = int(np.searchsorted(edges[eoff[0] : eoff[1]], red, side="right"))
    assert single[bbase[0] + q]
    assert lo_at[bbase[0] + q + 1] - lo_at[bbase[0] + q] == 200  # every "red" low in it
    got = cells.match(space.encode_view({"c": ["red"]}), table)
    assert _slots_to_ids(table, got) == sorted(f"s{i}" for i in range(300) if i % 3)


def test_rows_stay_within_the_budget_and_sparse_columns_get_none() -> None:
    """Fail rows cost bits_per_predicate bits per stored predicate at most; a column fewer
    than n / 64 subscriptions constrain has no rows (its lists cost less)."""
    rng = random.Random(3)
    space, table = AttributeSpace(), SlotTable()
    for i in range(6400):
        conditions: dict[str, Any] = {"dense": (rng.random(), 2.0)}
        if i < 50:
            conditions["rare"] = (rng.random(), 1.0)
        table.append(f"s{i:05d}", *space.encode_conditions(conditions))
    cells = CellBitsets(table, 2, 6400, 6400, cells=1000, bits_per_predicate=16)
    cbase, frow, con = cells.arrays[5], cells.arrays[6], cells.arrays[7]
    npred = 6400 + 50
    fail_rows = int(np.sum(frow >= 0))
    assert fail_rows * 6400 <= 16 * npred
    assert con[space.find("rare", False)] == -1
    assert np.all(frow[cbase[1] : cbase[2]] == -1)  # "rare" is column 1: lists only
    assert con[space.find("dense", False)] >= 0


def test_hcem_takes_the_cell_bitsets_for_small_batches_only() -> None:
    """A batch of min_batch events or more is one pass over REIN's lists and builds no cell
    bitsets; a smaller one builds them (once) and answers the same."""
    rng = random.Random(5)
    index, oracle = HcemIndex(min_batch=8, buckets=20), BruteForceIndex()
    for i in range(500):
        low = rng.random()
        sub = ContentSubscription(
            f"s{i:03d}",
            (Constraint("a", "between", low=low, high=low + 0.3), Constraint("b", "<=", low)),
        )
        index.add(sub)
        oracle.add(sub)
    views = [{"a": [rng.random()], "b": [rng.random()]} for _ in range(40)]
    want = [oracle.match(v) for v in views]
    index.rebuild()
    before = index.memory()
    assert index.match_batch(views) == want
    assert index.memory() == before
    assert index.match_batch(views[:3]) == want[:3]
    grown = index.memory()
    assert grown > before
    assert [index.match(v) for v in views] == want
    assert index.memory() == grown


@pytest.mark.parametrize("threads", [1, 2])
def test_a_subscription_added_after_the_build_matches_at_once(threads: int) -> None:
    index = HcemIndex(threads=threads, delta_min=1000)
    for i in range(200):
        index.add(ContentSubscription(f"s{i:03d}", (Constraint("a", ">=", i / 200),)))
    index.rebuild()
    assert index.match({"a": [0.004]}) == ["s000"]
    index.add(ContentSubscription("late", (Constraint("a", "between", low=0.0, high=0.01),)))
    index.add(ContentSubscription("s001", (Constraint("b", "=", "x"),)))  # replaced
    assert index.match({"a": [0.006]}) == ["late", "s000"]
    assert index.match({"a": [0.006], "b": ["x"]}) == ["late", "s000", "s001"]
    index.remove("late")
    index.remove("s000")
    assert index.match_batch([{"a": [0.006]}, {"b": ["x"]}]) == [[], ["s001"]]
    assert index.built == 200  # all of it without a rebuild


def test_prepare_builds_the_cell_bitsets_before_the_first_small_batch_only() -> None:
    """``semps content match --batch 1`` calls ``prepare(1)`` at load: the cell bitsets are
    there before the first event, and answer like brute force; a batch size that takes the
    pass builds nothing."""
    rng = random.Random(11)
    index, oracle = HcemIndex(min_batch=8, buckets=20), BruteForceIndex()
    for i in range(300):
        low = rng.random()
        sub = ContentSubscription(
            f"s{i:03d}", (Constraint("a", "between", low=low, high=low + 0.2),)
        )
        index.add(sub)
        oracle.add(sub)
    index.rebuild()  # (300 would stay in the delta, checked directly: no structure)
    index.prepare(8)
    before = index.memory()
    index.prepare(8)
    assert index.memory() == before
    index.prepare(1)
    prepared = index.memory()
    assert prepared > before
    views = [{"a": [rng.random()]} for _ in range(20)] + [{"a": [0.5]}, {"b": [0.5]}]
    assert [index.match(v) for v in views] == [oracle.match(v) for v in views]
    assert index.memory() == prepared  # nothing more built at the first event
