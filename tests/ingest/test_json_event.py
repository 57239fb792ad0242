"""JSON events: content values and regions into the one event model, or a located error."""

from __future__ import annotations

import pytest

from semps.errors import DocumentTooLarge, JSONEventError
from semps.ingest.json_event import is_json_media_type, read_json_event


def test_values_and_region_and_time() -> None:
    e = read_json_event(
        b'{"id": "e1", "values": {"a0": 0.31, "a1": 5, "c": "red"},'
        b' "region": {"x": [0.2, 0.4]}, "time": 3}'
    )
    assert (e.id, dict(e.values), dict(e.regions), e.time) == (
        "e1",
        {"a0": 0.31, "a1": 5, "c": "red"},
        {"x": (0.2, 0.4)},
        3,
    )


def test_the_callers_id_wins() -> None:
    assert read_json_event(b'{"id": "mine", "values": {}}', event_id="broker").id == "broker"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"values": {"a": 1}', "1:20: invalid JSON: Expecting ',' delimiter"),
        (b'{"id": "e", "values": {"a": NaN}}', "invalid JSON: NaN is not a JSON number"),
        (b'{"id": "e", "values": {"a": [1]}}', "value of 'a' must be a number or a string, not an array"),  # noqa: E501
        (b'{"id": "e", "values": {"a": 1e999}}', "value of 'a' must be a number or a string, not Infinity"),  # noqa: E501
        (b'{"id": "e", "region": {"x": [2, 1]}}', "region attribute 'x' has low 2 > high 1"),
        (b'{"id": "e", "region": {}}', "region must name at least one attribute"),
        (b'{"id": "e", "valeus": {}}', "unknown key 'valeus' in a JSON event (expected id, values, region, time)"),  # noqa: E501
        (b'{"id": "e"}', 'a JSON event needs "values" and/or "region"'),
        (b'{"values": {}}', 'a JSON event needs a non-empty string "id", not null'),
        (b'{"id": "e", "values": {}, "time": "now"}', '"time" must be a number of seconds, not "now"'),  # noqa: E501
        (b"[1]", "a JSON event must be an object, not an array"),
        (b"\xff", "a JSON event must be UTF-8 (invalid start byte at byte 0)"),
        (b"[" * 100_000, "invalid JSON: maximum recursion depth exceeded while decoding a JSON array from a unicode string"),  # noqa: E501
    ],
)  # fmt: skip
def test_malformed_events_say_why(body: bytes, message: str) -> None:
    with pytest.raises(JSONEventError) as err:
        read_json_event(body)
    assert str(err.value) == message


def test_size_bound_and_media_types() -> None:
    with pytest.raises(DocumentTooLarge):
        read_json_event(b'{"id": "e", "values": {}}', max_bytes=10)
    assert is_json_media_type("application/json; charset=utf-8")
    assert not is_json_media_type("application/ld+json")
    assert not is_json_media_type(None)
