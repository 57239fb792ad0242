"""Counts only: phases 1 and 3 without building a solution or a match (what bulk matching
and ``semps match`` report), with the answers as columns (slots and counts).

Candidates of one shape are counted once; the shapes of one family (:mod:`.family`) are
counted together by one join of the family's bare component and one compiled pass of the
members' filters over its rows; the rest are verified one by one
(:func:`~semps.matcher.semantic.verify.count_solutions`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.results import result_line
from semps.matcher.semantic._join_kernels import run_inputs, scatter_counts
from semps.matcher.semantic._kernels import write_shape_counts
from semps.matcher.semantic.familyjoin import count_runs
from semps.matcher.semantic.index import CandidateShapes, SubscriptionIndex
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.verify import DEFAULT_STEP_BUDGET, EventBudget, count_solutions

IntArray = npt.NDArray[np.int64]

#: Fewer family candidates than this in an event are all verified one by one: the compiled
#: pass has a fixed cost per event (numbering the event's terms, calling the kernel), but
#: a family's run in it costs less than one verification, even for a single candidate
#: (0.1% workload in process: 420 us an event when families of fewer than 3 candidates
#: were verified one by one, 311-341 when none were). On
#: bench/semantic.py's 10k subscriptions (14 candidates per event, 94 pairs), matching
#: cost 252 us an event with 1, 199 with 16, 174 with 32, 159 with 64 (792b873: 176); the
#: 0.1% workload (1,100 family candidates) is the same with each.
MIN_GROUPED = 32

#: Candidate shapes :func:`count_lines` holds between its steps at most (about 50 bytes
#: each); past it, the events so far go through the later steps first.
STAGED_CANDIDATES = 1 << 19

_NONE: IntArray = np.zeros(0, dtype=np.int64)


def count_parts(
    index: SubscriptionIndex, pairs: EventPairs, budget: int = DEFAULT_STEP_BUDGET
) -> dict[str, int]:
    """``{subscription id: solution count}`` of the matching subscriptions (basic graph
    patterns in slot order, then those with an algebra)."""
    event = EventBudget.of(budget)
    slots, counts = count_columns(index, pairs, budget, event)
    order = np.argsort(slots, kind="stable")
    found = dict(zip(index.id_at[slots[order]].tolist(), counts[order].tolist(), strict=True))
    if index.algebra:
        found.update(count_algebra(index, pairs, budget, event))
    return found


def count_algebra(
    index: SubscriptionIndex, pairs: EventPairs, budget: int, event: EventBudget | None = None
) -> dict[str, int]:
    """The counts of the matching subscriptions with an algebra (one evaluation per
    shape among the candidates; all of them within the ``event`` budget)."""
    if event is None:
        event = EventBudget.of(budget)
    found: dict[str, int] = {}
    counts: dict[int, int] = {}
    shapes = index.algebra_shape
    for sub in index.algebra_candidates(pairs):
        shape = shapes[sub.id]
        count = counts.get(shape)
        if count is None:
            count = counts[shape] = count_solutions(sub, pairs, budget, event)
        if count:
            found[sub.id] = count
    return found


def count_columns(
    index: SubscriptionIndex,
    pairs: EventPairs,
    budget: int = DEFAULT_STEP_BUDGET,
    event: EventBudget | None = None,
) -> tuple[IntArray, IntArray]:
    """The slots of the matching subscriptions without an algebra and their solution
    counts (in no particular order; those verified one by one within the ``event``
    budget)."""
    found = counted_shapes(index, pairs, budget, event)
    hits = np.flatnonzero(found.counts)
    slots, sizes = index.slots_of(found.shapes[hits])
    return slots, np.repeat(found.counts[hits], sizes)


def counted_shapes(
    index: SubscriptionIndex,
    pairs: EventPairs,
    budget: int = DEFAULT_STEP_BUDGET,
    event: EventBudget | None = None,
) -> ShapePass:
    """:func:`shape_pass` with the shapes it left verified one by one (within the
    ``event`` budget): every candidate shape's solution count."""
    return _verified(index, pairs, shape_pass(index, pairs, budget), budget, event)


def _verified(
    index: SubscriptionIndex,
    pairs: EventPairs,
    found: ShapePass,
    budget: int,
    event: EventBudget | None = None,
) -> ShapePass:
    """``found`` with the shapes it left (``generic``) counted one by one, within the
    ``event`` budget (a fresh one by default)."""
    if event is None:
        event = EventBudget.of(budget)
    counts, at, generic = found.counts, index.sub_at, found.generic
    for position, slot in zip(generic, found.first_slots[generic].tolist(), strict=True):
        counts[position] = count_solutions(at[slot], pairs, budget, event)
    return found


class ShapePass(NamedTuple):
    """Phase 1 and the families' compiled pass over one event: the candidate ``shapes``
    (with the representative slot of each, ``first_slots``), their solution ``counts`` as
    the families' pass found them, and the positions of the shapes it left to verify one
    by one (``generic``, whose counts are 0 until then)."""

    shapes: IntArray
    first_slots: IntArray
    counts: IntArray
    generic: list[int]


