"""A bulk load's triples as it reads them: the distinct terms once, each triple three
indices into them (NumPy columns), never a Python tuple a triple.

:class:`BatchReader` reads documents (plain N-Triples straight from lines to indices,
other syntaxes through :func:`~semps.documents.triples.read_triples`), each document's
blank nodes freshly named (:func:`~semps.graph.formats.fresh_prefix`);
:meth:`BatchReader.batch` gives the :class:`TripleBatch` that
:func:`~semps.graph.edit.plan_load` turns into graph ids by interning each distinct term
once. The indices are the batch's own, not the graph's: a batch read before the graph
changed stays valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from semps._types import Term, Triple
from semps.documents.triples import read_rows
from semps.graph.change import IntArray
from semps.graph.formats import MAX_GRAPH_BYTES, fresh_prefix
from semps.graph.local import LocalTerms
from semps.graph.triples import unique
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.closure import SAME_AS
from semps.ontology.split import SCHEMA_PREDICATES, VOCABULARY_TYPES
from semps.terms import RDF, RDF_TYPE


@dataclass(frozen=True, eq=False)
class TripleBatch:
    """Distinct triples as indices into ``terms`` (``s[i] p[i] o[i]``, sorted by
    predicate, then subject and object)."""

    terms: Sequence[Term]
    s: IntArray
    p: IntArray
    o: IntArray

    def __len__(self) -> int:
        return len(self.s)

    def triples(self, rows: IntArray | None = None) -> list[Triple]:
        """The triples (those at ``rows``), as terms."""
        t = self.terms
        at = range(len(self.s)) if rows is None else rows.tolist()
        s, p, o = self.s.tolist(), self.p.tolist(), self.o.tolist()
        return [(t[s[i]], t[p[i]], t[o[i]]) for i in at]

    def suspects(self) -> list[Triple]:
        """The triples that may be axioms or ``owl:sameAs`` (what
        :func:`~semps.graph.edit.check_facts` refuses), in the batch's order: those whose
        predicate is a schema, list or ``owl:sameAs`` predicate, or ``rdf:type`` with a
        vocabulary class."""
        odd = {*SCHEMA_PREDICATES, RDF + "first", RDF + "rest", SAME_AS}
        if not len(self.s):
            return []
        flagged = np.asarray([t in odd for t in self.terms], dtype=np.bool_)
        vocabulary = np.asarray([t in VOCABULARY_TYPES for t in self.terms], dtype=np.bool_)
        mask = flagged[self.p]
        kind = [i for i, t in enumerate(self.terms) if t == RDF_TYPE]
        if kind:
            mask |= (self.p == kind[0]) & vocabulary[self.o]
        return self.triples(np.flatnonzero(mask))

    def keyed(self, local: LocalTerms) -> dict[int, IntArray]:
        """The triples in graph ids (``local`` interns each distinct term once), by
        predicate id: sorted unique ``s << 32 | o`` keys."""
        ids = np.fromiter((local.intern(t) for t in self.terms), np.int64, len(self.terms))
        if not len(self.s):
            return {}
        s, p, o = ids[self.s], ids[self.p], ids[self.o]
        order = np.argsort(p, kind="stable")
        p, k = p[order], (s[order] << 32) | o[order]
        cuts = (np.flatnonzero(np.diff(p)) + 1).tolist()
        starts, ends = [0, *cuts], [*cuts, len(p)]
        return {int(p[a]): unique(k[a:b]) for a, b in zip(starts, ends, strict=True)}


class BatchReader:
    """Documents read into one :class:`TripleBatch` (terms shared, blank nodes not)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.ids: dict[Term, int] = {}
        self.columns: list[tuple[IntArray, IntArray, IntArray]] = []

    def read(
        self,
        data: bytes,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        base: str | None = None,
    ) -> int:
        """Read one document; the triples it holds (repeats included).

        Raises:
            IngestError: as :func:`~semps.documents.triples.read_triples` (syntax errors
                with their ``line:col``, unsupported media types, hostile DTDs, nesting),
                or :class:`~semps.errors.DocumentTooLarge` past
                :data:`~semps.graph.formats.MAX_GRAPH_BYTES`.
        """
        s, p, o = read_rows(
            data,
            self.ids,
            blank_prefix=fresh_prefix(),
            media_type=media_type,
            filename=filename,
            base=base or "urn:semps:graph/",
            max_bytes=MAX_GRAPH_BYTES,
            limits=self.limits,
        )
        self.columns.append((_array(s), _array(p), _array(o)))
        return len(s)

    def extend(self, triples: Iterable[Triple]) -> int:
        """Add triples as they are (their blank nodes keep their names); how many."""
        ids = self.ids
        columns: tuple[list[int], list[int], list[int]] = ([], [], [])
        for triple in triples:
            for column, term in zip(columns, triple, strict=True):
                column.append(ids.setdefault(term, len(ids)))
        self.columns.append((_array(columns[0]), _array(columns[1]), _array(columns[2])))
        return len(columns[0])

    @property
    def read_so_far(self) -> int:
        """Triples read so far (repeats included)."""
        return sum(len(c[0]) for c in self.columns)

    def batch(self) -> TripleBatch:
        """What was read, each triple once."""
        parts = self.columns or [(_array([]), _array([]), _array([]))]
        s, p, o = (np.concatenate([c[i] for c in parts]) for i in range(3))
        order = np.lexsort((o, s, p))
        s, p, o = s[order], p[order], o[order]
        if len(s) > 1:
            keep = np.ones(len(s), dtype=np.bool_)
            keep[1:] = (s[1:] != s[:-1]) | (p[1:] != p[:-1]) | (o[1:] != o[:-1])
            s, p, o = s[keep], p[keep], o[keep]
        return TripleBatch(list(self.ids), s, p, o)


def _array(column: list[int]) -> IntArray:
    return np.asarray(column, dtype=np.int64)
