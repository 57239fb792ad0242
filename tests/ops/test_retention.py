"""Retention in the store: each subscription keeps its newest notifications by number and
by age, checked against a brute-force oracle over every stored row."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.broker.contracts import EventRecord
from semps.broker.retention import Pruner, RetentionPolicy
from semps.broker.sqlite_store import SQLiteStore
from semps.matcher.values import Subscription


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "semps.sqlite3")
    yield s
    s.close()


def fill(store: SQLiteStore, subs: list[str], times: list[float]) -> None:
    """One event per time, notifying every subscription; notifications created then."""
    store.put_subscriptions([Subscription(s, "semantic", "ASK {}", "me") for s in subs])
    for i, when in enumerate(times):
        record = EventRecord(f"ev-{i}", when, "", 0, [(s, '{"n":1') for s in subs])
        store.commit_events([record])
        db = store._w  # the commit stamps the clock's time: give the row its test time
        db.execute("UPDATE notifications SET created = ? WHERE event = ?", (when, f"ev-{i}"))


def rows(store: SQLiteStore) -> dict[str, list[tuple[int, float]]]:
    db = sqlite3.connect(store.path)
    out: dict[str, list[tuple[int, float]]] = {}
    for sub, seq, created in db.execute(
        "SELECT subscription, seq, created FROM notifications ORDER BY subscription, seq"
    ):
        out.setdefault(sub, []).append((seq, created))
    db.close()
    return out


def oracle(
    before: dict[str, list[tuple[int, float]]], bounds: dict[str, tuple[int, float]], now: float
) -> dict[str, list[int]]:
    """What must remain: the newest ``count`` (0: all) that are younger than ``age`` (0: all)."""
    kept = {}
    for sub, notes in before.items():
        count, age = bounds[sub]
        last = max(seq for seq, _ in notes)
        kept[sub] = [
            seq
            for seq, created in notes
            if (count == 0 or seq > last - count) and (age == 0 or created >= now - age)
        ]
    return kept


@settings(max_examples=25, deadline=None)
@given(
    count=st.integers(0, 6),
    age=st.sampled_from([0.0, 5.0, 50.0]),
    own=st.lists(
        st.tuples(st.none() | st.integers(0, 6), st.none() | st.sampled_from([0.0, 3.0, 30.0])),
        min_size=3,
        max_size=3,
    ),
    times=st.lists(st.floats(0, 100), min_size=1, max_size=12).map(sorted),
    chunk=st.integers(1, 4),
)
def test_prune_keeps_exactly_what_the_bounds_allow(
    tmp_path_factory: pytest.TempPathFactory,
    count: int,
    age: float,
    own: list[tuple[int | None, float | None]],
    times: list[float],
    chunk: int,
) -> None:
    store = SQLiteStore(tmp_path_factory.mktemp("r") / "semps.sqlite3")
    try:
        subs = ["s0", "s1", "s2"]
        fill(store, subs, times)
        for sub, (c, a) in zip(subs, own, strict=True):
            store.set_retention(sub, c, a)
        before = rows(store)
        bounds = {
            sub: (count if c is None else c, age if a is None else a)
            for sub, (c, a) in zip(subs, own, strict=True)
        }
        removed = store.prune(count, age, now=100.0, chunk=chunk)
        after = {sub: [seq for seq, _ in notes] for sub, notes in rows(store).items()}
        expected = oracle(before, bounds, 100.0)
        assert {k: v for k, v in expected.items() if v} == after
        assert removed >= sum(len(before[s]) - len(expected[s]) for s in subs)
    finally:
        store.close()


def test_a_subscription_retention_reads_back(store: SQLiteStore) -> None:
    fill(store, ["s"], [1.0])
    assert store.retention("s") == (None, None)
    store.set_retention("s", 5, 3600.0)
    assert store.retention("s") == (5, 3600.0)


def test_old_events_leave_the_event_log(store: SQLiteStore) -> None:
    fill(store, ["s"], [10.0, 49.0, 50.0, 90.0])  # events received at these times
    store.prune(0, 50.0, now=100.0)
    db = sqlite3.connect(store.path)
    assert [r[0] for r in db.execute("SELECT id FROM events ORDER BY id")] == ["ev-2", "ev-3"]
    db.close()


def test_the_pruner_runs_on_its_own_and_stops(store: SQLiteStore) -> None:
    fill(store, ["s"], [1.0, 2.0, 3.0])
    passes: list[int] = []
    pruner = Pruner(store, RetentionPolicy(count=1, age=0, interval=3600))
    pruner.after_pass = lambda: passes.append(pruner.pruned)
    pruner.start()
    pruner.configure(RetentionPolicy(count=1, age=0, interval=0.05))
    for _ in range(300):
        if passes:
            break
        time.sleep(0.05)
    pruner.close()
    assert passes and passes[0] == 2
    assert [seq for seq, _ in rows(store)["s"]] == [3]


def test_a_policy_refuses_negative_bounds() -> None:
    with pytest.raises(ValueError, match="retention bounds"):
        RetentionPolicy(count=-1)
