"""A notification's JSON as the workers write it: every solution in N-Triples terms while it
fits, then cut from the end with ``solutions_truncated``; counts capped with
``count_truncated``; a composite's detail last."""

from __future__ import annotations

import json

import pytest

from semps.broker.payload import change_head, payload_head, verdict_heads
from semps.limits import Limits
from semps.matcher.semantic.verify import Verdict
from semps.matcher.values import ChangeMatch, Match
from semps.terms import XSD, Literal


def notification(head: str) -> dict:
    """The stored text (the head with the seq the store adds) as JSON."""
    return json.loads(head + ',"id":7}')


def test_every_solution_is_written_in_n_triples_terms() -> None:
    solutions = (
        {"x": "http://ex/a", "n": Literal("4", XSD + "integer")},
        {"x": "_:b0", "n": Literal("chat", lang="fr")},
    )
    match = Match("s1", "e1", 2, solutions)
    assert notification(payload_head(match)) == {
        "subscription": "s1",
        "event": "e1",
        "count": 2,
        "solutions": [
            {"x": "<http://ex/a>", "n": f'"4"^^<{XSD}integer>'},
            {"x": "_:b0", "n": '"chat"@fr'},
        ],
        "id": 7,
    }


def test_solutions_past_the_size_limit_are_left_out_from_the_end() -> None:
    solutions = tuple({"x": f"http://ex/{i:04d}"} for i in range(50))
    match = Match("s1", "e1", 50, solutions, {"of": ["s2"]})
    head = payload_head(match, Limits(max_notification_bytes=400))
    doc = notification(head)
    assert len(head) <= 400
    kept = doc["solutions"]
    assert 0 < len(kept) < 50
    assert kept == [{"x": f"<http://ex/{i:04d}>"} for i in range(len(kept))]
    assert doc["solutions_truncated"] is True and doc["count"] == 50
    assert list(doc)[-2:] == ["detail", "id"] and doc["detail"] == {"of": ["s2"]}


def test_a_count_past_max_count_is_capped_and_said_so() -> None:
    match = Match("s1", "e1", 12, ({"x": "http://ex/a"},))
    doc = notification(payload_head(match, Limits(max_count=10, max_solutions=1)))
    assert doc["count"] == 10 and doc["count_truncated"] is True
    assert doc["solutions"] == [{"x": "<http://ex/a>"}]
    assert "solutions_truncated" not in doc


VERDICTS = [
    Verdict(2, ({"x": "http://ex/a", "n": Literal("4", XSD + "integer")}, {"x": "_:b0"})),
    Verdict(1, ({"s": Literal('é "quoted"\n', lang="fr")},)),
    Verdict(3, ({"x": "http://ex/é"},), truncated=True),
    Verdict(12, ({"x": "http://ex/a"},)),
    Verdict(50, tuple({"x": f"http://ex/{i:04d}"} for i in range(50))),
    Verdict(1, ()),
    Verdict(1, (), detail={"constituents": ["s1", "s2"]}),
    Verdict(2, ({"x": "http://ex/b"},), truncated=True, detail={"why": "budget"}),
]


@pytest.mark.parametrize(
    "limits",
    [Limits(), Limits(max_count=10, max_solutions=1), Limits(max_notification_bytes=400)],
    ids=["defaults", "capped counts", "small notifications"],
)
def test_verdicts_shared_by_a_shapes_subscriptions_are_written_as_their_matches(
    limits: Limits,
) -> None:
    """The workers render a verdict once for every subscription of its shape: each
    notification is exactly what ``payload_head`` writes for that subscription's match
    (the oracle), capped, cut and marked truncated alike."""
    ids = ["s1", "a-much-longer-subscription-id-" + "x" * 300, 'q"uote', "é"]
    found = [(sub_id, verdict) for verdict in VERDICTS for sub_id in ids]
    expected = [
        (sub_id, payload_head(Match(sub_id, "ev-1", v.count, v.solutions, _detail(v)), limits))
        for sub_id, v in found
    ]
    assert verdict_heads(found, "ev-1", limits) == expected


def _detail(verdict: Verdict) -> dict[str, object]:
    truncated: dict[str, object] = {"truncated": True} if verdict.truncated else {}
    return {**truncated, **(verdict.detail or {})}


def test_a_graph_change_notifies_the_solutions_it_added_and_removed() -> None:
    change = ChangeMatch(
        "s1", 7, 1, ({"x": "http://ex/a"},), 2, ({"x": "http://ex/b"}, {"x": "_:b1"})
    )
    assert notification(change_head(change, "graph-7")) == {
        "subscription": "s1",
        "event": "graph-7",
        "graph_version": 7,
        "count": 1,
        "solutions": [{"x": "<http://ex/a>"}],
        "removed_count": 2,
        "removed": [{"x": "<http://ex/b>"}, {"x": "_:b1"}],
        "id": 7,
    }


def test_a_change_that_only_removes_counts_no_added_solution() -> None:
    doc = notification(change_head(ChangeMatch("s1", 2, 0, (), 1, ({},)), "ev-9"))
    assert (doc["count"], doc["solutions"], doc["removed_count"], doc["removed"]) == (
        0,
        [],
        1,
        [{}],
    )


def test_both_lists_of_a_change_are_cut_to_the_notifications_size_and_said_so() -> None:
    rows = tuple({"x": f"http://ex/{i:04d}"} for i in range(50))
    head = change_head(
        ChangeMatch("s1", 3, 50, rows, 50, rows), "graph-3", Limits(max_notification_bytes=600)
    )
    doc = notification(head)
    assert len(head) <= 600
    assert doc["count"] == 50 and doc["removed_count"] == 50
    assert doc["solutions_truncated"] is True and doc["removed_truncated"] is True
    kept = doc["solutions"] + doc["removed"]
    assert 0 < len(doc["solutions"]) < 50 and len(kept) < 50
    assert doc["solutions"] == [{"x": f"<http://ex/{i:04d}>"} for i in range(len(doc["solutions"]))]
