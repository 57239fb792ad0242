"""One event's work is bounded however many subscriptions it meets: the families' compiled
pass evaluates at most ``MEMBER_ROWS`` x the step budget of member rows, and the
verifications of the event together visit at most ``EVENT_BUDGETS`` x the step budget.
What is past the bounds is truncated (a match marked so, with the compiled pass's exact
count or else a count that is a lower bound, or no match), never a count above the true
one; a hostile family no longer keeps a broker worker verifying for minutes."""

from __future__ import annotations

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.verify import EventBudget, verify
from semps.matcher.values import Subscription
from semps.terms import XSD, Literal

EX = "http://ex/"
K = 10  # nodes linked to each other: K * K solutions for every member below
TEMPLATE = "SELECT * {{ ?x <{EX}p> ?y . ?y <{EX}d> ?v FILTER(?v > {n}) }}"


def _family(members: int, step_budget: int) -> SemanticMatcher:
    matcher = SemanticMatcher(step_budget=step_budget)
    for n in range(members):
        matcher.add(Subscription(f"s{n:03}", "semantic", TEMPLATE.format(EX=EX, n=n)))
    return matcher


def _event() -> Event:
    nodes = [f"{EX}n{i}" for i in range(K)]
    value = Literal("1000", XSD + "integer")  # above every member's bound
    links = [(a, EX + "p", b) for a in nodes for b in nodes]
    return Event("e", tuple(links + [(a, EX + "d", value) for a in nodes]))


def test_verifications_past_the_events_budget_leave_counted_members_without_solutions() -> None:
    # 50 members of one family, each with K * K = 100 solutions; each verification visits
    # about 2 * K * K rows, and the event's verifications may visit 2 x 1,000 in all.
    (matches,) = _family(50, step_budget=1_000).match_batch([MatchContext(_event())])
    assert [m.subscription for m in matches] == [f"s{n:03}" for n in range(50)]
    assert all(m.count == K * K for m in matches)  # the compiled pass's exact counts
    verified = [m for m in matches if m.solutions]
    assert 0 < len(verified) < 50
    assert all(not m.detail for m in verified)
    assert all(m.detail == {"truncated": True} for m in matches if not m.solutions)


def test_a_counted_member_cut_after_some_solutions_keeps_the_exact_count() -> None:
    # 2 x 1,050 rows for the event: ten verifications of ~200 rows, then one cut halfway.
    (matches,) = _family(50, step_budget=1_050).match_batch([MatchContext(_event())])
    assert len(matches) == 50
    assert all(m.count == K * K for m in matches)
    cut = [m for m in matches if m.solutions and m.detail]
    assert len(cut) == 1
    assert 0 < len(cut[0].solutions) < K * K
    assert cut[0].detail == {"truncated": True}


def test_members_past_the_compiled_pass_work_are_verified_within_the_events_budget() -> None:
    # A step budget of 200 (the family's join, 200 partial rows, fits): the pass evaluates
    # 64 x 200 member rows (128 members of 100 rows); the other 72 are left to one-by-one
    # verification, within 400 rows for the whole event, spent on the counted members.
    matcher = _family(200, step_budget=200)
    (matches,) = matcher.match_batch([MatchContext(_event())])
    assert 0 < len(matches) < 200
    assert all(m.count == K * K for m in matches)
    assert sum(1 for m in matches if m.solutions) <= 2
    (counts,) = matcher.count_batch([MatchContext(_event())])
    assert 0 < len(counts) < 200
    assert all(0 < c <= K * K for c in counts.values())


def test_an_events_budget_is_shared_and_charged_by_what_each_verification_visits() -> None:
    matcher = _family(3, step_budget=1_000_000)
    pairs = EventPairs(MatchContext(_event()).parts)
    sub = matcher.index.subscriptions["s000"]
    budget = EventBudget(300)
    first = verify(sub, pairs, 0, 1_000_000, budget)
    assert first is not None and first.count == K * K and not first.truncated
    spent = 300 - budget.left
    assert K * K <= spent <= 3 * K * K + 2
    second = verify(sub, pairs, 0, 1_000_000, budget)  # what is left is too little
    assert budget.left <= 0
    assert second is None or second.truncated
    assert verify(sub, pairs, 0, 1_000_000, budget) is None  # nothing left: no match