def shape_pass(
    index: SubscriptionIndex,
    pairs: EventPairs,
    budget: int = DEFAULT_STEP_BUDGET,
    watch: Callable[[str], None] | None = None,
) -> ShapePass:
    """Counter filtering, then the families' runs counted in one compiled pass
    (``watch``, if given, is told the first family member's id before it runs)."""
    return families_pass(index, pairs, index.candidate_shapes(pairs), budget, watch)


def families_pass(
    index: SubscriptionIndex,
    pairs: EventPairs,
    candidates: CandidateShapes,
    budget: int = DEFAULT_STEP_BUDGET,
    watch: Callable[[str], None] | None = None,
) -> ShapePass:
    """:func:`shape_pass` after its counter filtering (``candidates``, phase 1 of the
    same ``pairs``)."""
    shapes, first_slots, grouped, bounds, alone = candidates
    counts = np.zeros(len(shapes), dtype=np.int64)
    generic: list[int] = alone.tolist()
    if len(grouped) < MIN_GROUPED:
        generic += grouped.tolist()
    elif len(grouped):
        if watch is not None:
            watch(index.id_at[first_slots[grouped[0]]])
        generic += _count_families(index, pairs, budget, shapes, counts, grouped, bounds)
    return ShapePass(shapes, first_slots, counts, generic)


def _count_families(
    index: SubscriptionIndex,
    pairs: EventPairs,
    budget: int,
    shapes: IntArray,
    counts: IntArray,
    grouped: IntArray,
    bounds: IntArray,
) -> list[int]:
    """Count the families' runs of ``grouped`` (positions among ``shapes``, one run per
    family between ``bounds``) into ``counts``, all in one compiled pass
    (:func:`~semps.matcher.semantic.familyjoin.count_runs`); the positions of the runs it
    leaves to verify one by one."""
    families = index.families
    run_fam, member_cols = run_inputs(
        shapes, grouped, bounds, families.shape_fam, families.shape_row
    )
    found, left = count_runs(families, pairs, run_fam, bounds, member_cols, budget)
    generic: list[int] = scatter_counts(counts, grouped, bounds, found, left).tolist()
    return generic


def count_lines(
    index: SubscriptionIndex,
    events: Sequence[Event],
    contexts: Sequence[MatchContext],
    budget: int = DEFAULT_STEP_BUDGET,
) -> list[str]:
    """The events' output lines (:func:`~semps.matcher.results.result_line`, the same
    text), written from the count columns and the index's ids as JSON text, in id order,
    by compiled code (``_kernels.write_shape_counts``): no dictionary or string per match.

    The batch goes through one step at a time (every event's closure, then every event's
    counter filtering, then the families' passes, the verifications, the lines), not one
    event at a time: each step's code and data (the ontology's templates, the containers,
    the families' tables, the ids) then stay in the processor's caches from one event to
    the next. On the 0.1% workload (``bench/semantic_workload.py``) in one process that
    took 225-240 us of CPU an event where event by event took 255-280. The events whose
    candidates reach :data:`STAGED_CANDIDATES` go through the later steps before the next
    event's counter filtering, so the memory a batch holds stays bounded where every
    subscription is a candidate of every event."""
    pairs = [EventPairs(context.parts) for context in contexts]
    if index.algebra:
        return [
            result_line(event.id, count_parts(index, one, budget))
            for event, one in zip(events, pairs, strict=True)
        ]
    out: list[str] = []
    group: list[tuple[str, EventPairs, CandidateShapes]] = []
    held = 0
    for event, one in zip(events, pairs, strict=True):
        found = index.candidate_shapes(one)
        group.append((event.id, one, found))
        held += len(found.shapes)
        if held >= STAGED_CANDIDATES:
            out += _group_lines(index, group, budget)
            group, held = [], 0
    return out + _group_lines(index, group, budget)


def _group_lines(
    index: SubscriptionIndex,
    group: Sequence[tuple[str, EventPairs, CandidateShapes]],
    budget: int,
) -> list[str]:
    """The lines of events whose counter filtering is done: their families' passes, then
    their verifications, then their lines (:func:`count_lines`)."""
    passes = [families_pass(index, pairs, found, budget) for _, pairs, found in group]
    counted = [
        _verified(index, pairs, found, budget)
        for (_, pairs, _), found in zip(group, passes, strict=True)
    ]
    start, size, flat = index.slot_blocks()  # the index does not change meanwhile
    ranks = index.id_ranks()
    blob, starts = index.id_text()
    out = []
    for (event_id, _, _), found in zip(group, counted, strict=True):
        written = write_shape_counts(
            found.shapes, found.counts, start, size, flat, ranks, blob, starts
        )
        tail = written.tobytes().decode()
        out.append(f'{{"event": {json.dumps(event_id)}, "matches": [{tail}')
    return out
