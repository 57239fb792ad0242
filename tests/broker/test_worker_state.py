"""A matching worker starts from the matchers' saved states (semps.broker.worker_load,
semps.broker.state_saver): the pool's writer saves them once they aged and nothing changed
for a while; a worker started later restores them and brings them up to date with the
subscriptions stored since (added, removed, replaced), and answers every event as a worker
that registered every subscription from its text (the oracle), kinds mixed. A damaged
state is logged and left aside, and the writer saves a good one again."""

from __future__ import annotations

import logging
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from matcher_samples import WORKLOADS, semantic_event, semantic_text
from semps_test_support import wait_for

from semps.broker import state_saver
from semps.broker.state_saver import CHANGED_SHARE, StateSaver
from semps.broker.worker import Worker
from semps.broker.worker_load import Packed
from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.values import Match, Subscription
from semps.ontology.expansion import Expansion

KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def no_quiet_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """States are saved as soon as the writer is idle (the quiet period is a rate, not
    what these tests are about)."""
    monkeypatch.setattr(state_saver, "QUIET", 0.0)


def subscriptions(rng: random.Random, n: int, first: int = 0) -> list[Subscription]:
    """Semantic subscriptions and content ones (a matcher that saves no state)."""
    semantic = [Subscription(f"s{first + i}", "semantic", semantic_text(rng)) for i in range(n)]
    content, _ = WORKLOADS["content"](rng, n // 4)
    return semantic + [Subscription(f"c{first + i}", s.kind, s.text) for i, s in enumerate(content)]


def events(rng: random.Random) -> list[Event]:
    found = [semantic_event(rng, i) for i in range(40)]
    return found + WORKLOADS["content"](rng, 0)[1]


def answers(worker: Worker, events: list[Event]) -> dict[str, list[list[Match]]]:
    return {kind: [m.match(MatchContext(e)) for e in events] for kind, m in worker.matchers.items()}


def started(
    folder: Path,
    subs: list[Subscription],
    *,
    write: bool,
    key: bytes | None,
    restore_first: bool = False,
) -> Worker:
    """A worker loaded as the pipeline loads one (``restore_first``: asked to restore the
    states before it gets the subscriptions, as at a service's start)."""
    worker = Worker()
    if restore_first and key is not None:
        worker.restore(folder, key)
    worker.load(Packed.of(subs), Expansion(), folder, write, None, key)
    return worker


def saved(worker: Worker) -> bool:
    """Whether the writer, idle, has saved the states (polled as a worker's loop polls)."""
    worker.idle()
    assert worker._saver is not None
    return worker._saver.saves >= 1


def test_a_restart_after_changes_answers_as_a_worker_that_registered_every_text(
    tmp_path: Path,
) -> None:
    rng = random.Random(1)
    subs = subscriptions(rng, 160)
    writer = started(tmp_path, subs, write=True, key=KEY)
    assert wait_for(lambda: saved(writer))
    assert (tmp_path / "semantic.state").exists()
    assert not (tmp_path / "content.state").exists()
    # changes after the save: removals, additions, a replacement with another text
    live = {s.id: s for s in subs}
    for sub_id in rng.sample(sorted(live), 30):
        del live[sub_id]
    for sub in subscriptions(rng, 40, first=1000):
        live[sub.id] = sub
    changed = rng.choice([i for i in live if i.startswith("s")])
    live[changed] = Subscription(changed, "semantic", semantic_text(rng) + " ")
    current = list(live.values())
    restarted = started(tmp_path, current, write=True, key=KEY)
    assert restarted._saver is not None and restarted._saver.changed is not None  # restored
    oracle = started(tmp_path / "none", current, write=False, key=None)
    seen = events(rng)
    assert answers(restarted, seen) == answers(oracle, seen)
    assert any(any(m) for m in answers(oracle, seen)["semantic"])
    reader = started(tmp_path, current, write=False, key=KEY, restore_first=True)
    assert reader._saver is None  # another worker of the pool: it saves nothing
    assert answers(reader, seen) == answers(oracle, seen)


def test_a_state_of_a_kind_no_subscription_has_any_more_is_emptied(tmp_path: Path) -> None:
    rng = random.Random(4)
    subs = subscriptions(rng, 40)
    writer = started(tmp_path, subs, write=True, key=KEY)
    assert wait_for(lambda: saved(writer))
    content = [s for s in subs if s.kind == "content"]
    restarted = started(tmp_path, content, write=False, key=KEY, restore_first=True)
    assert len(restarted.matcher("semantic")) == 0  # type: ignore[arg-type]
    seen = events(rng)
    oracle = started(tmp_path / "none", content, write=False, key=None)
    assert answers(restarted, seen)["content"] == answers(oracle, seen)["content"]


def test_a_damaged_state_is_left_aside_and_saved_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(2)
    subs = subscriptions(rng, 60)
    writer = started(tmp_path, subs, write=True, key=KEY)
    assert wait_for(lambda: saved(writer))
    state = tmp_path / "semantic.state"
    state.write_bytes(state.read_bytes()[:-100])
    with caplog.at_level(logging.WARNING, logger="semps.worker"):
        restarted = started(tmp_path, subs, write=True, key=KEY)
    assert "not a usable matcher state" in caplog.text
    assert "indexing the subscriptions one by one instead" in caplog.text
    seen = events(rng)
    oracle = started(tmp_path / "none", subs, write=False, key=None)
    assert answers(restarted, seen) == answers(oracle, seen)
    assert wait_for(lambda: saved(restarted))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="semps.worker"):
        again = started(tmp_path, subs, write=False, key=KEY)
    assert caplog.text == ""
    assert answers(again, seen) == answers(oracle, seen)


