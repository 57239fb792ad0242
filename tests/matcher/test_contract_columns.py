"""The columns contract: for every registered matcher, ``match_columns`` gives what
``match_batch`` gives (same subscriptions, order, counts and solutions), on random data."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import numpy as np
import pytest

from semps.event import Event
from semps.matcher.base import Match, MatchContext, Matcher, Subscription
from semps.matcher.content import ALGORITHMS
from semps.matcher.registry import available, create_matcher
from semps.matcher.results import MatchColumns
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://example.org/"


def _content(rng: random.Random, n: int) -> tuple[list[Subscription], list[Event]]:
    subs = []
    for i in range(n):
        parts = []
        for attr in rng.sample(["a0", "a1", "a2", "c"], rng.randint(1, 3)):
            if attr == "c":
                parts.append(f'c = "{rng.choice("xyz")}"')
            else:
                low = round(rng.random() * 0.6, 1)
                parts.append(f"{attr} between {low} and {low + 0.4}")
        subs.append(Subscription(f"s{rng.randrange(10**6)}-{i}", "content", " and ".join(parts)))
    events = []
    for i in range(40):
        values: dict[str, object] = {a: round(rng.random(), 1) for a in ("a0", "a1", "a2")}
        if rng.random() < 0.6:
            values["c"] = rng.choice("xyzw")
        if rng.random() < 0.2:
            values = {}
        events.append(Event(f"e{i}", values=values) if values else Event(f"e{i}"))
    return subs, events


def _symmetric(rng: random.Random, n: int) -> tuple[list[Subscription], list[Event]]:
    def region() -> dict[str, tuple[float, float]]:
        out = {}
        for attr in rng.sample(["x", "y", "z"], rng.randint(1, 3)):
            low = round(rng.random(), 2)
            out[attr] = (low, round(low + rng.random() * 0.4, 2))
        return out

    subs = [
        Subscription(f"s{rng.randrange(10**6)}-{i}", "symmetric", json.dumps({"region": region()}))
        for i in range(n)
    ]
    events = [
        Event(f"e{i}", regions=region()) if rng.random() < 0.8 else Event(f"e{i}")
        for i in range(40)
    ]
    return subs, events


def _semantic(rng: random.Random, n: int) -> tuple[list[Subscription], list[Event]]:
    classes = [f"{EX}C{i}" for i in range(3)]
    props = [f"{EX}p{i}" for i in range(3)]
    nodes = [f"{EX}n{i}" for i in range(3)]
    subs = []
    for i in range(min(n, 30)):
        c, p = rng.choice(classes), rng.choice(props)
        text = rng.choice(
            [
                f"SELECT * WHERE {{ ?x a <{c}> }}",
                f"SELECT * WHERE {{ ?x <{p}> ?y }}",
                f"SELECT * WHERE {{ ?x a <{c}> . ?x <{p}> ?y }}",
                f"SELECT * WHERE {{ ?x <{EX}d> ?v FILTER(?v >= 1) }}",
            ]
        )
        subs.append(Subscription(f"s{i}", "semantic", text))
    events = []
    for i in range(12):
        triples = []
        for _ in range(rng.randint(1, 5)):
            s = rng.choice(nodes)
            triples.append(
                rng.choice(
                    [
                        (s, RDF_TYPE, rng.choice(classes)),
                        (s, rng.choice(props), rng.choice(nodes)),
                        (s, f"{EX}d", Literal(str(rng.randint(0, 2)), XSD + "integer")),
                    ]
                )
            )
        events.append(Event(f"e{i}", tuple(dict.fromkeys(triples))))
    return subs, events


def _composite(rng: random.Random, n: int) -> tuple[list[Subscription], list[Event]]:
    return [Subscription("c1", "composite", "create event ab = a then b;")], [
        Event(f"e{i}", values={"a": 1}) for i in range(5)
    ]


WORKLOADS: dict[str, Callable[[random.Random, int], tuple[list[Subscription], list[Event]]]] = {
    "content": _content,
    "symmetric": _symmetric,
    "semantic": _semantic,
    "composite": _composite,
}

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
    want = matcher.match_batch(events, contexts)
    cols = matcher.match_columns(events, contexts)
    assert isinstance(cols, MatchColumns)
    assert cols.events == len(events)
    assert cols.solutions is None
    assert np.all(np.diff(cols.event) >= 0)
    got = cols.to_matches([e.id for e in events])
    assert _key(got) == _key(want)
    with_solutions = matcher.match_columns(events, contexts, solutions=True)
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
    cols = matcher.match_columns(events, [MatchContext(e) for e in events])
    assert len(cols) == 0 and cols.offsets().tolist() == [0, 0]
