"""The bulk loading path (parse_json_many + add_many) equals one-by-one parsing and adding:
same subscriptions indexed, same answers, the same first error."""

from __future__ import annotations

import random

import pytest

from semps.errors import SubscriptionError
from semps.matcher.content import BruteForceIndex, create_index, subscription_from_json
from semps.matcher.content.bulk import parse_json_many

ODD: list[object] = [
    {"attr": "a0", "op": ">=", "value": True},
    {"attr": "a0", "op": "<=", "value": "x"},
    {"attr": "a0", "op": "between", "low": 0.9, "high": 0.1},
    {"attr": "a0", "op": "between", "low": 0.1},
    {"attr": "", "op": "=", "value": 1},
    {"attr": 3, "op": "=", "value": 1},
    {"attr": "a0", "op": "<", "value": 1},
    {"attr": "a0", "op": "=", "value": 10**400},
    {"attr": "a0", "op": "=", "value": None},
    ["a0"],
]


def _constraint(rng: random.Random) -> dict[str, object]:
    attr = rng.choice(["a0", "a1", "a2", "c"])
    if attr == "c":
        return {"attr": "c", "op": "=", "value": rng.choice(["x", "y", 1, 2.5])}
    if rng.random() < 0.5:
        low = round(rng.random() * 0.6, 1)
        return {"attr": attr, "op": "between", "low": low, "high": low + rng.choice([0, 0.4])}
    return {"attr": attr, "op": rng.choice([">=", "<=", "="]), "value": rng.choice([0, 1, 0.5])}


def _docs(rng: random.Random, n: int, bad: float) -> list[object]:
    docs: list[object] = []
    for i in range(n):
        doc: dict[str, object] = {
            "id": f"s{i}",
            "constraints": [_constraint(rng) for _ in range(rng.randint(1, 4))],
        }
        if rng.random() < 0.1:
            doc["interface"] = "i"
        if rng.random() < bad:
            doc["constraints"].append(rng.choice(ODD))  # type: ignore[attr-defined]
        docs.append(doc)
    return docs


def _one_by_one(docs: list[object]) -> tuple[list[object], tuple[int, str] | None]:
    subs = []
    for i, doc in enumerate(docs):
        try:
            subs.append(subscription_from_json(doc))
        except SubscriptionError as exc:
            return subs, (i, str(exc))
    return subs, None


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("algorithm", ["rein", "hcem", "predicate-table"])
def test_bulk_equals_one_by_one(seed: int, algorithm: str) -> None:
    rng = random.Random(seed)
    docs = _docs(rng, 400, bad=0.0 if seed % 3 == 0 else 0.01)
    subs, want_error = _one_by_one(docs)
    parsed, error = parse_json_many(docs)
    assert (error[0], str(error[1])) == want_error if error else want_error is None
    assert sorted(parsed.ids) == sorted(s.id for s in subs)  # type: ignore[attr-defined]
    oracle = BruteForceIndex()
    for s in subs:
        oracle.add(s)  # type: ignore[arg-type]
    index = create_index(algorithm, **({"buckets": 7} if algorithm != "predicate-table" else {}))
    index.add_many(parsed)
    views = [
        {a: [rng.choice([0, 0.5, 1, round(rng.random(), 1)])] for a in ("a0", "a1", "a2")}
        | {"c": [rng.choice(["x", "y", 1, 2.5])]}
        for _ in range(60)
    ]
    want = [oracle.match(v) for v in views]
    assert index.match_batch(views) == want  # the delta
    index.rebuild()  # type: ignore[attr-defined]
    assert index.match_batch(views) == want
    columns = index.match_columns(views)
    assert [columns.ids_of(i) for i in range(len(views))] == want
