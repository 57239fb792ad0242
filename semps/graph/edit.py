"""Planning an edit of the knowledge graph: the :class:`~semps.graph.change.GraphChange` it
makes, computed against the current view without changing it (so a refused edit leaves
nothing behind, and the main process can commit the change with its notifications before
any replica applies it).

- :func:`plan_edit`: asserted triples deleted and inserted (SPARQL Update's ``DELETE`` then
  ``INSERT``), closed incrementally (:mod:`.reason`: semi-naive additions, DRed
  deletions).
- :func:`plan_load`: a bulk load merged in, or replacing everything (Graph Store Protocol
  ``POST`` / ``PUT``), closed vectorised (:mod:`.bulk`).
- :func:`plan_clear`: everything removed (``DELETE``).
- :func:`plan_ontology`: the closure recomputed from the asserted triples under a new
  ontology (an ontology edit), as the change between the two closures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from semps._types import Term, Triple
from semps.errors import GraphError, GraphLimitExceeded, limit_exceeded
from semps.graph.batch import TripleBatch
from semps.graph.bulk import BulkOvertime, BulkTooMany, closure_of
from semps.graph.change import GraphChange, IntArray, Keyed, keyed
from semps.graph.local import LocalTerms
from semps.graph.reason import Overtime, Reasoner, TooMany, Working
from semps.graph.rules import id_rules
from semps.graph.view import GraphView
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.closure import SAME_AS
from semps.ontology.expansion import Expansion
from semps.ontology.split import axiom_reason
from semps.terms import n3

_NONE = np.zeros(0, dtype=np.int64)
Tick = Callable[[int], object]


def check_facts(triples: Iterable[Triple]) -> None:
    """Refuse what the knowledge graph does not hold: axioms (they belong in the ontology)
    and ``owl:sameAs``.

    Raises:
        GraphError: naming the first such triple.
    """
    for triple in triples:
        reason = axiom_reason(triple)
        if reason is not None:
            msg = (
                f"{_shown(triple)}: {reason}; axioms belong in the ontology, the knowledge "
                "graph holds facts about individuals"
            )
            raise GraphError(msg)
        if triple[1] == SAME_AS:
            msg = f"{_shown(triple)}: owl:sameAs is not supported in the knowledge graph"
            raise GraphError(msg)


def _shown(triple: Triple) -> str:
    text = " ".join(n3(t) for t in triple)
    return text if len(text) <= 200 else text[:197] + "..."


def _edit_limit(limits: Limits, triples: int) -> int:
    return limits.edit_limit(triples) + triples


def _too_many(limit: int, triples: int) -> GraphLimitExceeded:
    said = f"the edit would add or remove more than {limit} triples of the closure"
    name = f"max_edit_inferred, or max_edit_inferred_ratio times its {triples} triples"
    return limit_exceeded(GraphLimitExceeded, said, name)


def _too_big(limits: Limits) -> GraphLimitExceeded:
    bound = limits.max_graph_triples
    said = f"the edit would make the knowledge graph hold more than {bound} triples"
    said += ", asserted and inferred"
    return limit_exceeded(GraphLimitExceeded, said, "max_graph_triples")


def _overtime(limits: Limits) -> GraphLimitExceeded:
    said = f"planning the edit took more than {limits.graph_timeout:g} s"
    said += "; it was cut off and nothing of it applied"
    return limit_exceeded(GraphLimitExceeded, said, "graph_timeout")


def _admit(
    view: GraphView, facts: Sequence[Triple], size: int, limit: tuple[int, str], what: str
) -> LocalTerms:
    """``view``'s terms, to which an edit of ``size`` triples asserting ``facts`` adds its
    own, once ``size`` is within ``limit`` (its value and name; ``what``: what the edit
    does, in the message) and ``facts`` hold no axiom nor ``owl:sameAs``."""
    bound, name = limit
    if size > bound:
        raise limit_exceeded(GraphLimitExceeded, f"{what} {size} triples", name, over=f"{bound}")
    check_facts(facts)
    return LocalTerms(view.terms)


def deadline(limits: Limits, timed: bool = True) -> float | None:
    """The ``time.monotonic()`` an edit's planning must end by (``None``: untimed)."""
    return time.monotonic() + limits.graph_timeout if timed else None


