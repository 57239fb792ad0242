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
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.results import result_line
from semps.matcher.semantic._kernels import family_runs, write_counts
from semps.matcher.semantic.family import (
    Family,
    input_columns,
    new_columns,
    row_groups,
    string_masks,
)
from semps.matcher.semantic.index import EventPairs, SubscriptionIndex
from semps.matcher.semantic.verify import DEFAULT_STEP_BUDGET, component_rows, count_solutions

IntArray = npt.NDArray[np.int64]

#: Fewer candidates of one family than this are verified one by one.
MIN_FAMILY = 3

_NONE: IntArray = np.zeros(0, dtype=np.int64)


def count_parts(
    index: SubscriptionIndex, pairs: EventPairs, budget: int = DEFAULT_STEP_BUDGET
) -> dict[str, int]:
    """``{subscription id: solution count}`` of the matching subscriptions (basic graph
    patterns in slot order, then those with an algebra)."""
    slots, counts = count_columns(index, pairs, budget)
    order = np.argsort(slots, kind="stable")
    found = dict(zip(index.id_at[slots[order]].tolist(), counts[order].tolist(), strict=True))
    if index.algebra:
        found.update(count_algebra(index, pairs, budget))
    return found


def count_algebra(index: SubscriptionIndex, pairs: EventPairs, budget: int) -> dict[str, int]:
    """The counts of the matching subscriptions with an algebra (one evaluation per
    shape among the candidates)."""
    found: dict[str, int] = {}
    counts: dict[int, int] = {}
    shapes = index.algebra_shape
    for sub in index.algebra_candidates(pairs):
        shape = shapes[sub.id]
        count = counts.get(shape)
        if count is None:
            count = counts[shape] = count_solutions(sub, pairs, budget)
        if count:
            found[sub.id] = count
    return found


def count_columns(
    index: SubscriptionIndex, pairs: EventPairs, budget: int = DEFAULT_STEP_BUDGET
) -> tuple[IntArray, IntArray]:
    """The slots of the matching subscriptions without an algebra and their solution
    counts (in no particular order)."""
    found = shape_pass(index, pairs, budget)
    counts, at, generic = found.counts, index.sub_at, found.generic
    for position, slot in zip(generic, found.first_slots[generic].tolist(), strict=True):
        counts[position] = count_solutions(at[slot], pairs, budget)
    per_slot = counts[found.inverse]
    hits = np.flatnonzero(per_slot)
    return found.slots[hits], per_slot[hits]


