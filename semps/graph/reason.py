"""Incremental reasoning over the materialised closure, one triple at a time (Python).

The same OWL 2 RL rules as an event's closure (:mod:`semps.ontology.closure`: property and
class expansion, domains and ranges, hasValue both ways, intersections, someValuesFrom,
allValuesFrom, transitivity), over term ids, against a base closure that is never copied:

- :meth:`Reasoner.add` closes new triples *semi-naively*: each new triple is joined with
  the base plus what was added so far, and only what is new goes on; the work is
  proportional to what changes.
- :meth:`Reasoner.delete` removes asserted triples by *DRed*: over-delete everything a
  deleted triple was used to derive (transitively, over the old closure, never an asserted
  triple that stays), then re-derive: each over-deleted triple that one rule still gives
  from what remains is put back (a backward check per triple: its subject's few triples
  looked up), and what follows from it is closed again as an addition.

Both work on a :class:`Working` state: the base :class:`~semps.graph.triples.TripleSet`
(untouched) plus local additions and removals, so a refused change (a limit passed) leaves
nothing behind. The bulk closure of many triples at once is vectorised instead
(:mod:`.bulk`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from semps.graph.rules import ANY, IdRules
from semps.graph.terms import LITERAL
from semps.graph.triples import TripleSet

IdTriple = tuple[int, int, int]


class TooMany(Exception):
    """The change passed the reasoner's limit (``limit`` triples added or removed)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(limit)


class Overtime(Exception):
    """The change was still being closed at the reasoner's deadline."""


#: Triples closed between two looks at the clock.
_CLOCK_EVERY = 4096


class Working:
    """A base triple set seen with local additions and removals (the base is not changed).

    ``kind(id)`` gives a term id's kind (ids past the graph's table: an event's new terms).
    ``known``: the ids the base may hold are below it (an event's new terms are at or past
    it: the base is not searched for their triples).
    """

    __slots__ = ("added", "base", "by_o", "by_s", "kind", "known", "removed")

    def __init__(self, base: TripleSet, kind: Callable[[int], int], known: int = 1 << 62) -> None:
        self.base = base
        self.kind = kind
        self.known = known
        self.added: set[IdTriple] = set()
        self.by_s: dict[tuple[int, int], list[int]] = {}
        self.by_o: dict[tuple[int, int], list[int]] = {}
        self.removed: set[IdTriple] = set()

    def has(self, p: int, s: int, o: int) -> bool:
        t = (s, p, o)
        if t in self.added:
            return True
        if s >= self.known or o >= self.known:
            return False
        return t not in self.removed and self.base.has(p, s, o)

    def objects(self, p: int, s: int) -> list[int]:
        found = self.base.objects(p, s) if s < self.known else []
        if self.removed:
            removed = self.removed
            found = [o for o in found if (s, p, o) not in removed]
        extra = self.by_s.get((p, s))
        return found + extra if extra else found

    def subjects(self, p: int, o: int) -> list[int]:
        found = self.base.subjects(p, o) if o < self.known else []
        if self.removed:
            removed = self.removed
            found = [s for s in found if (s, p, o) not in removed]
        extra = self.by_o.get((p, o))
        return found + extra if extra else found

    def put(self, t: IdTriple) -> None:
        """Add ``t`` (not present) locally."""
        if t in self.removed:
            self.removed.discard(t)
            return
        self.added.add(t)
        s, p, o = t
        self.by_s.setdefault((p, s), []).append(o)
        self.by_o.setdefault((p, o), []).append(s)

    def drop(self, t: IdTriple) -> None:
        """Remove ``t`` (present) locally."""
        if t in self.added:
            self.added.discard(t)
            s, p, o = t
            self.by_s[(p, s)].remove(o)
            self.by_o[(p, o)].remove(s)
        else:
            self.removed.add(t)


