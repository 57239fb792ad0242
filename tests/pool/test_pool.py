"""semps.pool, the one mechanism for worker processes: replies come in order (a posted
request's dropped), errors come back as ours, the watchdog names where a worker died or
stood still (and never times its untimed phase), and workers fork only when this process
may fork."""

from __future__ import annotations

import os
import pickle
import threading
import time
from typing import Any

import pytest
from semps_test_support import wait_for

from semps import pool
from semps.errors import SubscriptionError

#: Phases of the tests' workers.
WORKING = 1


class _Tasks:
    """A test worker's handler: ``(what, argument)`` requests."""

    def __init__(self, progress: pool.Progress | None) -> None:
        self.progress = progress
        self.seen: list[Any] = []

    def __call__(self, request: tuple[str, Any]) -> Any:
        what, argument = request
        self.seen.append(argument)
        if what == "echo":
            return argument
        if what == "seen":
            return list(self.seen)
        if what == "refuse":
            raise SubscriptionError(f"bad text {argument!r}")
        if what == "unpicklable":
            return lambda: argument
        if what == "die":
            os._exit(3)
        assert self.progress is not None
        if what == "stall":  # names its subject, then stands still for ever
            self.progress.at(WORKING, argument)
            self.progress.watch(f"sub-{argument}")
            threading.Event().wait()
        if what == "spin":  # names its subject, then computes for ever
            self.progress.at(WORKING, argument)
            self.progress.watch(f"sub-{argument}")
            while True:
                pass
        if what == "wait":  # names its subject, then waits (as for a core) without computing
            self.progress.at(WORKING, 0)
            self.progress.watch("sub-waiting")
            time.sleep(argument)
            self.progress.at(pool.IDLE, 0)
            return "done"
        if what == "untimed":  # longer than the timeout, in the untimed phase
            self.progress.at(pool.UNTIMED, 0)
            time.sleep(argument)
            self.progress.at(pool.IDLE, 0)
            return "done"
        raise ValueError(what)


def _tasks(progress: pool.Progress | None) -> _Tasks:
    return _Tasks(progress)


@pytest.fixture
def worker() -> Any:
    """A worker, up and serving (its start-up is not what a test times)."""
    (started,) = pool.start_workers(1, _tasks, inherit=False, role="test", progress=True)
    assert started.call(("echo", "up")) == "up"
    yield started
    started.close()


def test_replies_come_in_order_and_posted_ones_are_dropped(worker: pool.Worker) -> None:
    worker.send(("echo", 1))
    worker.post(("echo", 2))
    worker.send(("echo", 3))
    worker.post(("echo", 4))
    worker.send(("seen", None))
    assert [worker.recv(), worker.recv(), worker.recv()] == [1, 3, ["up", 1, 2, 3, 4, None]]


def test_an_error_comes_back_as_the_same_error(worker: pool.Worker) -> None:
    with pytest.raises(SubscriptionError) as raised:
        worker.call(("refuse", "x"))
    assert str(raised.value) == "bad text 'x'"
    assert worker.call(("echo", "still serving")) == "still serving"


def test_a_reply_that_cannot_be_sent_is_an_error_not_a_dead_worker(worker: pool.Worker) -> None:
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        worker.call(("unpicklable", 1))
    assert worker.call(("echo", 2)) == 2


def test_a_worker_that_dies_is_an_overrun_naming_where_it_was(worker: pool.Worker) -> None:
    with pytest.raises(pool.Overrun) as raised:
        worker.call(("die", None))
    assert raised.value.why.startswith("the test worker died")
    worker.process.join()
    assert worker.process.exitcode == 3


def test_a_worker_computing_past_its_budget_without_progress_is_an_overrun(
    worker: pool.Worker,
) -> None:
    with pytest.raises(pool.Overrun) as raised:
        worker.call(("spin", 7), timeout=0.2)
    overrun = raised.value
    assert (overrun.phase, overrun.item, overrun.subject) == (WORKING, 7, "sub-7")
    assert overrun.why == "test took more than 0.2 s"
    worker.kill()


def test_a_worker_waiting_without_computing_is_not_cut_off_at_its_budget(
    worker: pool.Worker,
) -> None:
    """As when the machine is busy and the worker waits for a core: the budget counts
    the worker's CPU seconds, not the clock's."""
    assert worker.cpu_seconds() is not None  # Linux: /proc tells
    assert worker.call(("wait", 1.0), timeout=0.2) == "done"


def test_a_worker_standing_still_for_many_budgets_is_an_overrun(worker: pool.Worker) -> None:
    with pytest.raises(pool.Overrun) as raised:
        worker.call(("stall", 7), timeout=0.05)
    overrun = raised.value
    assert (overrun.phase, overrun.item, overrun.subject) == (WORKING, 7, "sub-7")
    assert overrun.why == f"test made no progress for {pool.STUCK * 0.05:g} s"
    worker.kill()


def test_the_untimed_phase_is_never_timed(worker: pool.Worker) -> None:
    assert worker.call(("untimed", 1.0), timeout=0.1) == "done"


def test_ordered_replies_keep_the_requests_order_across_workers() -> None:
    workers = pool.start_workers(3, _tasks, inherit=False)
    try:
        requests = [("echo", i) for i in range(20)]
        assert list(pool.ordered_replies(workers, requests, ahead=2)) == list(range(20))
    finally:
        for w in workers:
            w.close()


def test_workers_fork_only_when_this_process_runs_one_thread() -> None:
    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip("this platform does not fork")
    assert pool.context(inherit=False).get_start_method() == "spawn"
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not pool.can_fork()
        assert pool.context(inherit=True).get_start_method() == "spawn"
    finally:
        release.set()
        other.join()
    if threading.active_count() == 1:  # (pytest may run threads of its own)
        assert pool.context(inherit=True).get_start_method() == "fork"


class _Idler:
    """A handler whose ``idle()`` asks to run again ``again`` times, after a short wait."""

    def __init__(self, again: int) -> None:
        self.again, self.idles = again, 0
        self.done = threading.Event()

    def __call__(self, request: Any) -> Any:
        return request

    def idle(self) -> float | None:
        self.idles += 1
        if self.idles > self.again:
            self.done.set()
            return None
        return 0.01


def test_idle_runs_again_after_the_seconds_it_returns_while_no_request_comes() -> None:
    import multiprocessing

    ours, theirs = multiprocessing.Pipe()
    handler = _Idler(again=3)
    loop = threading.Thread(target=pool.serve, args=(theirs, handler))
    loop.start()
    try:
        ours.send("hello")
        assert ours.recv() == ("ok", "hello")
        assert handler.done.wait(60)
        assert handler.idles == 4  # three asked to run again, the fourth did not
        ours.send("again")  # a request after it: answered, then idle runs once more
        assert ours.recv() == ("ok", "again")
        assert wait_for(lambda: handler.idles == 5)
    finally:
        ours.close()
        loop.join()
    assert handler.idles == 5