class ShapePass(NamedTuple):
    """Phase 1 and the families' compiled pass over one event: the candidate ``slots``,
    their distinct ``shapes`` (with the ``first_slots`` of each and each slot's position
    among them, ``inverse``), the shapes' solution ``counts`` as the families' pass found
    them, and the positions of the shapes it left to verify one by one (``generic``, whose
    counts are 0 until then)."""

    slots: IntArray
    shapes: IntArray
    first_slots: IntArray
    inverse: IntArray
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
    slots, shapes, first_slots, inverse, grouped, bounds, alone = index.candidate_shapes(
        pairs, MIN_FAMILY
    )
    counts = np.zeros(len(shapes), dtype=np.int64)
    generic: list[int] = alone.tolist()
    if len(grouped):
        if watch is not None:
            watch(index.id_at[first_slots[grouped[0]]])
        generic += _count_families(index, pairs, budget, shapes, counts, grouped, bounds)
    return ShapePass(slots, shapes, first_slots, inverse, counts, generic)


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
    (:func:`~semps.matcher.semantic._kernels.family_runs`); the positions of the runs it
    does not cover (to verify one by one)."""
    member_cols = index.shape_row[shapes[grouped]]
    edges = bounds.tolist()
    fids = index.shape_fam[shapes[grouped[bounds[:-1]]]].tolist()
    runs = _Runs()
    joins: dict[int, tuple[list[tuple[Term, ...]] | None, dict[Any, Any]]] = {}
    generic: list[int] = []
    for fid, lo, hi in zip(fids, edges, edges[1:], strict=False):
        family = index.family_at[fid]
        joined = joins.get(id(family.bare))
        if joined is None:  # families differing in projection or form share the join
            rows = component_rows(family.bare, pairs, budget)
            joined = joins[id(family.bare)] = (rows, new_columns(index.term_ids))
        rows, columns = joined
        if rows is not None and not rows:
            continue  # no solution: the counts stay 0
        if rows is None or not runs.add(index, fid, family, lo, hi, member_cols, rows, columns):
            generic.extend(grouped[lo:hi].tolist())
    if runs.table:
        programs, program_at = index.program_table()
        counts[grouped] = family_runs(
            np.array(runs.table, dtype=np.int64),
            member_cols,
            programs,
            program_at,
            index.params.ints,
            _joined(runs.cols, np.int64),
            _joined(runs.masks, np.bool_),
            _joined(runs.groups, np.int64),
            len(grouped),
        )
    return generic


def _joined(parts: list[Any], dtype: Any) -> Any:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


class _Runs:
    """The runs of one compiled pass (see ``family_runs``) and the arrays they read."""

    def __init__(self) -> None:
        self.table: list[tuple[int, ...]] = []
        self.cols: list[IntArray] = []
        self.masks: list[npt.NDArray[np.bool_]] = []
        self.groups: list[IntArray] = []
        self.col_at: dict[tuple[int, object], int] = {}
        self.sizes = [0, 0, 0]  # of cols, masks, groups

    def add(
        self,
        index: SubscriptionIndex,
        fid: int,
        family: Family,
        lo: int,
        hi: int,
        member_cols: IntArray,
        rows: list[tuple[Term, ...]],
        columns: dict[Any, Any],
    ) -> bool:
        """Add the run of members ``lo:hi`` of a family; False when the compiled pass
        does not cover its rows' values."""
        n = len(rows)
        key = (id(family.bare), family.inputs)
        col_at = self.col_at.get(key)
        if col_at is None:
            found = input_columns(family, rows, columns)
            col_at = self.col_at[key] = -1 if found is None else self._put(0, found.ravel())
        if col_at < 0:
            return False
        mask_at = 0
        if family.strings:
            masks = string_masks(
                family,
                index.members_at[fid],
                index.params.ints,
                member_cols[lo:hi],
                index.terms(),
                rows,
                columns,
            )
            if masks is None:
                return False
            mask_at = self._put(1, masks.ravel())
        mode, group_at = 0, 0
        if family.ask or (family.distinct and not family.projected):
            mode = 1
        elif family.distinct:
            groups, distinct = row_groups(family, rows, columns)
            if distinct < n:
                mode, group_at = 2, self._put(2, groups)
        self.table.append((lo, hi, fid, col_at, n, mask_at, group_at, mode))
        return True

    def _put(self, kind: int, values: Any) -> int:
        at = self.sizes[kind]
        (self.cols, self.masks, self.groups)[kind].append(values)
        self.sizes[kind] += len(values)
        return at


def count_lines(
    index: SubscriptionIndex,
    events: Sequence[Event],
    contexts: Sequence[MatchContext],
    budget: int = DEFAULT_STEP_BUDGET,
) -> list[str]:
    """The events' output lines (:func:`~semps.matcher.results.result_line`, the same
    text), written from the count columns and the index's ids as JSON text, in id order,
    by compiled code (``_kernels.write_counts``): no dictionary or string per match."""
    out = []
    for event, context in zip(events, contexts, strict=True):
        pairs = EventPairs(context.parts)
        if index.algebra:
            out.append(result_line(event.id, count_parts(index, pairs, budget)))
            continue
        slots, counts = count_columns(index, pairs, budget)
        ranks = index.id_ranks()[slots]
        order = np.argsort(ranks)
        blob, starts = index.id_text()
        tail = write_counts(ranks[order], counts[order], blob, starts).tobytes().decode()
        out.append(f'{{"event": {json.dumps(event.id)}, "matches": [{tail}')
    return out