class Reasoner:
    """The rules of :class:`~semps.graph.rules.IdRules` applied to a :class:`Working`."""

    def __init__(self, rules: IdRules, work: Working, *, deadline: float | None = None) -> None:
        self.rules = rules
        self.work = work
        self.type = rules.type
        self.deadline = deadline  # a time.monotonic() past which Overtime

    def _clock(self, done: int) -> None:
        if (
            self.deadline is not None
            and done % _CLOCK_EVERY == 0
            and time.monotonic() > self.deadline
        ):
            raise Overtime

    # -- forward: what a triple gives -------------------------------------------------------

    def consequences(self, s: int, p: int, o: int, emit: Callable[[IdTriple], None]) -> None:
        """Emit every triple one rule derives from ``(s, p, o)`` with the working state's
        other triples (each may already be there)."""
        r, w, t = self.rules, self.work, self.type
        literal = w.kind(o) == LITERAL
        if p == t and not literal:
            for d in r.classes.get(o, ()):
                emit((s, t, d))
            for rest, q in r.svf_by_filler.get(o, ()):
                for x in w.subjects(q, s):
                    emit((x, t, rest))
            inters = r.inter_of.get(o)
            if inters:
                types = set(w.objects(t, s))  # (one lookup for every member checked)
                for inter in inters:
                    if all(m == o or m in types for m in r.members[inter]):
                        emit((s, t, inter))
            for q, v in r.class_values.get(o, ()):
                emit((s, q, v))
            for q, target in r.avf_by_class.get(o, ()):
                for y in w.objects(q, s):
                    if w.kind(y) != LITERAL:
                        emit((y, t, target))
            return
        for q, inverted in r.props.get(p, ()):
            if not inverted:
                emit((s, q, o))
            elif not literal:
                emit((o, q, s))
        for c in r.domains.get(p, ()):
            emit((s, t, c))
        for rest in r.has_value.get((p, o), ()):
            emit((s, t, rest))
        for rest, filler in r.svf.get(p, ()):
            if filler == ANY or (not literal and w.has(t, o, filler)):
                emit((s, t, rest))
        if literal:
            return
        for c in r.ranges.get(p, ()):
            emit((o, t, c))
        for rest, target in r.avf.get(p, ()):
            if w.has(t, s, rest):
                emit((o, t, target))
        if p in r.transitive:
            for a in w.subjects(p, s):
                emit((a, p, o))
            for b in w.objects(p, o):
                emit((s, p, b))

    def add(self, triples: Iterable[IdTriple], limit: int) -> list[IdTriple]:
        """Close ``triples`` into the working state semi-naively; the triples that were
        not there before, in the order they were found (the given ones first).

        Raises:
            TooMany: more than ``limit`` triples would be new (found as soon as it is).
            Overtime: past the deadline.
        """
        w, t = self.work, self.type
        new: list[IdTriple] = []
        todo = list(triples)
        todo.reverse()
        push = todo.append
        #: Each subject's types, read once (a class's ancestors are checked one by one).
        types_of: dict[int, set[int]] = {}
        while todo:
            triple = todo.pop()
            if triple[1] == t:
                types = types_of.get(triple[0])
                if types is None:
                    types = types_of[triple[0]] = set(w.objects(t, triple[0]))
                if triple[2] in types:
                    continue
                types.add(triple[2])
            elif w.has(triple[1], triple[0], triple[2]):
                continue
            w.put(triple)
            new.append(triple)
            if len(new) > limit:
                raise TooMany(limit)
            self._clock(len(new))
            self.consequences(*triple, push)
        return new

    # -- deletion: DRed ---------------------------------------------------------------------

    def delete(
        self, doomed: Iterable[IdTriple], keeps: Callable[[IdTriple], bool], limit: int
    ) -> tuple[list[IdTriple], list[IdTriple]]:
        """Remove ``doomed`` (triples no longer asserted) and what depended on them.

        ``keeps(t)`` is true for an asserted triple that stays (never over-deleted).
        Returns ``(removed, re_added)``: the triples taken out of the working state, and
        those put back because they are still derived (a triple in both is unchanged).

        Raises:
            TooMany: more than ``limit`` triples would be over-deleted or re-added.
        """
        over = self._over_delete(doomed, keeps, limit)
        w = self.work
        for triple in over:
            w.drop(triple)
        back = [t for t in over if self._derivable(*t)]
        return over, self.add(back, limit)

    def _over_delete(
        self, doomed: Iterable[IdTriple], keeps: Callable[[IdTriple], bool], limit: int
    ) -> list[IdTriple]:
        """Every triple a doomed triple was used to derive, transitively (over the old
        closure: the working state is unchanged while this runs)."""
        w = self.work
        found: dict[IdTriple, None] = {}
        todo = [t for t in doomed if w.has(t[1], t[0], t[2])]
        push = todo.append
        while todo:
            triple = todo.pop()
            if triple in found:
                continue
            found[triple] = None
            if len(found) > limit:
                raise TooMany(limit)
            self._clock(len(found))
            self.consequences(
                *triple,
                lambda t: (
                    None if t in found or keeps(t) or not w.has(t[1], t[0], t[2]) else push(t)
                ),
            )
        return list(found)

    def _derivable(self, s: int, p: int, o: int) -> bool:
        """Whether one rule gives ``(s, p, o)`` from the working state (the reverse of
        :meth:`consequences`)."""
        r, w, t = self.rules, self.work, self.type
        if p == t and w.kind(o) != LITERAL:
            return self._derivable_type(s, o)
        for q, inverted in r.implied_by.get(p, ()):
            if w.has(q, o, s) if inverted else w.has(q, s, o):
                return True
        for rest in r.has_value.get((p, o), ()):
            if w.has(t, s, rest):
                return True
        if p in r.transitive:
            middle = set(w.objects(p, s))
            if middle and any(m in middle for m in w.subjects(p, o)):
                return True
        return False

    def _derivable_type(self, x: int, c: int) -> bool:
        r, w, t = self.rules, self.work, self.type
        types = w.objects(t, x)
        below = r.below.get(c)
        if below and not set(below).isdisjoint(types):
            return True
        for p in r.domain_of.get(c, ()):
            if w.objects(p, x):
                return True
        for p in r.range_of.get(c, ()):
            if w.subjects(p, x):
                return True
        for p, v in r.class_values.get(c, ()):
            if w.has(p, x, v):
                return True
        members = r.members.get(c)
        if members and members <= set(types):
            return True
        for p, filler in r.svf_of.get(c, ()):
            for y in w.objects(p, x):
                if filler == ANY or w.has(t, y, filler):
                    return True
        for rest, p in r.avf_to.get(c, ()):
            for w_node in w.subjects(p, x):
                if w.has(t, w_node, rest):
                    return True
        return False
