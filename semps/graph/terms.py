"""Interned terms: every IRI, blank node and literal of the knowledge graph gets a dense
integer id, so the materialised closure is kept as arrays of ids (:mod:`.triples`).

Ids are handed out in order (0, 1, 2, ...) and never reused, so a replica that receives the
new terms of each change in order (:class:`~semps.graph.change.GraphChange`) assigns the
same ids as the process that made them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from semps._types import Term
from semps.terms import Literal, n3, parse_n3

#: Term kinds (:meth:`TermTable.kind`).
IRI, BLANK, LITERAL = 0, 1, 2


class TermTable:
    """Term <-> id, with each id's kind (IRI, blank node, literal).

    Example:
        >>> t = TermTable()
        >>> t.intern("http://ex/a"), t.intern(Literal("1")), t.intern("http://ex/a")
        (0, 1, 0)
        >>> t.term(1), t.is_literal(1), len(t)
        (Literal('1'), True, 2)
    """

    __slots__ = ("_ids", "_kinds", "_terms")

    def __init__(self, terms: Iterable[Term] = ()) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term] = []
        self._kinds = bytearray()
        self.extend(terms)

    def __len__(self) -> int:
        return len(self._terms)

    def intern(self, term: Term) -> int:
        """The id of ``term``, given a new one if it has none."""
        found = self._ids.get(term)
        if found is None:
            found = self._ids[term] = len(self._terms)
            self._terms.append(term)
            self._kinds.append(kind_of(term))
        return found

    def extend(self, terms: Iterable[Term]) -> None:
        """Intern ``terms`` in order (a replica receiving a change's new terms)."""
        for term in terms:
            self.intern(term)

    def get(self, term: Term) -> int | None:
        """The id of ``term``, or ``None`` when the graph has never seen it."""
        return self._ids.get(term)

    def term(self, term_id: int) -> Term:
        """The term of an id."""
        return self._terms[term_id]

    def terms(self, ids: Iterable[int]) -> list[Term]:
        """The terms of several ids."""
        at = self._terms
        return [at[i] for i in ids]

    @property
    def by_id(self) -> Sequence[Term]:
        """The terms in id order (read-only by contract)."""
        return self._terms

    @property
    def ids(self) -> Mapping[Term, int]:
        """Term -> id (read-only by contract: ``ids.get(term)`` is :meth:`get` without
        the call)."""
        return self._ids

    def since(self, start: int) -> Sequence[Term]:
        """The terms interned from id ``start`` on, in id order."""
        return self._terms[start:]

    def kind(self, term_id: int) -> int:
        """:data:`IRI`, :data:`BLANK` or :data:`LITERAL`."""
        return self._kinds[term_id]

    def is_literal(self, term_id: int) -> bool:
        """True when the id names a literal."""
        return self._kinds[term_id] == LITERAL

    @property
    def kinds(self) -> bytearray:
        """Each id's kind, by id (read-only by contract)."""
        return self._kinds


def kind_of(term: Term) -> int:
    """A term's kind: :data:`IRI`, :data:`BLANK` or :data:`LITERAL`."""
    if isinstance(term, Literal):
        return LITERAL
    return BLANK if term.startswith("_:") else IRI


def encode(term: Term) -> str:
    """A term as stored: its N-Triples text.

    Example:
        >>> encode("http://ex/a"), encode(Literal("x", lang="en"))
        ('<http://ex/a>', '"x"@en')
    """
    return n3(term)


def decode(text: str) -> Term:
    """The inverse of :func:`encode`."""
    return parse_n3(text)
