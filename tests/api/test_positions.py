"""Stream cursors: what is encoded decodes to the same positions for the same principal, and
a cursor altered in any byte, truncated, or shown by another principal is refused."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semps.api.positions import MAX_CURSOR, decode_positions, encode_positions
from semps.errors import SempsError

KEY = bytes(range(32))
ids = st.one_of(
    st.integers(1, 10**12).map(lambda n: f"sub-{n}"),
    st.text(min_size=1, max_size=30),
)
positions = st.dictionaries(ids, st.integers(1, 2**63 - 1), max_size=40)


@given(positions, st.text(max_size=20))
def test_a_cursor_decodes_to_its_positions(given_positions: dict[str, int], who: str) -> None:
    cursor = encode_positions(given_positions, KEY, who)
    assert decode_positions(cursor, KEY, who) == dict(sorted(given_positions.items()))


@given(positions, st.data())
def test_a_cursor_altered_anywhere_is_refused(
    given_positions: dict[str, int], data: st.DataObject
) -> None:
    raw = bytearray(base64.urlsafe_b64decode(encode_positions(given_positions, KEY, "ada") + "=="))
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    altered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(SempsError, match="invalid cursor"):
        decode_positions(altered, KEY, "ada")


def test_positions_at_zero_are_left_out_and_numbered_ids_cost_little() -> None:
    many = {f"sub-{n}": 5 for n in range(1, 1001)}
    cursor = encode_positions({**many, "sub-2000": 0}, KEY, "ada")
    assert decode_positions(cursor, KEY, "ada") == dict(sorted(many.items()))
    assert len(cursor) < 3 * 1000  # two bytes a subscription, in base64


@pytest.mark.parametrize("cursor", ["", "A", "AAAA", "%%%", "x" * (MAX_CURSOR + 1), "é"])
def test_malformed_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(SempsError, match="invalid cursor"):
        decode_positions(cursor, KEY, "ada")


def test_another_principals_cursor_is_refused() -> None:
    cursor = encode_positions({"sub-1": 3}, KEY, "ada")
    with pytest.raises(SempsError, match="not one this service handed out to this token"):
        decode_positions(cursor, KEY, "bob")
    with pytest.raises(SempsError, match="not one this service handed out"):
        decode_positions(cursor, bytes(32), "ada")
