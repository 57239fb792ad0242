"""A segment's arrays after a change equal a plain dictionary's model of the same change:
the large-change path (sorted merges into the arrays, both orders kept sorted without a
sort of the whole) and the overlay path alike.

Oracle: a dict ``(s, o) -> asserted`` changed as the docstring of ``Segment.apply`` says
(removals, then additions as inferred, then the flags)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semps.graph.triples as triples_module
from semps.graph.triples import Segment, swapped

pairs = st.tuples(st.integers(0, 6), st.integers(0, 6))


def keys(found: set[tuple[int, int]]) -> np.ndarray:
    return np.asarray(sorted((s << 32) | o for s, o in found), dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(pairs, st.booleans(), max_size=20),
    st.lists(st.tuples(pairs, st.booleans()), max_size=4),
    st.sets(pairs, max_size=8),
    st.sets(pairs, max_size=8),
    st.sets(pairs, max_size=8),
    st.sets(pairs, max_size=8),
    st.booleans(),
)
def test_a_change_applied_matches_the_model(
    base: dict,
    overlay: list,
    removed: set,
    added: set,
    asserted: set,
    unasserted: set,
    large: bool,
) -> None:
    seg = Segment(keys(set(base)), np.asarray([base[k] for k in sorted(base)], dtype=np.bool_))
    model = dict(base)
    for (s, o), flag in overlay:  # some changes in the overlay first
        if seg.add(s, o, flag):
            model[(s, o)] = flag
        elif flag:
            model[(s, o)] = True
    for k in removed:
        model.pop(k, None)
    added -= set(model)  # a change adds what the closure does not hold
    for k in added:
        model[k] = False
    for k in unasserted:
        if k in model:
            model[k] = False
    asserted &= set(model)  # and flags what it holds
    for k in asserted:
        model[k] = True
    with pytest.MonkeyPatch.context() as m:
        m.setattr(triples_module, "MERGE_AT", 0 if large else 1 << 30)
        seg.apply(keys(added), keys(removed), keys(asserted), keys(unasserted))
    so, flags = seg.packed()
    assert so.tolist() == keys(set(model)).tolist()
    assert flags.tolist() == [model[k] for k in sorted(model)]
    assert seg.os.tolist() == np.sort(swapped(seg.so)).tolist()  # the base, both ways
    for s, o in model:
        assert o in seg.objects(s) and s in seg.subjects(o)
    seg.compact(force=True)  # the overlay merged in: both orders sorted, nothing lost
    assert seg.so.tolist() == keys(set(model)).tolist()
    assert seg.asserted.tolist() == [model[k] for k in sorted(model)]
    assert seg.os.tolist() == np.sort(swapped(seg.so)).tolist()
