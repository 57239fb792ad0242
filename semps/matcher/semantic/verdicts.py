"""The semantic matcher's answers for one event in one process: phases 1 and 3 as
``(subscription id, verdict)``, a :class:`~semps.matcher.values.Verdict` shared by the
subscriptions of one shape (:func:`verdicts_of`), or as matches (:func:`as_matches`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

import numpy as np

from semps.matcher.semantic.compiled import CompiledSubscription
from semps.matcher.semantic.count import shape_pass
from semps.matcher.semantic.index import SubscriptionIndex
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.verify import (
    DEFAULT_SOLUTION_LIMIT,
    DEFAULT_STEP_BUDGET,
    EventBudget,
    verify,
)
from semps.matcher.values import Match, Verdict

__all__ = ["as_matches", "verdicts_of"]


def verdicts_of(
    index: SubscriptionIndex,
    pairs: EventPairs,
    candidates: Sequence[CompiledSubscription] | None = None,
    limit: int = DEFAULT_SOLUTION_LIMIT,
    budget: int = DEFAULT_STEP_BUDGET,
    watch: Callable[[str], None] | None = None,
) -> list[tuple[str, Verdict]]:
    """The matching subscriptions of one event as ``(id, verdict)``, sorted by id; the
    subscriptions of one shape share one :class:`Verdict` object (what a caller renders
    once for all of them).

    Candidates of one shape (the same query up to the id) are verified once; a verdict cut
    by the work ``budget`` is ``truncated``. Without ``candidates``, every subscription is
    a candidate, and the families' compiled pass
    (:func:`~semps.matcher.semantic.count.shape_pass`) picks the shapes worth verifying:
    those it leaves and those it found solutions for (verified for their solutions)."""
    event = EventBudget.of(budget)
    if candidates is None:
        found = _shape_verdicts(index, pairs, limit, budget, watch, event)
        candidates = index.algebra_candidates(pairs)
    else:
        found = []
    shape_at, slot_of = index.shape_at, index.slot_of
    verdicts: dict[object, Verdict | None] = {}
    for sub in candidates:
        shape: object
        if sub.algebra is None:
            shape = int(shape_at[slot_of[sub.id]])
        else:
            shape = ("algebra", index.algebra_shape[sub.id])
        if shape in verdicts:
            verdict = verdicts[shape]
        else:
            if watch is not None:  # a watchdog blames an overrun on this subscription
                watch(sub.id)
            verdict = verdicts[shape] = verify(sub, pairs, limit, budget, event)
        if verdict is not None:
            found.append((sub.id, verdict))
    found.sort(key=_first)
    return found


_first = itemgetter(0)


def _shape_verdicts(
    index: SubscriptionIndex,
    pairs: EventPairs,
    limit: int,
    budget: int,
    watch: Callable[[str], None] | None,
    event: EventBudget,
) -> list[tuple[str, Verdict]]:
    """The verdicts of the subscriptions without an algebra (in no particular order). A
    shape the families' pass counted whose verification a budget cut matches with the
    pass's exact count, the solutions found before the cut (maybe none) and
    ``truncated``."""
    found = shape_pass(index, pairs, budget, watch)
    if not len(found.shapes):
        return []
    counted = np.flatnonzero(found.counts).tolist()
    todo = counted + found.generic  # sure matches first, while the event's budget lasts
    verdicts: list[Verdict | None] = [None] * len(found.shapes)
    at, first_slots = index.sub_at, found.first_slots.tolist()
    for position in todo:
        sub = at[first_slots[position]]
        if watch is not None:
            watch(sub.id)
        verdicts[position] = verify(sub, pairs, limit, budget, event)
    for position in counted:  # the pass's count is exact where verification was cut
        verdict, exact = verdicts[position], int(found.counts[position])
        if verdict is None:  # cut before its first solution
            verdicts[position] = Verdict(exact, (), truncated=True)
        elif verdict.truncated and verdict.count < exact:
            verdicts[position] = Verdict(exact, verdict.solutions, truncated=True)
    # Each matching shape's subscriptions; a shape of one (the usual case) is its
    # representative, read without the compiled gather and its arrays.
    ids, shapes, sizes = index.id_at, found.shapes, index.shape_sizes
    out: list[tuple[str, Verdict]] = []
    many: list[int] = []
    for position, verdict in enumerate(verdicts):
        if verdict is not None:
            if sizes[shapes[position]] == 1:
                out.append((ids[first_slots[position]], verdict))
            else:
                many.append(position)
    if many:
        slots, counts = index.slots_of(shapes[many])
        start = 0
        for position, size in zip(many, counts.tolist(), strict=True):
            shared = verdicts[position]
            assert shared is not None
            out.extend((ids[s], shared) for s in slots[start : start + size].tolist())
            start += size
    return out


def as_matches(event_id: str, verdicts: Iterable[tuple[str, Verdict]]) -> list[Match]:
    """One event's verdicts (:func:`verdicts_of`) as
    :class:`~semps.matcher.values.Match` es, in the same order."""
    return [
        Match(sub_id, event_id, v.count, v.solutions, _TRUNCATED if v.truncated else _NO_DETAIL)
        for sub_id, v in verdicts
    ]


_TRUNCATED = {"truncated": True}
_NO_DETAIL: dict[str, object] = {}
