"""Content subscriptions: the JSON and text forms, their errors, and what a match means
(closed intervals, missing attributes, strings, several values of one attribute)."""

from __future__ import annotations

import json

import pytest
from semps_test_support import raised

from semps.errors import MatcherError, SubscriptionError, SubscriptionSyntaxError
from semps.matcher.content import ALGORITHMS, create_index, parse_subscription
from semps.matcher.content.brute import matches
from semps.matcher.content.constraints import Constraint, ContentSubscription

CONTRACT = (
    '{"id": "s1", "constraints": [{"attr": "a3", "op": "between", "low": 0.1, "high": 0.6},'
    ' {"attr": "a7", "op": ">=", "value": 0.3}, {"attr": "a1", "op": "=", "value": 5}]}'
)


def test_the_json_form_of_the_contract() -> None:
    sub = parse_subscription(CONTRACT)
    assert sub.id == "s1"
    assert sub.conditions() == {"a3": (0.1, 0.6), "a7": (0.3, float("inf")), "a1": (5.0, 5.0)}


def test_the_text_form_reads_like_the_json_form() -> None:
    text = 'a3 between 0.1 and 0.6 and a7 >= 0.3 and a1 = 5 and colour = "red"'
    sub = parse_subscription(text, sub_id="s1")
    assert [c.to_json() for c in sub.constraints[:3]] == [
        c.to_json() for c in parse_subscription(CONTRACT).constraints
    ]
    assert sub.constraints[3] == Constraint("colour", "=", "red")
    assert parse_subscription(sub.text(), sub_id="s1") == sub


def test_the_text_form_takes_iris_keywords_in_any_case_and_several_lines() -> None:
    sub = parse_subscription("<http://ex.org/price> >= 10 AND\n  qty BETWEEN 1 and 3", sub_id="s")
    assert sub.conditions() == {"http://ex.org/price": (10.0, float("inf")), "qty": (1.0, 3.0)}


def test_the_broker_id_overrides_the_json_id() -> None:
    assert parse_subscription(CONTRACT, sub_id="sub-7").id == "sub-7"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a3 >> 1", "1:4: unexpected character '>'"),
        ("a3 between 1 or 2", "1:14: expected and but found 'or'"),
        ("a3 >= 1 and", "1:12: expected an attribute name but found the end"),
        ("a3 >= 1 and\nb <= 'x'", '2:6: unexpected character "\'"'),
        ("a3 >= 1 b <= 2", "1:9: expected and or the end of the subscription but found 'b'"),
        ("a3 = ", "1:6: expected a number or a double-quoted string but found the end"),
        ('{"id": "s1", "constraints": [}', "1:30: invalid JSON: Expecting value"),
    ],
)
def test_syntax_errors_say_where(text: str, message: str) -> None:
    assert str(raised(SubscriptionSyntaxError, parse_subscription, text, sub_id="s")) == message


def one(*constraints: dict[str, object]) -> str:
    return json.dumps({"id": "s", "constraints": list(constraints)})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('a >= "x"', '1:1: a >= "x": strings support only ='),
        ("a between 3 and 1", "1:1: a between 3 and 1: low is greater than high"),
        ("a >= 0.7 and a <= 0.3", "the constraints on 'a' can never hold together (a <= 0.3)"),
        ('a = "x" and a = 2', "the constraints on 'a' can never hold together (a = 2)"),
        ("a >= 1e999", "1:1: a >=: the value must be a finite number or a string"),
        (one(), "subscription 's' has no constraints (it needs at least one)"),
        (
            one({"attr": "a", "op": "<"}),
            'constraints[0]: "op" must be one of >=, <=, =, between, not "<"',
        ),
        (
            one({"attr": "a", "op": "=", "value": True}),
            "constraints[0]: a =: the value must be a finite number or a string",
        ),
        (one({"attr": "a", "op": "between", "low": 1}), 'constraints[0]: "between" needs "high"'),
        (
            one({"attr": "a", "op": ">=", "value": 1, "low": 0}),
            "constraints[0]: \">=\" does not take 'low'",
        ),
        (
            '{"constraints": [], "ids": 1}',
            "unknown key 'ids' (expected id, constraints, interface)",
        ),
        ("[1, 2]", "1:1: unexpected character '['"),
    ],
)
def test_invalid_subscriptions_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(SubscriptionError) as err:
        parse_subscription(text, sub_id="s")
    assert str(err.value) == message


def sub(text: str) -> ContentSubscription:
    return parse_subscription(text, sub_id="s")


@pytest.mark.parametrize(
    ("text", "view", "expected"),
    [
        ("a between 0.1 and 0.6", {"a": [0.1]}, True),  # closed at both ends
        ("a between 0.1 and 0.6", {"a": [0.6]}, True),
        ("a between 0.1 and 0.6", {"a": [0.6000001]}, False),
        ("a >= 5", {"a": [5.0]}, True),  # 5 and 5.0 are one number
        ("a = 5", {"a": [5.0]}, True),
        ("a = 5", {"a": ["5"]}, False),  # a number never equals a string
        ('a = "5"', {"a": [5]}, False),
        ('a = "red"', {"a": ["red"]}, True),
        ("a <= 1", {"b": [0]}, False),  # a missing attribute fails its constraints
        ("a <= 1 and b >= 0", {"a": [0]}, False),
        ("a between 1 and 2", {"a": [0, 3]}, False),  # some single value must satisfy it
        ("a between 1 and 2", {"a": [0, 1.5, 3]}, True),
        ("a >= 1 and a <= 2", {"a": [0, 3]}, False),  # ... and one value all constraints on a
        ('c = "x" and a >= 1', {"c": ["y", "x"], "a": [0, 2]}, True),
    ],
)
def test_what_a_match_means(text: str, view: dict[str, list[object]], expected: bool) -> None:
    assert matches(sub(text), view) is expected  # type: ignore[arg-type]
    for algorithm in ALGORITHMS:
        index = create_index(algorithm)
        index.add(sub(text))
        assert index.match(view) == (["s"] if expected else []), algorithm  # type: ignore[arg-type]


def test_two_constraints_on_one_attribute_mean_the_same_as_between() -> None:
    assert sub("a >= 1 and a <= 2").conditions() == sub("a between 1 and 2").conditions()


def test_unknown_algorithms_get_a_suggestion() -> None:
    with pytest.raises(MatcherError) as err:
        create_index("predicate_table")
    assert str(err.value) == (
        "Unknown content algorithm 'predicate_table'. Did you mean 'predicate-table'?"
    )
