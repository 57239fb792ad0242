"""A multiplexed stream's inbox: it takes only the subscriptions tapped, stays bounded, and
marks stale exactly the subscriptions whose notifications it dropped."""

from __future__ import annotations

import asyncio

from semps.broker.fanout import Fanout
from semps.broker.multiplex import MultiInbox


def test_an_overflow_marks_the_dropped_subscriptions_stale() -> None:
    async def run() -> tuple[set[str], list[tuple[str, int, str]]]:
        fanout, inbox = Fanout(), MultiInbox(capacity=3)
        for sub in ("a", "b", "c"):
            fanout.attach(inbox.tap(sub))
        inbox.stale.clear()
        fanout.publish([("a", 1, "x"), ("b", 1, "x"), ("a", 2, "x"), ("c", 1, "x")])
        stale = set(inbox.stale)
        fanout.publish([("c", 2, "y")])
        return stale, inbox.take()

    stale, kept = asyncio.run(run())
    assert stale == {"a", "b", "c"}  # the fourth overflowed: everything held was dropped
    assert kept == [("c", 2, "y")]


def test_text_is_bounded_too_and_a_poke_marks_one_subscription() -> None:
    async def run() -> tuple[set[str], set[str]]:
        fanout, inbox = Fanout(), MultiInbox(capacity=100, chars=10)
        taps = [inbox.tap(sub) for sub in ("a", "b")]
        for tap in taps:
            fanout.attach(tap)
        inbox.stale.clear()
        fanout.publish([("a", 1, "x" * 6), ("b", 1, "y" * 6)])
        after_overflow = set(inbox.stale)
        inbox.stale.clear()
        inbox.take()
        taps[1].poke()
        return after_overflow, set(inbox.stale)

    after_overflow, poked = asyncio.run(run())
    assert after_overflow == {"a", "b"}
    assert poked == {"b"}


def test_a_detached_tap_receives_nothing() -> None:
    async def run() -> list[tuple[str, int, str]]:
        fanout, inbox = Fanout(), MultiInbox()
        tap = inbox.tap("a")
        fanout.attach(tap)
        fanout.unlisten(tap)
        fanout.publish([("a", 1, "x")])
        return inbox.take()

    assert asyncio.run(run()) == []