def _bounded(limits: Limits, edit: int, room: int) -> tuple[int, bool]:
    """The tighter of the edit's bound and the room left in the graph, and whether it is
    the room."""
    return (room, True) if room < edit else (edit, False)


def plan_edit(
    view: GraphView,
    insert: Sequence[Triple],
    delete: Sequence[Triple] = (),
    *,
    limits: Limits = DEFAULT_LIMITS,
    note: str = "",
) -> GraphChange:
    """The change that deleting ``delete`` and then inserting ``insert`` makes.

    A triple deleted that is not asserted is ignored (it may stay inferred); a triple
    both deleted and inserted stays asserted.

    Raises:
        GraphLimitExceeded: more than ``max_update_triples`` triples, or a closure change
            past ``max_edit_inferred`` (``_ratio``).
        GraphError: an inserted triple is an axiom, or ``owl:sameAs``.
    """
    size = len(insert) + len(delete)
    bound = (limits.max_update_triples, "max_update_triples")
    local = _admit(view, insert, size, bound, "the edit inserts or deletes")
    inserted = dict.fromkeys(local.ids(insert))
    known = view.terms.get
    deleted = []
    for s, p, o in delete:
        ids = (known(s), known(p), known(o))
        if None not in ids:
            deleted.append(ids)
    triples = view.triples
    doomed = {
        t
        for t in deleted
        if t not in inserted and triples.is_asserted(t[1], t[0], t[2])  # type: ignore[arg-type]
    }
    fresh_asserted = [t for t in inserted if not triples.is_asserted(t[1], t[0], t[2])]
    reasoner = Reasoner(view.rules, Working(triples, local.kind), deadline=deadline(limits))
    limit = _edit_limit(limits, size)
    try:
        over, back = reasoner.delete(
            doomed,  # type: ignore[arg-type]
            lambda t: t not in doomed and triples.is_asserted(t[1], t[0], t[2]),
            limit,
        )
        fresh = reasoner.add(fresh_asserted, limit)
    except TooMany as exc:
        raise _too_many(exc.limit, size) from None
    except Overtime:
        raise _overtime(limits) from None
    over_set, fresh_set = set(over), set(fresh)
    added, removed = fresh_set - over_set, over_set - set(back) - fresh_set
    if len(view) + len(added) - len(removed) > limits.max_graph_triples and added:
        raise _too_big(limits)
    return GraphChange(
        **_numbering(view, local),
        added=keyed(added),
        removed=keyed(removed),
        asserted=keyed(fresh_asserted),
        unasserted=keyed(doomed),  # type: ignore[arg-type]
        note=note,
    )


class _Numbering(TypedDict):
    """The fields that place a change after the view it is planned on."""

    version: int
    first_term: int
    new_terms: tuple[Term, ...]


def _numbering(view: GraphView, local: LocalTerms | None = None) -> _Numbering:
    """A change of ``view``: the next version, and the terms ``local`` gave ids past the
    table's end (none without it)."""
    new = tuple(local.new) if local is not None else ()
    return {"version": view.version + 1, "first_term": len(view.terms), "new_terms": new}


def _kinds(view: GraphView, local: LocalTerms) -> npt.NDArray[np.uint8]:
    """Every id's kind, the local ones past the table's."""
    own = view.kinds()
    first = local.first
    extra = np.fromiter((local.kind(i) for i in range(first, first + len(local.new))), np.uint8)
    return np.concatenate([own, extra]) if len(extra) else own


def _packed(view: GraphView) -> tuple[dict[int, IntArray], dict[int, IntArray]]:
    """The closure's keys and its asserted keys, by predicate."""
    closure, asserted = {}, {}
    for p, seg in view.triples.segments.items():
        so, flags = seg.packed()
        if len(so):
            closure[p] = so
            asserted[p] = so[flags]
    return closure, asserted


def _minus(a: Keyed, b: Keyed) -> dict[int, IntArray]:
    """``a - b`` by predicate (sorted keys)."""
    out = {}
    for p, k in a.items():
        other = b.get(p)
        found = k if other is None else k[~np.isin(k, other)]
        if len(found):
            out[p] = found
    return out


