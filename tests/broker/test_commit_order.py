"""Which finished batches commit when no stateful matcher needs the order
(semps.broker.pipeline.committable): whatever finished, at once, except a bridge's ordered
events (MQTT's ordered topics): a batch holding them waits for the earlier ones that do."""

from __future__ import annotations

from semps.broker.pipeline import committable


def test_batches_without_ordered_events_commit_as_soon_as_they_finish() -> None:
    assert committable({3, 1}, set()) == [1, 3]


def test_an_ordered_batch_waits_for_an_earlier_ordered_batch_still_matching() -> None:
    assert committable({2}, {1, 2}) == []
    assert committable({1, 2}, {1, 2}) == [1]


def test_other_batches_pass_an_ordered_batch_that_waits() -> None:
    assert committable({2, 3}, {1, 2}) == [3]


def test_the_first_ordered_batch_commits_beside_the_others() -> None:
    assert committable({0, 1, 4}, {1, 2}) == [0, 1, 4]
