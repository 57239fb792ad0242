"""A matching worker loads each matcher's compiled kernels before its first event, untimed:
a kernel compiled inside an event's time budget would overrun it, and the watchdog would
restart the worker, which would compile again (seen: 214 restarts in 11 minutes)."""

from __future__ import annotations

import pytest

from semps.broker.worker import Worker
from semps.matcher.base import Subscription
from semps.matcher.semantic import SemanticMatcher


def test_warming_up_asks_each_matcher_with_subscriptions_to_warm_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(SemanticMatcher, "warm", lambda self: calls.append(type(self).__name__))
    worker = Worker()
    worker.matcher("semantic")  # no subscription yet: nothing to warm
    worker.warm_up()
    assert calls == []
    text = 'SELECT ?x { ?x <http://ex/s> ?t FILTER(contains(?t, "oak")) }'
    worker.matcher("semantic").add(Subscription("s", "semantic", text))
    worker.warm_up()
    worker.warm_up()
    assert calls == ["SemanticMatcher"]
