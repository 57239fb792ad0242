"""GraphView: the knowledge graph's closure at one version, as matching reads it.

A view holds the term table, the materialised closure (:class:`~semps.graph.triples.TripleSet`,
asserted triples flagged) and the ontology's rules over ids. The main process's
:class:`~semps.graph.graph.KnowledgeGraph` edits one; each matching worker keeps its own
replica and brings it forward with :meth:`GraphView.apply`, change after change, in the
order the main process made them (events in between see the version before).

Views are not thread-safe: one owner reads and applies; other threads read a
:meth:`GraphView.snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from semps._types import Term, Triple
from semps.errors import GraphError
from semps.graph.change import GraphChange
from semps.graph.rules import IdRules, id_rules
from semps.graph.terms import TermTable
from semps.graph.triples import TripleSet
from semps.ontology.expansion import Expansion


class GraphView:
    """The closure of the knowledge graph under an ontology, at :attr:`version`.

    Attributes:
        terms: every term the graph has used, by id.
        triples: the closure (asserted triples flagged).
        expansion: the ontology the closure is under; rules: its tables over ids.
        version: increases with every change (0: never changed).

    Example:
        >>> from semps.graph.graph import KnowledgeGraph
        >>> g = KnowledgeGraph()
        >>> _ = g.insert([("http://ex/a", "http://ex/p", "http://ex/b")])
        >>> v = g.view
        >>> v.version, v.objects_of("http://ex/a", "http://ex/p"), len(v)
        (1, ['http://ex/b'], 1)
    """

    def __init__(self, expansion: Expansion | None = None, terms: TermTable | None = None):
        self.terms = terms if terms is not None else TermTable()
        self.triples = TripleSet()
        self.expansion = expansion if expansion is not None else Expansion()
        self.rules: IdRules = id_rules(self.expansion, self.terms)
        self.version = 0

    def __len__(self) -> int:
        return len(self.triples)

    @property
    def empty(self) -> bool:
        """True when the graph holds no triple (matching is then the event alone)."""
        return not self.triples.segments or not len(self.triples)

    def kinds(self) -> npt.NDArray[np.uint8]:
        """Each term id's kind as an array (a copy)."""
        return np.frombuffer(bytes(self.terms.kinds), dtype=np.uint8)

    def snapshot(self) -> GraphView:
        """This view as it is now, for readers on other threads while this one goes on
        being changed: the closure copied (:meth:`TripleSet.snapshot`: the arrays shared,
        the small overlays copied), the term table shared (it only grows: the ids the
        copy's triples name never change), the rules and version as they are."""
        copy = GraphView.__new__(GraphView)
        copy.terms, copy.triples = self.terms, self.triples.snapshot()
        copy.expansion, copy.rules, copy.version = self.expansion, self.rules, self.version
        return copy

    # -- reading by terms ---------------------------------------------------------------------

    def objects_of(self, subject: Term, prop: str) -> list[Term]:
        """The objects of ``(subject, prop, ?)`` in the closure."""
        get = self.terms.get
        s, p = get(subject), get(prop)
        if s is None or p is None:
            return []
        return self.terms.terms(self.triples.objects(p, s))

    def contains(self, triple: Triple) -> bool:
        """Whether the closure holds the triple."""
        get = self.terms.get
        s, p, o = get(triple[0]), get(triple[1]), get(triple[2])
        return s is not None and p is not None and o is not None and self.triples.has(p, s, o)

    def term_triples(self, asserted_only: bool = False) -> Iterator[Triple]:
        """Every triple as terms (``asserted_only``: the asserted ones)."""
        at = self.terms.by_id
        for s, p, o in self.triples.triples(asserted_only):
            yield (at[s], at[p], at[o])  # type: ignore[misc]

    # -- changing -----------------------------------------------------------------------------

    def apply(self, change: GraphChange, expansion: Expansion | None = None) -> None:
        """Bring the view to ``change.version`` (the change must follow this version);
        ``expansion``: the new ontology of a change that replaced it.

        Raises:
            GraphError: the change does not follow this view's version or term table.
        """
        if change.version != self.version + 1 or change.first_term != len(self.terms):
            msg = (
                f"graph change {change.version} (terms from {change.first_term}) does not "
                f"follow version {self.version} ({len(self.terms)} terms)"
            )
            raise GraphError(msg)
        self.terms.extend(change.new_terms)
        if expansion is not None:
            self.expansion = expansion
            self.rules = id_rules(expansion, self.terms)
        apply_rows(self.triples, change)
        self.triples.compact()
        self.version = change.version


def apply_rows(triples: TripleSet, change: GraphChange) -> None:
    """The change applied to a triple set, predicate by predicate."""
    none = np.zeros(0, dtype=np.int64)
    parts = (change.added, change.removed, change.asserted, change.unasserted)
    for p in sorted(set().union(*parts)):
        added, removed, asserted, unasserted = (part.get(p, none) for part in parts)
        triples.segment(p).apply(added, removed, asserted, unasserted)
        if not triples.segments[p].size:
            del triples.segments[p]


def interned(terms: TermTable, triples: Iterable[Triple]) -> list[tuple[int, int, int]]:
    """Triples as ids, interning new terms."""
    i = terms.intern
    return [(i(s), i(p), i(o)) for s, p, o in triples]
