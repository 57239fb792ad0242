"""The queue of new subscriptions registered in groups (semps.broker.registration.Groups):
a request queued with a callback holds no thread while it waits; everything queued while a
group registers goes in the next group, whether queued with a callback or by a blocking
caller; every pending gets its result (or the group's failure) and its callback once; and
a registering thread waits for as many as its last group before it takes fewer, so clients
answered together are registered together again."""

from __future__ import annotations

import threading

import pytest
from semps_test_support import PATIENCE, wait_for

from semps.broker import registration
from semps.broker.registration import Groups, Pending
from semps.errors import MatcherError
from semps.matcher.values import Subscription


class Registrar:
    """A ``register`` that records each group and gives each pending an id; the groups
    listed in ``hold`` wait until released (by their number, from 0)."""

    def __init__(self, hold: set[int] | None = None, fail: set[int] | None = None) -> None:
        self.groups: list[list[str]] = []
        self.hold, self.fail = hold or set(), fail or set()
        self.entered = [threading.Event() for _ in range(8)]
        self.release = [threading.Event() for _ in range(8)]

    def __call__(self, group: list[Pending]) -> None:
        number = len(self.groups)
        self.groups.append([p.text for p in group])
        self.entered[number].set()
        if number in self.hold:
            assert self.release[number].wait(PATIENCE)
        if number in self.fail:
            raise MatcherError("the workers stopped")
        for p in group:
            p.result = Subscription(f"sub-{p.text}", p.kind, p.text, p.owner)


@pytest.fixture
def answered() -> list[str]:
    """The texts whose callbacks ran, in order."""
    return []


def pending(text: str, answered: list[str]) -> Pending:
    return Pending(text, "semantic", "ann", None, done=lambda: answered.append(text))


def test_what_is_queued_while_a_group_registers_goes_in_the_next_group(
    answered: list[str],
) -> None:
    registrar = Registrar(hold={0})
    groups = Groups(threading.Lock(), registrar)
    first = pending("a", answered)
    groups.add(first)
    assert registrar.entered[0].wait(PATIENCE)
    later = [pending(t, answered) for t in "bcd"]
    for p in later:
        groups.add(p)
    blocking = Pending("e", "semantic", "ann", None)
    caller = threading.Thread(target=groups.run, args=([blocking],))
    caller.start()
    assert wait_for(lambda: len(groups._queued) == 4)
    assert answered == []  # nobody answered before the group's end
    registrar.release[0].set()
    caller.join(PATIENCE)
    assert wait_for(lambda: len(answered) == 4)
    assert registrar.groups == [["a"], ["b", "c", "d", "e"]]
    assert sorted(answered) == ["a", "b", "c", "d"]  # each callback once
    assert [p.result for p in [first, *later, blocking]] == [
        Subscription(f"sub-{t}", "semantic", t, "ann") for t in "abcde"
    ]


def test_a_group_that_fails_fails_each_of_its_pendings_and_calls_them_back(
    answered: list[str],
) -> None:
    registrar = Registrar(hold={0}, fail={1})
    groups = Groups(threading.Lock(), registrar)
    groups.add(pending("a", answered))
    assert registrar.entered[0].wait(PATIENCE)
    failing = [pending(t, answered) for t in "bc"]
    for p in failing:
        groups.add(p)
    registrar.release[0].set()
    assert wait_for(lambda: len(answered) == 3)
    assert all(isinstance(p.result, MatcherError) and p.failed for p in failing)
    groups.add(pending("d", answered))  # the queue goes on after a failure
    assert wait_for(lambda: len(answered) == 4)
    assert registrar.groups == [["a"], ["b", "c"], ["d"]]


def test_a_registering_thread_gathers_as_many_as_its_last_group(
    answered: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window is a bound for a slow machine here: the group forms on the third add.
    monkeypatch.setattr(registration, "GATHER", PATIENCE)
    registrar = Registrar(hold={0, 1})
    groups = Groups(threading.Lock(), registrar)
    groups.add(pending("a", answered))
    assert registrar.entered[0].wait(PATIENCE)
    for t in "bcd":
        groups.add(pending(t, answered))
    registrar.release[0].set()
    assert registrar.entered[1].wait(PATIENCE)  # b, c, d: the last group held three
    groups.add(pending("e", answered))
    registrar.release[1].set()
    assert wait_for(lambda: len(answered) == 4)
    groups.add(pending("f", answered))
    assert registrar.groups == [["a"], ["b", "c", "d"]]  # e and f wait for a third
    groups.add(pending("g", answered))
    assert wait_for(lambda: len(answered) == 7)
    assert registrar.groups == [["a"], ["b", "c", "d"], ["e", "f", "g"]]
