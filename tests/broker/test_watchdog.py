"""The watchdog: a match that overruns its time budget is cut off, the subscription that
caused it is suspended with a reason, and every other subscriber's event is still matched.

No subscription of the built-in matchers can overrun any more (linear-time regex, bounded
closure and counting), so these tests install a matcher plugin through the ``semps.matchers``
entry-point group, the way a third party would: kind ``spin`` matches every event, and a
subscription whose text is ``spin`` loops forever on an event with ``{"x": "hang"}``. The
broker, its SQLite store and its worker processes are real.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from semps.broker.broker import Broker
from semps.errors import EventLimitExceeded
from semps.limits import Limits
from semps.matcher import registry

PLUGIN = """
import os

from semps.matcher.base import Matcher
from semps.matcher.values import Match

class SpinMatcher(Matcher):
    kind = "spin"

    def __init__(self):
        self.subs = {}

    def __len__(self):
        return len(self.subs)

    def add(self, subscription):
        self.subs[subscription.id] = subscription.text

    def remove(self, subscription_id):
        self.subs.pop(subscription_id, None)

    def match(self, context):
        event = context.event
        found = []
        for sub_id, text in sorted(self.subs.items()):
            if text == "spin" and event.values.get("x") == "hang":
                context.watch(sub_id)
                while True:
                    pass
            if text == "die" and event.values.get("x") == "die":
                os._exit(9)  # the worker dies (the kernel's OOM killer, a crash)
            if text == "silent" and event.values.get("x") == "hang":
                while True:  # never says which subscription it verifies
                    pass
            found.append(Match(sub_id, event.id))
        return found
"""


@pytest.fixture
def spin_plugin(tmp_path: Path) -> Iterator[None]:
    """A distribution on sys.path whose entry point registers the ``spin`` matcher (the
    spawned workers inherit sys.path)."""
    site = tmp_path / "site"
    dist = site / "semps_spin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: semps-spin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[semps.matchers]\nspin = semps_spin:SpinMatcher\n")
    (site / "semps_spin.py").write_text(textwrap.dedent(PLUGIN))
    sys.path.insert(0, str(site))
    registry._registered.cache_clear()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("semps_spin", None)
        registry._registered.cache_clear()


def publish(broker: Broker, body: bytes) -> tuple[str, int] | BaseException:
    async def go() -> tuple[str, int] | BaseException:
        (result,) = await broker.publish_many([("application/json", body)])
        return result

    return asyncio.run(go())


def test_the_subscription_that_overran_is_suspended_and_the_rest_is_delivered(
    spin_plugin: None, tmp_path: Path
) -> None:
    broker = Broker(tmp_path / "data", limits=Limits(match_timeout=0.5), workers=1)
    try:
        hog = broker.subscribe("spin", kind="spin", owner="mallory")
        good = broker.subscribe("anything", kind="spin", owner="alice")

        result = publish(broker, b'{"values": {"x": "hang"}}')

        assert not isinstance(result, BaseException)
        event_id, matched = result
        assert matched == 1
        stored = broker.store.notifications_after(good.id, 0)
        assert [n.event for n in stored] == [event_id]
        assert broker.store.notifications_after(hog.id, 0) == []
        status, reason = broker.status(hog.id)
        assert status == "suspended"
        assert reason == f"matching took more than 0.5 s while matching event {event_id}"
        assert broker.status(good.id) == ("active", None)
        assert broker.metrics.suspensions == 1
        # A suspended subscription no longer matches; resumed, it does again.
        assert publish(broker, b'{"values": {"x": "calm"}}')[1] == 1  # type: ignore[index]
        broker.resume(hog.id)
        assert broker.status(hog.id) == ("active", None)
        assert publish(broker, b'{"values": {"x": "calm"}}')[1] == 2  # type: ignore[index]
    finally:
        broker.close()


def test_a_suspension_survives_a_restart(spin_plugin: None, tmp_path: Path) -> None:
    broker = Broker(tmp_path / "data", limits=Limits(match_timeout=0.5), workers=1)
    try:
        hog = broker.subscribe("spin", kind="spin", owner="mallory")
        publish(broker, b'{"values": {"x": "hang"}}')
    finally:
        broker.close()
    broker = Broker(tmp_path / "data", limits=Limits(match_timeout=0.5), workers=1)
    try:
        assert broker.status(hog.id)[0] == "suspended"
        assert publish(broker, b'{"values": {"x": "hang"}}')[1] == 0  # type: ignore[index]
    finally:
        broker.close()


def test_an_overrun_no_subscription_owns_refuses_the_event(
    spin_plugin: None, tmp_path: Path
) -> None:
    broker = Broker(tmp_path / "data", limits=Limits(match_timeout=0.5), workers=1)
    try:
        broker.subscribe("silent", kind="spin", owner="mallory")

        result = publish(broker, b'{"values": {"x": "hang"}}')

        assert isinstance(result, EventLimitExceeded)
        assert str(result) == "matching this event took more than 0.5 s; it was not published"
        assert publish(broker, b'{"values": {"x": "calm"}}')[1] == 1  # type: ignore[index]
    finally:
        broker.close()


def test_a_worker_that_dies_on_an_event_refuses_it_saying_so(
    spin_plugin: None, tmp_path: Path
) -> None:
    """A worker killed under an event is not an overrun of ``match_timeout``: the refusal
    says what happened (it said "took more than 600 s" after 15 s on a loaded machine)."""
    broker = Broker(tmp_path / "data", limits=Limits(match_timeout=600), workers=1)
    try:
        broker.subscribe("die", kind="spin", owner="mallory")

        result = publish(broker, b'{"values": {"x": "die"}}')

        assert isinstance(result, EventLimitExceeded)
        assert str(result).startswith("matching this event failed: ")
        assert str(result).endswith("; it was not published")
        assert "600" not in str(result)
        assert publish(broker, b'{"values": {"x": "calm"}}')[1] == 1  # type: ignore[index]
    finally:
        broker.close()
