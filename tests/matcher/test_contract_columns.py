"""The columns contract: for every registered matcher, ``match_columns`` gives what
``match_batch`` gives (same subscriptions, order, counts and solutions), on random data."""

from __future__ import annotations

import random

import numpy as np
import pytest
from matcher_samples import WORKLOADS

from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.content import ALGORITHMS
from semps.matcher.registry import available, create_matcher
from semps.matcher.results import MatchColumns
from semps.matcher.values import Match

CASES = [(kind, {}) for kind in available()] + [
    ("content", {"algorithm": a, **({"buckets": 5} if a in ("rein", "hcem") else {})})
    for a in ALGORITHMS
] + [
    ("content", {"algorithm": "hcem", "buckets": 3, "min_batch": 1, "delta_min": 16}),
    ("content", {"algorithm": "rein", "buckets": 3, "delta_min": 16}),
    ("content", {"algorithm": "predicate-table", "delta_min": 16}),
    ("symmetric", {"delta_min": 16}),
    ("content", {"algorithm": "predicate-table", "interface_limit": 1}),
]  # fmt: skip


def _check(matcher: Matcher, events: list[Event]) -> None:
    contexts = [MatchContext(e) for e in events]
    want = matcher.match_batch(contexts)
    cols = matcher.match_columns(contexts)
    assert isinstance(cols, MatchColumns)
    assert cols.events == len(events)
    assert cols.solutions is None
    assert np.all(np.diff(cols.event) >= 0)
    got = cols.to_matches([e.id for e in events])
    assert _key(got) == _key(want)
    with_solutions = matcher.match_columns(contexts, solutions=True)
    assert [[(m.subscription, m.count, m.solutions) for m in ms] for ms in want] == [
        [(m.subscription, m.count, m.solutions) for m in ms]
        for ms in with_solutions.to_matches([e.id for e in events])
    ]


def _key(batch: list[list[Match]]) -> list[list[tuple[str, str, int]]]:
    return [[(m.subscription, m.event, m.count) for m in ms] for ms in batch]


@pytest.mark.parametrize(("kind", "options"), CASES, ids=lambda x: str(x))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_match_columns_equals_match_batch(kind: str, options: dict, seed: int) -> None:
    rng = random.Random(seed)
    subs, events = WORKLOADS[kind](rng, 300)
    matcher = create_matcher(kind, **options)
    extra = []
    for s in subs:
        if rng.random() < 0.5 or kind != "content":
            matcher.add(s)
        else:
            extra.append(s)
    _check(matcher, events)  # the delta only, or a built structure (delta_min 16)
    for s in extra:  # inserts after a build land in the delta
        matcher.add(s)
    _check(matcher, events)
    for s in rng.sample(subs, len(subs) // 5):  # deletes clear live flags
        if kind != "composite":
            matcher.remove(s.id)
    _check(matcher, events)
    _check(matcher, events[:1])
    _check(matcher, [])


def test_columns_of_an_empty_matcher() -> None:
    matcher = create_matcher("content")
    events = [Event("e1", values={"a": 1})]
    cols = matcher.match_columns([MatchContext(e) for e in events])
    assert len(cols) == 0 and cols.offsets().tolist() == [0, 0]