def test_a_writer_saves_again_only_once_the_state_aged(tmp_path: Path) -> None:
    rng = random.Random(3)
    subs = [Subscription(f"s{i}", "semantic", semantic_text(rng)) for i in range(100)]
    writer = started(tmp_path, subs, write=True, key=KEY)
    assert wait_for(lambda: saved(writer))
    restarted = started(tmp_path, subs, write=True, key=KEY)  # restored, nothing changed
    saver = restarted._saver
    assert saver is not None
    assert restarted.idle() is None and saver.saves == 0
    restarted.add(Subscription("new", "semantic", semantic_text(rng)), None)
    assert restarted.idle() is None and saver.saves == 0  # one change in 101
    more = [Subscription(f"n{i}", "semantic", semantic_text(rng)) for i in range(10)]
    restarted.add_many(more)
    assert wait_for(lambda: saved(restarted))


class _Broken(Matcher):
    """A matcher whose state cannot be written (a full disk)."""

    kind = "broken"
    saves_state = True

    def __init__(self) -> None:
        self.tries = 0

    def add(self, subscription: Subscription) -> None:
        pass

    def remove(self, subscription_id: str) -> None:
        pass

    def match(self, context: MatchContext) -> list[Match]:
        return []

    def save_state(
        self, path: Path, key: bytes, keep_going: object = None, persisted: object = None
    ) -> bool:
        self.tries += 1
        msg = "No space left on device"
        raise OSError(msg)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Saves made in this process (as where the worker runs threads)."""
    monkeypatch.setattr(state_saver, "can_fork", lambda: False)
    yield


def test_a_save_waits_for_a_quiet_moment(
    tmp_path: Path, in_process: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_saver, "QUIET", 2.0)
    clock = _Clock()
    saver = StateSaver(tmp_path, KEY, clock)
    broken = _Broken()
    saver.loaded(restored=False, changed=0)
    clock.now = 0.5
    assert saver.poll({"broken": broken}, lambda: None) == pytest.approx(1.5)
    assert broken.tries == 0
    saver.note(1)  # a change starts the quiet period again
    clock.now = 2.0
    assert saver.poll({"broken": broken}, lambda: None) == pytest.approx(0.5)
    clock.now = 2.5
    saver.poll({"broken": broken}, lambda: None)
    assert broken.tries == 1


def test_a_failed_save_is_tried_again_after_the_next_change_only(
    tmp_path: Path, in_process: None
) -> None:
    clock = _Clock()
    saver = StateSaver(tmp_path, KEY, clock)
    broken = _Broken()
    saver.loaded(restored=False, changed=0)
    untimed: list[bool] = []
    clock.now = 10.0
    assert saver.poll({"broken": broken}, lambda: untimed.append(True)) is None
    assert broken.tries == 1 and untimed == [True]  # in process, untimed by the watchdog
    clock.now = 20.0
    assert saver.poll({"broken": broken}, lambda: None) is None
    assert broken.tries == 1
    saver.note(1)
    clock.now = 30.0
    saver.poll({"broken": broken}, lambda: None)
    assert broken.tries == 2


def test_a_state_is_due_once_more_than_a_share_of_it_changed(tmp_path: Path) -> None:
    saver = StateSaver(tmp_path, KEY)
    assert saver.due(1000)  # never saved
    saver.loaded(restored=True, changed=0)
    assert not saver.due(1000)
    saver.note(1000 // CHANGED_SHARE)
    assert not saver.due(1000)
    saver.note(1)
    assert saver.due(1000)


def test_a_writer_removes_what_saves_killed_outright_left(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])  # a process that is gone
    gone.wait()
    left = tmp_path / f"semantic.state.{gone.pid}.tmp"
    alive = tmp_path / f"semantic.state.{os.getpid()}.tmp"  # a save under way
    other = tmp_path / "semantic.state.notes.tmp"
    for path in (left, alive, other):
        path.write_bytes(b"partial")
    StateSaver(tmp_path, KEY)
    assert not left.exists()
    assert alive.exists() and other.exists()


def test_a_restore_that_fails_unexpectedly_is_logged_and_the_worker_indexes_the_texts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    subs = subscriptions(rng, 30)
    writer = started(tmp_path, subs, write=True, key=KEY)
    assert wait_for(lambda: saved(writer))

    def broken(self: object, path: Path, key: bytes) -> None:
        msg = "a bug in restoring"
        raise RuntimeError(msg)

    monkeypatch.setattr("semps.matcher.semantic.SemanticMatcher.restore_state", broken)
    with caplog.at_level(logging.WARNING, logger="semps.worker"):
        restarted = started(tmp_path, subs, write=False, key=KEY, restore_first=True)
    assert "restoring it failed (RuntimeError('a bug in restoring'))" in caplog.text
    seen = events(rng)
    oracle = started(tmp_path / "none", subs, write=False, key=None)
    assert answers(restarted, seen) == answers(oracle, seen)