def plan_load(
    view: GraphView,
    triples: Sequence[Triple] | TripleBatch,
    *,
    replace: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    tick: Tick | None = None,
    note: str = "load",
) -> GraphChange:
    """The change that loading ``triples`` makes: merged in (Graph Store Protocol
    ``POST``), or replacing every asserted triple (``PUT``). ``tick(n)`` is called as the
    closure grows by ``n`` triples. ``triples`` may be a :class:`TripleBatch` (a bulk
    load's reading: no tuple a triple).

    Raises:
        GraphLimitExceeded: more than ``max_load_triples`` triples, or a closure change
            past ``max_edit_inferred`` (``_ratio``).
        GraphError: a triple is an axiom, or ``owl:sameAs``.
    """
    bound = (limits.max_load_triples, "max_load_triples")
    if isinstance(triples, TripleBatch):
        local = _admit(view, triples.suspects(), len(triples), bound, "the load brings")
        new = triples.keyed(local)
    else:
        local = _admit(view, triples, len(triples), bound, "the load brings")
        new = keyed(local.ids(triples))
    closure, asserted = _packed(view)
    room = limits.max_graph_triples - (0 if replace else len(view))
    limit, graph_bound = _bounded(limits, _edit_limit(limits, len(triples)), max(room, 0))
    rules = view.rules
    try:
        found = closure_of(
            rules,
            _kinds(view, local),
            new,
            None if replace else closure,
            tick,
            limit,
            deadline=deadline(limits),
        )
    except BulkTooMany as exc:
        raise (_too_big(limits) if graph_bound else _too_many(exc.limit, len(triples))) from None
    except BulkOvertime:
        raise _overtime(limits) from None
    if replace:
        added, removed = _minus(found, closure), _minus(closure, found)
        unasserted = _minus(asserted, new)
    else:
        added, removed, unasserted = found, {}, {}
    return GraphChange(
        **_numbering(view, local),
        added=added,
        removed=removed,
        asserted=_minus(new, asserted),
        unasserted=unasserted,
        note=note,
    )


def plan_clear(view: GraphView, *, note: str = "clear") -> GraphChange:
    """The change that removes every triple."""
    closure, asserted = _packed(view)
    return GraphChange(
        **_numbering(view),
        removed=closure,
        unasserted=asserted,
        note=note,
    )


def plan_ontology(
    view: GraphView,
    expansion: Expansion,
    *,
    limits: Limits = DEFAULT_LIMITS,
    tick: Tick | None = None,
    timed: bool = True,
) -> GraphChange:
    """The change that closing the asserted triples under ``expansion`` instead makes (a
    recompute: an ontology edit may change any inference). Apply it with the expansion:
    ``view.apply(change, expansion)``.

    The recompute is bounded while it runs: it stops as soon as the closure passes
    ``max_graph_triples``, or adds more than ``max_edit_inferred`` triples the graph did
    not hold, or (``timed``) runs past ``graph_timeout``; the triples it removes are held
    to ``max_edit_inferred`` too.

    Raises:
        GraphLimitExceeded: one of those limits passed (nothing changed).
    """
    local = LocalTerms(view.terms)
    rules = id_rules(expansion, local)  # type: ignore[arg-type]
    closure, asserted = _packed(view)
    bound = limits.max_edit_inferred
    try:
        found = closure_of(
            rules,
            _kinds(view, local),
            asserted,
            None,
            tick,
            limits.max_graph_triples,
            deadline=deadline(limits, timed),
            old=closure,
            old_limit=bound,
        )
    except BulkTooMany as exc:
        raise (_too_many(bound, 0) if exc.changed else _too_big(limits)) from None
    except BulkOvertime:
        raise _overtime(limits) from None
    added, removed = _minus(found, closure), _minus(closure, found)
    if sum(len(k) for k in removed.values()) > bound:
        raise _too_many(bound, 0)
    return GraphChange(
        **_numbering(view, local),
        added=added,
        removed=removed,
        ontology=True,
        note="ontology",
    )


def empty_keyed() -> Mapping[int, IntArray]:
    """No triples."""
    return {}
