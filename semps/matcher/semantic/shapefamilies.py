"""The index's families: by shape, its family and its row among the family's members.

Shapes that differ only in their FILTER constants form a family (:mod:`.family`); the
families' compiled pass (:mod:`.familyjoin`) reads what is kept here: each family's members'
parameters (integers in :attr:`ShapeFamilies.params`, strings in
:attr:`ShapeFamilies.needles`), the constants they select by numbered, and the families as
arrays (:meth:`ShapeFamilies.tables`).
"""

from __future__ import annotations

import numpy as np

from semps._types import Term
from semps.matcher.semantic.compiled import CompiledSubscription
from semps.matcher.semantic.family import Family, Members, Needles, ParamTable, family_of
from semps.matcher.semantic.familytables import FamilyTables, TermFacts, family_tables

__all__ = ["ShapeFamilies"]


class ShapeFamilies:
    """The families of an index's shapes, a family kept while a shape of it is."""

    def __init__(self) -> None:
        #: By shape: its family's number (-1 for none) and its row among the members.
        self.shape_fam = np.full(16, -1, dtype=np.int64)
        self.shape_row = np.zeros(16, dtype=np.int64)
        self.family_at: dict[int, Family] = {}
        self.members_at: dict[int, Members] = {}
        #: The members' integer parameters (a column per member: ``shape_row``).
        self.params = ParamTable()
        #: The string parameters among them, by string function.
        self.needles = Needles()
        #: Numbers of the pattern constants families select by (never reused).
        self.term_ids: dict[Term, int] = {}
        #: The event terms the families' pass read lately, with what it reads of them.
        self.term_facts = TermFacts()
        #: Family numbers handed out so far (numbers are never reused).
        self.count = 0
        self._tables: FamilyTables | None = None  # until the families change
        self._terms: list[Term] = []
        self._families: dict[Family, int] = {}
        # The same by the family object's identity (family_of hands out one object per
        # family while its cache holds it): no hash of the nested plan per registration.
        self._by_object: dict[int, int] = {}
        self._users: dict[int, int] = {}

    def join(self, shape: int, sub: CompiledSubscription) -> None:
        """A new shape, ``sub``'s: a member of its family, if it has one."""
        if shape >= len(self.shape_fam):
            size = 2 * shape + 16
            self.shape_fam = np.concatenate(
                [self.shape_fam, np.full(size - len(self.shape_fam), -1, dtype=np.int64)]
            )
            self.shape_row = np.resize(self.shape_row, size)
        found = family_of(sub)
        if found is None:
            return
        family, params = found
        fid = self._by_object.get(id(family))
        if fid is None or self.family_at.get(fid) is not family:
            fid = self._families.get(family)
        if fid is None:
            fid = self._families[family] = self.count
            self.count += 1
            self.family_at[fid] = family
            self.members_at[fid] = Members(family, self.params, self.needles)
            self._tables = None
        self._by_object[id(family)] = fid
        self._users[fid] = self._users.get(fid, 0) + 1
        self.shape_fam[shape] = fid
        self.shape_row[shape] = self.members_at[fid].add(params, self._term_id)

    def _term_id(self, term: Term) -> int:
        found = self.term_ids.get(term)
        if found is None:
            found = self.term_ids[term] = len(self.term_ids)
        return found

    def leave(self, shape: int) -> None:
        """A shape gone: out of its family, and the family gone with its last member."""
        fid = int(self.shape_fam[shape])
        if fid < 0:
            return
        self.shape_fam[shape] = -1
        self.members_at[fid].remove(int(self.shape_row[shape]))
        self._users[fid] -= 1
        if not self._users[fid]:
            del self._users[fid]
            del self.members_at[fid]
            family = self.family_at.pop(fid)
            self._tables = None
            del self._families[family]
            self._by_object.pop(id(family), None)

    def terms(self) -> list[Term]:
        """The numbered constants by number (:attr:`term_ids` the other way)."""
        if len(self._terms) != len(self.term_ids):
            self._terms = list(self.term_ids)
        return self._terms

    def tables(self) -> FamilyTables:
        """The families as arrays for the compiled pass (:mod:`.familyjoin`), rebuilt
        after they change."""
        if self._tables is None:
            self._tables = family_tables(self.family_at, self.count)
        return self._tables
