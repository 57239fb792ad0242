"""The broker's stateful matchers (composite detection) in its own process: every commit
takes their lock, so registration does its slow parts outside it."""

from __future__ import annotations

import pytest

from semps.broker.observers import Observers
from semps.limits import Limits
from semps.matcher.composite import CompositeMatcher
from semps.matcher.values import Subscription


def test_a_kinds_kernels_load_once_and_outside_the_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    subs = {f"ann/{n}": Subscription(f"ann/{n}", "semantic", "...", "ann", n) for n in ("a", "b")}
    observers = Observers(subs.get, Limits())
    locked_at_warm: list[bool] = []
    monkeypatch.setattr(
        CompositeMatcher, "warm", lambda self: locked_at_warm.append(observers.lock.locked())
    )
    observers.add(Subscription("c1", "composite", "create event x = a or b;", "ann"))
    observers.add(Subscription("c2", "composite", "create event y = a then b;", "ann"))
    assert locked_at_warm == [False]
    assert observers.holding()
