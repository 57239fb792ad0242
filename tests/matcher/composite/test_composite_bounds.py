"""Composite registration is all or nothing, tenants' names never meet whatever characters
they hold, and the definitions a subscriber holds and the detections one event causes are
bounded (issue 38, items 3, 4 and 6)."""

from __future__ import annotations

import logging

import pytest
from semps_test_support import diamonds, raised

from semps.errors import CompositeDefinitionError, SubscriptionLimitExceeded
from semps.event import Event
from semps.limits import Limits
from semps.matcher.base import Match, Subscription
from semps.matcher.composite import CompositeMatcher, EventTree, parse_definitions
from semps.matcher.composite.language import Definition

OVERFLOW = (
    "create event kk = pa or pb;\ncreate event kk2 = 99999999999999999999 times pb in pa, pc;"
)


def matcher(subs: dict[str, Subscription], **limits: int) -> CompositeMatcher:
    m = CompositeMatcher(resolver=subs.get)
    m.limits = Limits(**limits)
    return m


def primitives(owner: str, *names: str) -> dict[str, Subscription]:
    return {
        f"{owner}/{n}": Subscription(f"{owner}/{n}", "semantic", "...", owner, n) for n in names
    }


def test_a_count_too_large_is_refused_naming_the_definition_and_nothing_is_defined() -> None:
    subs = primitives("ann", "pa", "pb", "pc")
    m = matcher(subs)
    error = raised(
        CompositeDefinitionError, m.add, Subscription("c1", "composite", OVERFLOW, "ann")
    )
    assert (error.line, error.column) == (2, 20)
    assert (
        str(error) == "2:20: 99999999999999999999 times is more than the largest count, 2147483647"
    )
    assert len(m) == 0 and m.tree.nodes == {}
    assert m.observe(Event("e1"), [Match("ann/pa", "e1")]) == []  # no ghost "kk" fires


def test_the_tree_undoes_a_group_of_definitions_it_cannot_hold() -> None:
    tree = EventTree()
    good = Definition("x", "or", ("a", "b"))
    bad = Definition("y", "times", ("a", "b", "c"), n=2**70, line=3, column=1)
    error = raised(CompositeDefinitionError, tree.define, [good, bad])
    assert (error.line, error.column) == (3, 1)
    assert "definition of 'y' is refused" in str(error)
    assert tree.nodes == {}
    assert tree.occur("a", 0.0, []) == []


def test_a_huge_number_of_digits_is_a_syntax_error_not_a_crash() -> None:
    text = "create event k = " + "9" * 10_000 + " times b in a, c;"
    error = raised(CompositeDefinitionError, parse_definitions, text)
    assert "is more than the largest count" in str(error)


@pytest.mark.parametrize(
    ("owner", "name"),
    [("team", "red:pa"), ("team:", "red:pa"), ("", "team:red:pa")],
    ids=["name-with-colon", "owner-ending-with-colon", "no-owner"],
)
def test_names_are_namespaced_by_owner_whatever_characters_they_hold(owner: str, name: str) -> None:
    """``team:red``'s composite over its own ``pa`` never hears of another owner's
    subscription whose owner and name joined with ':' spell the same."""
    subs = {
        "other": Subscription("other", "semantic", "...", owner or None, name),
        **primitives("team:red", "pa", "pb"),
    }
    m = matcher(subs)
    m.add(Subscription("c1", "composite", "create event x = pa or pb;", "team:red"))
    assert m.observe(Event("e1"), [Match("other", "e1")]) == []
    (found,) = m.observe(Event("e2"), [Match("team:red/pa", "e2")])
    assert (found.subscription, found.detail["composite"]) == ("c1", "x")


def test_the_definitions_a_subscriber_holds_are_bounded_over_its_subscriptions() -> None:
    subs = primitives("ann", "a", "b")
    m = matcher(subs, max_definitions=3)
    m.add(
        Subscription("c1", "composite", "create event x = a or b; create event y = a and b;", "ann")
    )
    text = "create event z = a then b; create event w = b then a;"
    error = raised(SubscriptionLimitExceeded, m.add, Subscription("c2", "composite", text, "ann"))
    assert str(error) == (
        "subscriber 'ann' would hold 4 composite event definitions, over the limit of 3 "
        "(max_definitions)"
    )
    assert "c2" not in m.definitions and len(m.tree.composites()) == 2
    m.add(Subscription("c3", "composite", "create event z = a then b;", "bob"))  # bob's own


