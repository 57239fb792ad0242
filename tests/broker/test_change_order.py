"""The order of the knowledge graph's changes among the events (semps.broker.jobs.ChangeOrder):
an event sees every change submitted before it and none after, but for the change whose
notifications are still being computed (nobody has been answered about it: the event goes
before it, so a large change does not hold up the events during it); a change's
notifications are computed once, on a replica before it; it commits after every event
ordered before it; a worker
applies it only when no waiting event needs the graph before it; a failed change is
forgotten and the events after it are matched without it."""

from __future__ import annotations

import pytest

from semps.broker.jobs import ApplyChange, ChangeOrder, ComputeNotes, Item, Step
from semps.graph.change import GraphChange


def items(*names: str) -> list[Item]:
    return [Item(name, "text/turtle", b"", 0.0) for name in names]


def step(version: int) -> Step:
    return Step(GraphChange(version), f"graph-{version}")


def computed(change: Step) -> Step:
    """The change with its notifications computed (none)."""
    change.outcome = ("ok", None, [], [])
    return change


def test_events_are_matched_against_every_change_submitted_before_them() -> None:
    order = ChangeOrder(4)
    before = items("a", "b")
    order.stamp(before)
    order.submit(computed(step(5)))
    after = items("c")
    order.stamp(after)
    assert [i.graph for i in before + after] == [4, 4, 5]


def test_events_during_a_changes_notifications_go_before_it_and_it_waits_for_them() -> None:
    order = ChangeOrder(4)
    change = step(5)
    order.submit(change)
    assert isinstance(order.job(at=4, head=None), ComputeNotes)
    during = items("a", "b")
    order.stamp(during)
    assert [i.graph for i in during] == [4, 4]
    assert order.job(at=4, head=4) is None  # the other worker takes those events
    computed(change)
    after = items("c")
    order.stamp(after)
    assert after[0].graph == 5
    assert order.ready() is None  # the events during it are not answered yet
    order.answered(during)
    assert order.ready() is change


def test_one_worker_computes_a_changes_notifications_and_others_go_on_with_events() -> None:
    order = ChangeOrder(0)
    order.submit(step(1))
    first = order.job(at=0, head=None)
    assert isinstance(first, ComputeNotes) and first.step.version == 1
    assert order.job(at=0, head=None) is None  # claimed: the other worker matches events


def test_a_change_commits_only_once_every_event_before_it_is_answered() -> None:
    order = ChangeOrder(0)
    before = items("a", "b")
    order.stamp(before)
    change = step(1)
    order.submit(change)
    assert order.ready() is None  # its notifications are not computed yet
    change.outcome = ("ok", None, [], [])
    assert order.ready() is None  # events before it are not answered
    order.answered(before[:1])
    assert order.ready() is None
    order.answered(before[1:])
    assert order.ready() is change


def test_a_worker_applies_a_committed_change_once_no_waiting_event_needs_the_graph_before() -> None:
    order = ChangeOrder(0)
    change = step(1)
    order.submit(change)
    change.outcome = ("ok", None, [], [])
    order.settled(change, True, [])
    assert order.committed == 1
    assert order.job(at=0, head=0) is None  # an event waiting for version 0 goes first
    job = order.job(at=0, head=1)
    assert isinstance(job, ApplyChange) and job.step is change
    assert isinstance(order.job(at=0, head=None), ApplyChange)


def test_a_change_is_forgotten_once_every_worker_applied_it() -> None:
    order = ChangeOrder(0)
    change = step(1)
    order.submit(change)
    order.settled(change, True, [])
    order.applied([1, 0])
    assert 1 in order.steps
    order.applied([1, 1])
    assert order.steps == {}


def test_a_failed_change_is_forgotten_and_the_events_after_it_go_without_it() -> None:
    order = ChangeOrder(3)
    change = step(4)
    order.submit(change)
    after = items("c", "d")
    order.stamp(after)
    order.settled(change, False, after)
    assert [i.graph for i in after] == [3, 3]
    assert (order.submitted, order.committed, order.steps) == (3, 3, {})
    order.submit(step(4))  # the next edit takes the version again


def test_changes_are_submitted_one_at_a_time_in_version_order() -> None:
    order = ChangeOrder(0)
    with pytest.raises(ValueError, match="does not follow 0"):
        order.submit(step(2))
    order.submit(step(1))
    with pytest.raises(ValueError, match=r"does not follow 1 \(committed: 0\)"):
        order.submit(step(2))  # the first is still in flight
