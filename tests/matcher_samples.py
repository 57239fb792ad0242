"""Sample subscriptions and events for every registered matcher kind, drawn at random:
shared by the contract suites (tests/matcher/test_contract*.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from semps.event import Event
from semps.matcher.values import Subscription
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


_EX = "http://ex.org/"
_CLASSES = [f"{_EX}C{i}" for i in range(4)]
_PROPS = [f"{_EX}p{i}" for i in range(4)]
_NODES = [f"{_EX}n{i}" for i in range(5)]
_WORDS = ["alpha", "beta", "gamma", "alphabet"]


def semantic_text(rng: random.Random) -> str:
    """One semantic subscription of a form the index holds: type patterns, chains, FILTERs
    that form families, strings, regexes, the algebra (OPTIONAL, UNION, paths); drawn from
    a small vocabulary, so texts repeat."""
    c, d = rng.sample(_CLASSES, 2)
    p, q = rng.sample(_PROPS, 2)
    n, k = rng.choice(_NODES), rng.randint(0, 5)
    w = rng.choice(_WORDS)
    forms = [
        f"SELECT * WHERE {{ ?x a <{c}> }}",
        f"SELECT ?x WHERE {{ ?x <{p}> <{n}> . ?x a <{c}> }}",
        f"SELECT * WHERE {{ ?x <{p}> ?y . ?y <{q}> ?z . ?z a <{d}> }}",
        f"SELECT * WHERE {{ ?x <{_EX}v> ?v FILTER(?v > {k}) }}",
        f"SELECT ?x WHERE {{ ?x a <{c}> ; <{_EX}v> ?v FILTER(?v >= {k} && ?v < {k + 3}) }}",
        f'SELECT * WHERE {{ ?x <{_EX}label> ?l FILTER(CONTAINS(?l, "{w[:3]}")) }}',
        f'ASK {{ ?x <{_EX}label> ?l FILTER(REGEX(?l, "^{w[:2]}", "i")) }}',
        f"SELECT DISTINCT ?y WHERE {{ ?x <{p}> ?y . ?w <{q}> ?z }}",
        f"SELECT * WHERE {{ ?x <{p}> ?y OPTIONAL {{ ?y <{_EX}label> ?l }} }}",
        f"SELECT * WHERE {{ {{ ?x a <{c}> }} UNION {{ ?x <{q}> <{n}> }} }}",
        f"SELECT * WHERE {{ ?x <{p}>+ ?y }}",
        f"SELECT * WHERE {{ ?x <{_EX}v> {k} }}",
    ]
    return rng.choice(forms)


def semantic_event(rng: random.Random, number: int) -> Event:
    """An event over :func:`semantic_text`'s vocabulary (types, links, numbers, words)."""
    triples: list[tuple[str, str, object]] = []
    for _ in range(rng.randint(2, 12)):
        s = rng.choice(_NODES)
        roll = rng.random()
        if roll < 0.3:
            triples.append((s, RDF_TYPE, rng.choice(_CLASSES)))
        elif roll < 0.6:
            triples.append((s, rng.choice(_PROPS), rng.choice(_NODES)))
        elif roll < 0.8:
            triples.append((s, f"{_EX}v", Literal(str(rng.randint(0, 8)), XSD + "integer")))
        else:
            triples.append((s, f"{_EX}label", Literal(rng.choice(_WORDS))))
    return Event(f"e{number}", tuple(dict.fromkeys(triples)))  # type: ignore[arg-type]


WORKLOADS: dict[str, Callable[[random.Random, int], tuple[list[Subscription], list[Event]]]] = {
    "content": _content,
    "symmetric": _symmetric,
    "semantic": _semantic,
    "composite": _composite,
}
