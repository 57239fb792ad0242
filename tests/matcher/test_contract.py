"""The matcher contract (semps.matcher.base.Matcher), checked on every registered matcher kind
and in every execution mode the service uses: in process, and in a real matching worker
process (the broker's pipeline), where the answers must be those of a matcher built fresh."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from matcher_samples import WORKLOADS

from semps.errors import NotFound, SubscriptionError
from semps.event import Event
from semps.limits import DEFAULT_LIMITS
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import available, create_matcher, get_matcher_class
from semps.matcher.results import result_line
from semps.matcher.values import Match, Subscription
from semps.pool import Worker
from semps.terms import n3

KINDS = available()
STATELESS = [k for k in KINDS if not get_matcher_class(k).stateful]

#: A subscription text each kind must refuse.
BAD_TEXT = {
    "semantic": "SELECT * WHERE { ?x",
    "content": "a0 between",
    "symmetric": '{"region": {"x": [1, 0]',
    "composite": "create event",
}


def _sample(kind: str, seed: int) -> tuple[list[Subscription], list[Event]]:
    return WORKLOADS[kind](random.Random(seed), 120)


def _fresh(kind: str, subs: list[Subscription]) -> Matcher:
    matcher = create_matcher(kind)
    for sub in subs:
        matcher.add(sub)
    return matcher


def _answers(matcher: Matcher, events: list[Event]) -> list[list[tuple[str, str, int]]]:
    contexts = [MatchContext(e) for e in events]
    return [
        [(m.subscription, m.event, m.count) for m in ms] for ms in matcher.match_batch(contexts)
    ]


def test_every_kind_has_samples_and_a_refused_text() -> None:
    assert set(KINDS) <= set(WORKLOADS) and set(KINDS) <= set(BAD_TEXT)


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_subscription_raises_subscription_error_and_changes_nothing(kind: str) -> None:
    subs, events = _sample(kind, 1)
    matcher = _fresh(kind, subs)
    before = _answers(matcher, events)
    with pytest.raises(SubscriptionError):
        matcher.add(Subscription("bad", kind, BAD_TEXT[kind]))
    if subs:  # replacing a good one with bad text keeps the good one
        with pytest.raises(SubscriptionError):
            matcher.add(Subscription(subs[0].id, kind, BAD_TEXT[kind]))
    assert _answers(matcher, events) == before


@pytest.mark.parametrize("kind", STATELESS)
@pytest.mark.parametrize("seed", [1, 2])
def test_adding_an_existing_id_replaces_it(kind: str, seed: int) -> None:
    subs, events = _sample(kind, seed)
    other, _ = _sample(kind, seed + 10)
    k = min(len(subs), len(other)) // 2
    replaced = [Subscription(s.id, kind, o.text) for s, o in zip(subs[:k], other[:k], strict=True)]
    matcher = _fresh(kind, subs)
    for sub in replaced:
        matcher.add(sub)
    assert _answers(matcher, events) == _answers(_fresh(kind, replaced + subs[k:]), events)


@pytest.mark.parametrize("kind", KINDS)
def test_removing_an_unknown_id_raises_not_found(kind: str) -> None:
    matcher = _fresh(kind, _sample(kind, 1)[0])
    with pytest.raises(NotFound):
        matcher.remove("no-such-subscription")


@pytest.mark.parametrize("kind", STATELESS)
@pytest.mark.parametrize("seed", [1, 2])
def test_removed_subscriptions_stop_matching(kind: str, seed: int) -> None:
    subs, events = _sample(kind, seed)
    gone = set(random.Random(seed).sample([s.id for s in subs], len(subs) // 3))
    matcher = _fresh(kind, subs)
    for sub_id in gone:
        matcher.remove(sub_id)
    kept = [s for s in subs if s.id not in gone]
    assert _answers(matcher, events) == _answers(_fresh(kind, kept), events)


@pytest.mark.parametrize("kind", STATELESS)
@pytest.mark.parametrize("seed", [1, 2])
def test_match_is_sorted_leaves_the_event_alone_and_agrees_with_every_batch_form(
    kind: str, seed: int
) -> None:
    subs, events = _sample(kind, seed)
    matcher = _fresh(kind, subs)
    snapshot = [(e.id, e.triples, dict(e.values), dict(e.regions)) for e in events]
    singles = [matcher.match(MatchContext(e)) for e in events]
    for ms in singles:
        assert [m.subscription for m in ms] == sorted(m.subscription for m in ms)
    assert [(e.id, e.triples, dict(e.values), dict(e.regions)) for e in events] == snapshot
    contexts = [MatchContext(e) for e in events]
    batch = matcher.match_batch(contexts)
    assert _keys(batch) == _keys(singles)
    verdicts = matcher.verdict_batch([MatchContext(e) for e in events])
    rebuilt = [
        [v.match(sub_id, e.id) for sub_id, v in found]
        for e, found in zip(events, verdicts, strict=True)
    ]
    assert _keys(rebuilt) == _keys(singles)
    assert [[dict(m.detail) for m in ms] for ms in rebuilt] == [
        [dict(m.detail) for m in ms] for ms in singles
    ]
    counts = matcher.count_batch([MatchContext(e) for e in events])
    assert counts == [{m.subscription: m.count for m in ms} for ms in singles]
    lines = matcher.result_lines([MatchContext(e) for e in events])
    assert lines == [result_line(e.id, n) for e, n in zip(events, counts, strict=True)]
    assert [json.loads(line)["solutions"] for line in lines] == counts


def _keys(batch: list[list[Match]]) -> list[list[tuple[str, str, int, tuple[Any, ...]]]]:
    return [
        [(m.subscription, m.event, m.count, tuple(map(_solution, m.solutions))) for m in ms]
        for ms in batch
    ]


def _solution(solution: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, n3(v)) for k, v in solution.items()))


# -- the same answers from a real worker process -----------------------------------------


def _wire(event: Event) -> tuple[str, str, bytes]:
    """The event as a publisher would send it: N-Triples, or a JSON event."""
    if event.triples:
        lines = [f"{n3(s)} {n3(p)} {n3(o)} ." for s, p, o in event.triples]
        return event.id, "application/n-triples", "\n".join(lines).encode()
    doc: dict[str, Any] = {}
    if event.values:
        doc["values"] = dict(event.values)
    if event.regions:
        doc["region"] = {k: list(v) for k, v in event.regions.items()}
    return event.id, "application/json", json.dumps(doc).encode()


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    from semps.broker.worker import start_worker

    process = start_worker(DEFAULT_LIMITS)
    try:
        yield process
    finally:
        process.close(timeout=10)


def _ask(worker: Worker, *request: Any) -> Any:
    return worker.call(request)


@pytest.mark.parametrize("kind", STATELESS)
def test_a_worker_process_answers_as_a_fresh_matcher_does(kind: str, worker: Worker) -> None:
    subs, events = _sample(kind, 3)
    events = [e for e in events if e.triples or e.values or e.regions]  # publishable ones
    gone = [s.id for s in subs[::4]]
    _ask(worker, "add_many", subs)
    _ask(worker, "remove_many", gone)
    try:
        outcomes = _ask(worker, "match", [_wire(e) for e in events])
    finally:
        _ask(worker, "remove_many", [s.id for s in subs])
    want = _answers(_fresh(kind, [s for s in subs if s.id not in gone]), events)
    got = []
    for outcome in outcomes:
        assert outcome[0] == "ok", outcome
        heads = [json.loads(head + "}") for _sub, head in outcome[2]]
        got.append(sorted((h["subscription"], h["event"], h["count"]) for h in heads))
    assert got == [sorted(ms) for ms in want]
