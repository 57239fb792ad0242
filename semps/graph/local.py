"""Term ids for terms the graph does not know yet, without changing its table: an event's
new nodes and literals, or the terms of an edit that may still be refused."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from semps._types import Term, Triple
from semps.graph.terms import TermTable, kind_of

__all__ = ["LocalTerms"]


class LocalTerms:
    """The graph's term table, extended locally: an unknown term gets the next id past the
    table (``len(table)``, ``len(table) + 1``, ...), which is the id it will get if the
    change is applied (:attr:`new` lists them in order).

    Example:
        >>> t = TermTable(["http://ex/a"])
        >>> local = LocalTerms(t)
        >>> local.intern("http://ex/a"), local.intern("http://ex/b"), len(t)
        (0, 1, 1)
        >>> local.term(1), local.new
        ('http://ex/b', ['http://ex/b'])
    """

    __slots__ = ("base", "first", "new", "_ids", "_kinds", "_table_kinds", "_table_terms")

    def __init__(self, table: TermTable) -> None:
        self.base = table
        self.first = len(table)
        self.new: list[Term] = []
        self._ids: dict[Term, int] = {}
        self._kinds = bytearray()
        self._table_kinds = table.kinds
        self._table_terms = table.by_id

    def intern(self, term: Term) -> int:
        """The term's id (a local one if the table does not know it)."""
        found = self.base.get(term)
        if found is not None:
            return found
        found = self._ids.get(term)
        if found is None:
            found = self._ids[term] = self.first + len(self.new)
            self.new.append(term)
            self._kinds.append(kind_of(term))
        return found

    def get(self, term: Term) -> int | None:
        """The term's id, or ``None`` when neither the table nor this extension has it."""
        found = self.base.get(term)
        return found if found is not None else self._ids.get(term)

    def kind(self, term_id: int) -> int:
        """The id's kind (:mod:`.terms`)."""
        first = self.first
        return self._table_kinds[term_id] if term_id < first else self._kinds[term_id - first]

    def term(self, term_id: int) -> Term:
        """The term of an id."""
        first = self.first
        return self._table_terms[term_id] if term_id < first else self.new[term_id - first]

    def ids(self, triples: Iterable[Triple]) -> list[tuple[int, int, int]]:
        """Triples as ids."""
        i = self.intern
        return [(i(s), i(p), i(o)) for s, p, o in triples]

    def triples(self, rows: Iterable[tuple[int, int, int]]) -> list[Triple]:
        """Id triples as terms."""
        t = self.term
        return [(t(s), t(p), t(o)) for s, p, o in rows]  # type: ignore[misc]

    def by_id(self) -> Sequence[Term]:
        """Every term by id, the local ones past the table's."""
        return [*self._table_terms, *self.new]