def test_one_events_detections_are_bounded_and_the_rest_dropped_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A chain of diamonds doubles the detections at each step: 2**20 from one match."""
    lines = ["create event d0 = a or b;"]
    for i in range(1, 21):
        lines += [
            f"create event l{i} = d{i - 1} or b;",
            f"create event r{i} = d{i - 1} or c;",
            f"create event d{i} = l{i} or r{i};",
        ]
    subs = primitives("ann", "a", "b", "c")
    m = matcher(subs, max_detections=1000, max_definitions=100)
    m.add(Subscription("c1", "composite", "\n".join(lines), "ann"))
    with caplog.at_level(logging.WARNING, logger="semps.composite"):
        found = m.observe(Event("e1"), [Match("ann/a", "e1")])
    assert len(found) == 1000
    assert (
        "event e1: composite detection stopped at 1000 detections (max_detections)" in caplog.text
    )
    assert len(m.observe(Event("e2"), [Match("ann/b", "e2")])) == 1000  # the tree still works


def test_a_refused_replacement_keeps_the_earlier_definitions_and_their_state() -> None:
    subs = primitives("ann", "a", "b")
    m = matcher(subs)
    m.add(Subscription("c1", "composite", "create event x = a then b;", "ann"))
    m.observe(Event("e1"), [Match("ann/a", "e1")])  # x waits for b
    bad = Subscription("c1", "composite", "create event y = a or ;", "ann")
    raised(CompositeDefinitionError, m.add, bad)
    (found,) = m.observe(Event("e2"), [Match("ann/b", "e2")])
    assert found.detail["composite"] == "x"
    assert [c["event"] for c in found.detail["constituents"]] == ["e1", "e2"]


def test_the_state_round_trips_by_owner_and_name_and_reads_the_old_form() -> None:
    subs = primitives("team:red", "a", "b")
    m = matcher(subs)
    sub = Subscription("c1", "composite", "create event x = a then b;", "team:red")
    m.add(sub)
    m.observe(Event("e1"), [Match("team:red/a", "e1")])
    saved = m.state()
    assert list(saved) == ["owners"] and list(saved["owners"]) == ["team:red"]  # type: ignore[call-overload]
    for state in (saved, {"team:red:x": saved["owners"]["team:red"]["x"]}):  # type: ignore[index]
        again = matcher(subs)
        again.add(sub)
        again.restore(state)
        (found,) = again.observe(Event("e2"), [Match("team:red/b", "e2")])
        assert found.detail["composite"] == "x"


def test_one_owner_cannot_use_up_another_owner_s_detections() -> None:
    """Ten owners whose definitions multiply an event's detections (2**20 each), then one
    owner with one composite: its detection is made, each owner held to its share of
    max_detections (10,000 split between the 11 owners the event's matches name)."""
    attackers = [f"mallory{i}" for i in range(10)]
    subs: dict[str, Subscription] = {}
    for owner in [*attackers, "bob"]:
        subs |= primitives(owner, "a", "b", "c")
    m = matcher(subs, max_definitions=100)
    for owner in attackers:
        m.add(Subscription(f"{owner}/c", "composite", diamonds(20), owner))
    m.add(Subscription("bob/c", "composite", "create event x = a or b;", "bob"))
    matches = [Match(f"{owner}/a", "e1") for owner in [*attackers, "bob"]]  # bob's last

    found = m.observe(Event("e1"), matches)

    by_owner: dict[str, int] = {}
    for match in found:
        owner = match.subscription.split("/")[0]
        by_owner[owner] = by_owner.get(owner, 0) + 1
    assert by_owner["bob"] == 1
    assert [by_owner[o] for o in attackers] == [10_000 // 11] * 10
    assert len(found) <= Limits().max_detections


def test_an_owner_alone_is_held_to_max_detections_per_owner(
    caplog: pytest.LogCaptureFixture,
) -> None:
    subs = primitives("mallory", "a", "b", "c")
    m = matcher(subs, max_definitions=100, max_detections_per_owner=300)
    m.add(Subscription("mallory/c", "composite", diamonds(20), "mallory"))
    with caplog.at_level(logging.WARNING, logger="semps.composite"):
        found = m.observe(Event("e1"), [Match("mallory/a", "e1")])
    assert len(found) == 300
    assert "stopped at 300 detections (max_detections_per_owner) for owner 'mallory'" in (
        caplog.text
    )
