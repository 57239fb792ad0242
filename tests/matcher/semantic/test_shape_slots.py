"""The slots of each shape (``ShapeSlots``) against a dictionary of lists kept beside it,
over drawn sequences of additions and removals, the flat array's moves and compactions
included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.matcher.semantic import shapeslots
from semps.matcher.semantic.shapeslots import ShapeSlots

#: (shape, True) adds a new slot to the shape; (shape, False) removes one of its slots
#: (the n-th, modulo how many it has), if any.
STEPS = st.lists(st.tuples(st.integers(0, 7), st.booleans(), st.integers(0, 50)), max_size=300)


@pytest.fixture(autouse=True)
def compact_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shapeslots, "_MIN_COMPACT", 4)


@given(STEPS)
@settings(max_examples=300, deadline=None)
def test_the_slots_of_shapes_are_those_added_and_not_removed(
    steps: list[tuple[int, bool, int]],
) -> None:
    slots = ShapeSlots()
    oracle: dict[int, list[int]] = {}
    next_slot = 0
    for shape, adding, n in steps:
        held = oracle.setdefault(shape, [])
        if adding:
            first = slots.add(shape, next_slot)
            assert first == (not held)
            held.append(next_slot)
            next_slot += 1
        elif held:
            slot = held[n % len(held)]
            was_first = slots.first(shape) == slot
            successor = slots.remove(shape, slot)
            held.remove(slot)
            if was_first:
                assert successor == (slots.first(shape) if held else -1)
            else:
                assert successor is None
        for s, expected in oracle.items():
            assert slots.size_of(s) == len(expected)
            if expected:
                assert slots.first(s) in expected
    shapes = np.array([s for s in oracle for _ in range(2)], dtype=np.int64)
    found, sizes = slots.of(shapes)
    assert sizes.tolist() == [len(oracle[s]) for s in shapes.tolist()]
    at = 0
    for s, size in zip(shapes.tolist(), sizes.tolist(), strict=True):
        assert sorted(found[at : at + size].tolist()) == sorted(oracle[s])
        at += size


def test_a_removed_representative_is_followed_by_the_shapes_last_slot() -> None:
    slots = ShapeSlots()
    for slot in (4, 5, 6):
        slots.add(2, slot)
    assert slots.remove(2, 4) == 6
    assert slots.remove(2, 5) is None
    assert slots.remove(2, 6) == -1
    assert slots.size_of(2) == 0


def test_compaction_keeps_every_block_and_frees_the_room_of_emptied_shapes() -> None:
    slots = ShapeSlots()
    for shape in range(40):
        for k in range(shape % 5 + 1):
            slots.add(shape, 100 * shape + k)
    for shape in range(0, 40, 2):  # half the shapes emptied: their room is unused
        for k in range(shape % 5 + 1):
            slots.remove(shape, 100 * shape + k)
    slots.add(1, 199)  # moves shape 1's block: compacts first
    assert slots._unused < 8
    found, sizes = slots.of(np.arange(40, dtype=np.int64))
    expected = [
        [100 * s + k for k in range(s % 5 + 1)] + ([199] if s == 1 else []) if s % 2 else []
        for s in range(40)
    ]
    assert sizes.tolist() == [len(e) for e in expected]
    assert found.tolist() == [slot for e in expected for slot in e]
