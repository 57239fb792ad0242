"""A change of the knowledge graph, as it travels: the record an edit produces, that the main
process commits, ships to each worker's replica (in order with events) and hands to the
matcher to compute the change's notifications.

It is all term ids in arrays (cheap to pickle, applied without a Python loop per triple
when large): per predicate id, the sorted ``subject << 32 | object`` keys of the triples
added to and removed from the closure, and of those that became, or stopped being,
asserted. The terms first used by the change travel with it (``new_terms``, to be interned
from ``first_term`` on), so every replica numbers them as the main process did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from semps._types import Term, Triple
from semps.graph.triples import MASK, unique

IntArray = npt.NDArray[np.int64]
#: Triples by predicate id: sorted unique ``s << 32 | o`` keys.
Keyed = Mapping[int, IntArray]


def keyed(rows: Iterable[tuple[int, int, int]]) -> dict[int, IntArray]:
    """``(s, p, o)`` id triples by predicate, as sorted unique keys.

    Example:
        >>> {p: k.tolist() for p, k in keyed([(1, 7, 2), (0, 7, 3), (1, 7, 2)]).items()}
        {7: [3, 4294967298]}
    """
    by_p: dict[int, list[int]] = {}
    for s, p, o in rows:
        by_p.setdefault(p, []).append((s << 32) | o)
    return {p: unique(np.asarray(k, dtype=np.int64)) for p, k in by_p.items()}


def rows_of(triples: Keyed) -> Iterator[tuple[int, int, int]]:
    """The ``(s, p, o)`` id triples of a keyed set."""
    for p, k in triples.items():
        for key in k.tolist():
            yield key >> 32, p, key & MASK


def count(triples: Keyed) -> int:
    """How many triples a keyed set holds."""
    return sum(len(k) for k in triples.values())


@dataclass(frozen=True, eq=False)
class GraphChange:
    """What one edit did to the graph (version ``version - 1`` -> ``version``).

    Attributes:
        version: the graph's version after the change.
        first_term: the id of ``new_terms[0]`` (the table's size before the change).
        new_terms: the terms the change added to the term table, in id order.
        added: closure triples added (asserted or inferred), keyed by predicate.
        removed: closure triples removed.
        asserted: triples that became asserted (inserted: new, or inferred before).
        unasserted: triples no longer asserted (deleted: removed, or still inferred).
        ontology: True when the change came from an ontology edit (the closure recomputed
            under new rules: a replica takes the new ontology with it).
        note: what made the change (``"INSERT DATA"``, ``"load"``, ...), for logs.
    """

    version: int
    first_term: int = 0
    new_terms: tuple[Term, ...] = ()
    added: Keyed = field(default_factory=dict)
    removed: Keyed = field(default_factory=dict)
    asserted: Keyed = field(default_factory=dict)
    unasserted: Keyed = field(default_factory=dict)
    ontology: bool = False
    note: str = ""

    @property
    def empty(self) -> bool:
        """True when neither the closure nor the asserted triples changed."""
        return not (count(self.added) or count(self.removed) or count(self.asserted)) and not (
            count(self.unasserted)
        )

    def summary(self) -> dict[str, int]:
        """Counts: the version, asserted triples inserted and deleted, inferred ones added
        and removed.

        Example:
            >>> GraphChange(2, added={7: np.asarray([5])}, asserted={7: np.asarray([5])}).summary()
            {'version': 2, 'inserted': 1, 'deleted': 0, 'inferred_added': 0, 'inferred_removed': 0}
        """
        return {
            "version": self.version,
            "inserted": count(self.asserted),
            "deleted": count(self.unasserted),
            "inferred_added": _outside(self.added, self.asserted),
            "inferred_removed": _outside(self.removed, self.unasserted),
        }


def _outside(a: Keyed, b: Keyed) -> int:
    """Triples of ``a`` not in ``b``."""
    total = 0
    for p, k in a.items():
        other = b.get(p)
        total += len(k) if other is None else int((~np.isin(k, other)).sum())
    return total


def term_triples(triples: Keyed, terms: Sequence[Term]) -> list[Triple]:
    """A keyed set as term triples (``terms``: the terms by id)."""
    return [(terms[s], terms[p], terms[o]) for s, p, o in rows_of(triples)]  # type: ignore[misc]
