"""The closure of many triples at once, vectorised: the rules as NumPy joins over term ids.

A bulk load (a building model, a campus) adds hundreds of thousands of triples; closing them
one at a time (:mod:`.reason`) would cost microseconds of Python per inferred triple. Here
each rule is a join between the round's new triples and everything known so far, over
sorted ``int64`` keys (``subject << 32 | object`` per predicate, as :mod:`.triples` keeps
them): ``searchsorted`` finds the matching ranges, ``repeat`` expands them. Rounds run
semi-naively (only the previous round's new triples are joined) until one adds nothing, so
loading into a non-empty graph costs what the new triples cause, not a recompute.

The rules and their reading are those of :class:`~semps.graph.reason.Reasoner` (the tests
hold the two to the same closures).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt

from semps.graph.rules import ANY, IdRules
from semps.graph.terms import LITERAL
from semps.graph.triples import MASK, IntArray, swapped, unique

U8Array = npt.NDArray[np.uint8]
_EMPTY = np.zeros(0, dtype=np.int64)
#: Triples by predicate id: sorted ``s << 32 | o`` keys.
Keyed = Mapping[int, IntArray]


#: Rows one step of the transitive join materialises at most (then they are made unique
#: and counted before the next step: memory stays near the bound, not the join's size).
CHUNK_ROWS = 1 << 20
#: The key under which :meth:`BulkCloser._round` lists the type triples found by other
#: rules than cax-sco (not a predicate id: those are never negative).
_OPENED = -1


class BulkTooMany(Exception):
    """The closure grew past one of the closer's limits (``limit`` triples: new ones, or
    ``changed`` ones, those not in the closure it is compared with)."""

    def __init__(self, limit: int, changed: bool = False) -> None:
        self.limit = limit
        self.changed = changed
        super().__init__(limit)


class BulkOvertime(Exception):
    """The closure was still running at the closer's deadline."""


class _Table:
    """A rule table ``key -> rows of values`` as CSR arrays (keys sorted)."""

    def __init__(self, mapping: Mapping[int, tuple[object, ...]], width: int) -> None:
        keys = sorted(mapping)
        self.keys = np.asarray(keys, dtype=np.int64)
        sizes = [len(mapping[k]) for k in keys]
        self.ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.ptr[1:])
        rows = [v for k in keys for v in mapping[k]]
        self.values = np.asarray(rows, dtype=np.int64).reshape(len(rows), width)

    def expand(self, query: IntArray) -> tuple[IntArray, IntArray]:
        """For each ``query[i]`` found, its rows: ``(i repeated, row positions)``."""
        if not len(self.keys) or not len(query):
            return _EMPTY, _EMPTY
        at = np.minimum(self.keys.searchsorted(query), len(self.keys) - 1)
        found = self.keys[at] == query
        starts = np.where(found, self.ptr[at], 0)
        ends = np.where(found, self.ptr[at + 1], 0)
        return ranges(starts, ends)


def ranges(starts: IntArray, ends: IntArray) -> tuple[IntArray, IntArray]:
    """Every position of every ``[starts[i], ends[i])``: ``(i repeated, position)``."""
    lengths = ends - starts
    total = int(lengths.sum())
    if not total:
        return _EMPTY, _EMPTY
    which = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
    offsets = np.cumsum(lengths) - lengths
    positions = np.arange(total, dtype=np.int64) - np.repeat(offsets - starts, lengths)
    return which, positions


def contains(sorted_keys: IntArray, query: IntArray) -> npt.NDArray[np.bool_]:
    """Which of ``query`` are in ``sorted_keys``."""
    if not len(sorted_keys) or not len(query):
        return np.zeros(len(query), dtype=np.bool_)
    at = np.minimum(sorted_keys.searchsorted(query), len(sorted_keys) - 1)
    found: npt.NDArray[np.bool_] = sorted_keys[at] == query
    return found


def merge(a: IntArray, b: IntArray) -> IntArray:
    """Two sorted key arrays without common keys, merged sorted."""
    if not len(a):
        return b
    if not len(b):
        return a
    return np.insert(a, a.searchsorted(b), b)


class BulkCloser:
    """Closes batches of new triples against a base closure (kept, grown, by predicate).

    Args:
        rules: the ontology's tables over ids.
        kinds: each term id's kind (:mod:`.terms`), for every id the triples use.
        base: the closure so far, predicate -> sorted ``so`` keys (not changed).
        tick: called with the count of each round's new triples (progress).
        limit: new triples at most; past it :class:`BulkTooMany` (checked each round, and
            within a transitive join as it grows).
        deadline: a ``time.monotonic()`` past which :class:`BulkOvertime` (checked each
            round and between the steps of a join).
        old: a closure the result is compared with (an ontology edit's): past
            ``old_limit`` new triples not in it, :class:`BulkTooMany` (``changed``).
    """

    def __init__(
        self,
        rules: IdRules,
        kinds: U8Array,
        base: Mapping[int, IntArray],
        tick: Callable[[int], object] | None = None,
        limit: int | None = None,
        *,
        deadline: float | None = None,
        old: Mapping[int, IntArray] | None = None,
        old_limit: int | None = None,
    ) -> None:
        self.r = rules
        self.limit = limit
        self.deadline = deadline
        self.old, self.old_limit = old, old_limit
        self.total = self.changed = 0
        self.literal = kinds == LITERAL
        self.so: dict[int, IntArray] = dict(base)
        self.os: dict[int, IntArray] = {}
        self.tick = tick
        #: The round's new type keys cax-sco has still to expand (:meth:`_ancestors`).
        self.open = _EMPTY
        t = rules.type
        self.t = t
        self.classes = _Table(rules.classes, 1)
        self.svf_by_filler = _Table(rules.svf_by_filler, 2)
        self.inter_of = _Table(rules.inter_of, 1)
        self.members = _Table({k: tuple(sorted(v)) for k, v in rules.members.items()}, 1)
        self.class_values = _Table(rules.class_values, 2)
        self.avf_by_class = _Table(rules.avf_by_class, 2)
        self.props = _Table(
            {p: tuple((q, int(inv)) for q, inv in v) for p, v in rules.props.items()}, 2
        )
        self.domains = _Table(rules.domains, 1)
        self.ranges = _Table(rules.ranges, 1)
        self.has_value = _Table({(p << 32) | v: rs for (p, v), rs in rules.has_value.items()}, 1)
        self.svf = _Table(rules.svf, 2)
        self.avf = _Table(rules.avf, 2)

    def _is_literal(self, ids: IntArray) -> npt.NDArray[np.bool_]:
        inside = ids < len(self.literal)
        out = np.zeros(len(ids), dtype=np.bool_)
        out[inside] = self.literal[ids[inside]]
        return out

    def close(self, new: Mapping[int, IntArray]) -> dict[int, IntArray]:
        """The triples ``new`` (sorted unique keys by predicate) and all they imply that the
        base did not hold, by predicate (sorted); the base grows by them."""
        found: dict[int, list[IntArray]] = {}
        delta = self._fresh({p: [k] for p, k in new.items()})
        self.open = delta.get(self.t, _EMPTY)
        while delta:
            self.total += sum(len(k) for k in delta.values())
            self._check(0)
            self._count_changed(delta)
            for p, k in delta.items():
                self.so[p] = merge(self.so.get(p, _EMPTY), k)
                if p in self.os:  # kept sorted the other way too, once made
                    self.os[p] = merge(self.os[p], np.sort(swapped(k)))
                found.setdefault(p, []).append(k)
            if self.tick is not None:
                self.tick(sum(len(k) for k in delta.values()))
            candidates = self._round(delta)
            opened = candidates.pop(_OPENED, None)
            delta = self._fresh(candidates)
            types = delta.get(self.t, _EMPTY)
            self.open = types[contains(unique(np.concatenate(opened)), types)] if opened else _EMPTY
        return {p: np.sort(np.concatenate(ks)) for p, ks in found.items()}

    def _check(self, pending: int) -> None:
        """Raise when past the deadline, or when the triples found (and ``pending`` sure
        new ones) pass the limit."""
        if self.limit is not None and self.total + pending > self.limit:
            raise BulkTooMany(self.limit)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BulkOvertime

    def _count_changed(self, delta: Mapping[int, IntArray]) -> None:
        if self.old is None or self.old_limit is None:
            return
        for p, k in delta.items():
            self.changed += int((~contains(self.old.get(p, _EMPTY), k)).sum())
        if self.changed > self.old_limit:
            raise BulkTooMany(self.old_limit, changed=True)

    def _fresh(self, candidates: dict[int, list[IntArray]]) -> dict[int, IntArray]:
        """The candidates, unique, without the known ones."""
        out = {}
        for p, parts in candidates.items():
            keys = unique(np.concatenate(parts)) if len(parts) > 1 else unique(parts[0])
            keys = keys[~contains(self.so.get(p, _EMPTY), keys)]
            if len(keys):
                out[p] = keys
        return out

    def _by_object(self, p: int) -> IntArray:
        found = self.os.get(p)
        if found is None:
            found = self.os[p] = np.sort(swapped(self.so.get(p, _EMPTY)))
        return found

    def _lookup(self, table: IntArray, first: IntArray) -> tuple[IntArray, IntArray]:
        """For ``first[i]``, the second halves of ``table``'s keys starting with it:
        ``(i repeated, second)``."""
        if not len(table) or not len(first):
            return _EMPTY, _EMPTY
        starts = table.searchsorted(first << 32)
        ends = table.searchsorted((first + 1) << 32)
        which, at = ranges(starts, ends)
        return which, table[at] & MASK

    def _has_type(self, x: IntArray, c: IntArray) -> npt.NDArray[np.bool_]:
        return contains(self.so.get(self.t, _EMPTY), (x << 32) | c)

    def _round(self, delta: Mapping[int, IntArray]) -> dict[int, list[IntArray]]:
        out: dict[int, list[IntArray]] = {}

        def emit(p: int, s: IntArray, o: IntArray) -> None:
            if len(s):
                k = (s << 32) | o
                out.setdefault(p, []).append(k)
                if p == self.t:  # a type found by another rule than cax-sco: see _ancestors
                    out.setdefault(_OPENED, []).append(k)

        def emit_many(ps: IntArray, s: IntArray, o: IntArray) -> None:
            if not len(ps):
                return
            order = np.argsort(ps, kind="stable")
            ps, s, o = ps[order], s[order], o[order]
            cuts = np.flatnonzero(np.diff(ps)) + 1
            for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(ps)], strict=True):
                emit(int(ps[lo]), s[lo:hi], o[lo:hi])

        for p, k in delta.items():
            s, o = k >> 32, k & MASK
            literal = self._is_literal(o)
            if p == self.t:
                self._ancestors(out)
                self._type_rules(s[~literal], o[~literal], emit, emit_many)
                s, o, literal = s[literal], o[literal], literal[literal]
            self._property_rules(p, s, o, literal, emit, emit_many)
        return out

    def _ancestors(self, out: dict[int, list[IntArray]]) -> None:
        """cax-sco and cax-eqc for the round's *open* new types: those another rule found
        (or the load asserted). A type cax-sco found is closed already: its class's
        ancestors are among the ancestors of the class it came from (the table is
        transitive), emitted in the same round. Expanding only the open ones keeps a
        deep class tree from being walked again from every ancestor."""
        k = self.open
        if not len(k):
            return
        x, c = k >> 32, k & MASK
        i, at = self.classes.expand(c)
        if len(i):
            out.setdefault(self.t, []).append((x[i] << 32) | self.classes.values[at, 0])

    def _type_rules(
        self,
        x: IntArray,
        c: IntArray,
        emit: Callable[[int, IntArray, IntArray], None],
        emit_many: Callable[[IntArray, IntArray, IntArray], None],
    ) -> None:
        t = self.t
        i, at = self.svf_by_filler.expand(c)
        rest, q = self.svf_by_filler.values[at, 0], self.svf_by_filler.values[at, 1]
        for prop in unique(q).tolist():
            sel = q == prop
            j, z = self._lookup(self._by_object(prop), x[i][sel])
            emit(t, z, rest[sel][j])
        self._intersections(x, c, emit)
        i, at = self.class_values.expand(c)
        emit_many(self.class_values.values[at, 0], x[i], self.class_values.values[at, 1])
        i, at = self.avf_by_class.expand(c)
        q, target = self.avf_by_class.values[at, 0], self.avf_by_class.values[at, 1]
        for prop in unique(q).tolist():
            sel = q == prop
            j, y = self._lookup(self.so.get(prop, _EMPTY), x[i][sel])
            keep = ~self._is_literal(y)
            emit(t, y[keep], target[sel][j][keep])

    def _intersections(
        self, x: IntArray, c: IntArray, emit: Callable[[int, IntArray, IntArray], None]
    ) -> None:
        """cls-int1 for the subjects given new types this round: per intersection one of
        whose members is among the new classes, the subjects holding its *rarest* member
        (few, where a common member such as Brick's point tag has thousands), those given a
        new type of a member of some intersection, then each checked for every member. A
        class may be a member of hundreds of intersections: this is what keeps the rule
        from multiplying the round."""
        if not len(x):
            return
        _, at = self.inter_of.expand(unique(c))
        if not len(at):
            return
        touched = unique(x[contains(self.inter_of.keys, c)])  # a new type of a member
        by_object = self._by_object(self.t)
        for inter in unique(self.inter_of.values[at, 0]).tolist():
            members = self.r.members[inter]
            ranked = sorted(members, key=lambda m: self._count_of(by_object, m))
            lo = int(by_object.searchsorted(ranked[0] << 32))
            hi = int(by_object.searchsorted((ranked[0] + 1) << 32))
            if lo == hi:
                continue
            found = by_object[lo:hi] & MASK
            found = found[contains(touched, found)]
            for m in ranked[1:]:
                if not len(found):
                    break
                found = found[self._has_type(found, np.full(len(found), m, dtype=np.int64))]
            if len(found):
                emit(self.t, found, np.full(len(found), inter, dtype=np.int64))

    @staticmethod
    def _count_of(by_object: IntArray, cls: int) -> int:
        return int(by_object.searchsorted((cls + 1) << 32) - by_object.searchsorted(cls << 32))

    def _property_rules(
        self,
        p: int,
        s: IntArray,
        o: IntArray,
        literal: npt.NDArray[np.bool_],
        emit: Callable[[int, IntArray, IntArray], None],
        emit_many: Callable[[IntArray, IntArray, IntArray], None],
    ) -> None:
        if not len(s):
            return
        t, one = self.t, np.full(1, p, dtype=np.int64)
        i, at = self.props.expand(one)
        for q, inverted in self.props.values[at].tolist():
            if inverted:
                emit(q, o[~literal], s[~literal])
            else:
                emit(q, s, o)
        i, at = self.domains.expand(one)
        for c in self.domains.values[at, 0].tolist():
            emit(t, s, np.full(len(s), c, dtype=np.int64))
        i, at = self.has_value.expand((p << 32) | o)
        emit(t, s[i], self.has_value.values[at, 0])
        i, at = self.svf.expand(one)
        for rest, filler in self.svf.values[at].tolist():
            ok = np.ones(len(s), dtype=np.bool_) if filler == ANY else ~literal
            if filler != ANY:
                ok[ok] = self._has_type(o[ok], np.full(int(ok.sum()), filler, dtype=np.int64))
            emit(t, s[ok], np.full(int(ok.sum()), rest, dtype=np.int64))
        s, o = s[~literal], o[~literal]
        if not len(s):
            return
        i, at = self.ranges.expand(one)
        for c in self.ranges.values[at, 0].tolist():
            emit(t, o, np.full(len(o), c, dtype=np.int64))
        i, at = self.avf.expand(one)
        for rest, target in self.avf.values[at].tolist():
            ok = self._has_type(s, np.full(len(s), rest, dtype=np.int64))
            emit(t, o[ok], np.full(int(ok.sum()), target, dtype=np.int64))
        if p in self.r.transitive:
            self._transitive(p, s, o, emit)

    def _transitive(
        self, p: int, s: IntArray, o: IntArray, emit: Callable[[int, IntArray, IntArray], None]
    ) -> None:
        """prp-trp: ``(a p s)`` and ``(s p o)`` give ``(a p o)``; ``(s p o)`` and ``(o p b)``
        give ``(s p b)``. The join may be far larger than what it finds (a chain of n links
        joins n^2 paths with n^2 more): it runs in steps of at most :data:`CHUNK_ROWS`
        rows, each made unique against the closure and what the steps before found, so
        the limit and the deadline stop it as it grows."""
        found = _EMPTY
        known = self.so.get(p, _EMPTY)
        for table, first, second, forward in (
            (self._by_object(p), s, o, False),
            (known, o, s, True),
        ):
            if not len(table):
                continue
            counts = table.searchsorted((first + 1) << 32) - table.searchsorted(first << 32)
            cuts = np.searchsorted(
                np.cumsum(counts), np.arange(1, 1 + int(counts.sum()) // CHUNK_ROWS) * CHUNK_ROWS
            )
            for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(first)], strict=True):
                j, other = self._lookup(table, first[lo:hi])
                keys = (
                    (second[lo:hi][j] << 32) | other
                    if forward
                    else (other << 32) | second[lo:hi][j]
                )
                keys = unique(keys)
                keys = keys[~contains(known, keys)]
                found = np.union1d(found, keys)
                self._check(len(found))
        if len(found):
            emit(p, found >> 32, found & MASK)


def _steps(table: IntArray, first: IntArray) -> list[tuple[int, int]]:
    """``first`` cut in slices whose lookups in ``table`` find about :data:`CHUNK_ROWS`
    rows each (one value finding more is a slice of its own)."""
    counts = table.searchsorted((first + 1) << 32) - table.searchsorted(first << 32)
    bounds = np.cumsum(counts)
    total = int(bounds[-1]) if len(bounds) else 0
    cuts = np.searchsorted(bounds, np.arange(1, 1 + total // CHUNK_ROWS) * CHUNK_ROWS).tolist()
    return list(zip([0, *cuts], [*cuts, len(first)], strict=True))


def closure_of(
    rules: IdRules,
    kinds: U8Array,
    triples: Keyed,
    base: Keyed | None = None,
    tick: Callable[[int], object] | None = None,
    limit: int | None = None,
    *,
    deadline: float | None = None,
    old: Keyed | None = None,
    old_limit: int | None = None,
) -> dict[int, IntArray]:
    """The new closure triples of ``triples`` (by predicate, sorted unique keys) against
    ``base`` (default: nothing), by predicate.

    Example:
        >>> from semps.graph.terms import TermTable
        >>> from semps.graph.rules import id_rules
        >>> from semps.ontology.compile import compile_axioms, SUB_CLASS
        >>> from semps.terms import RDF_TYPE
        >>> terms = TermTable()
        >>> r = id_rules(compile_axioms([("http://ex/A", SUB_CLASS, "http://ex/B")]), terms)
        >>> x = terms.intern("http://ex/x")
        >>> a, b = terms.get("http://ex/A"), terms.get("http://ex/B")
        >>> kinds = np.frombuffer(bytes(terms.kinds), dtype=np.uint8)
        >>> new = closure_of(r, kinds, {r.type: np.asarray([(x << 32) | a])})
        >>> sorted(int(k & MASK) for k in new[r.type]) == sorted([a, b])
        True

    Raises:
        BulkTooMany: more than ``limit`` new triples (or ``old_limit`` not in ``old``).
        BulkOvertime: still running at ``deadline`` (``time.monotonic()``).
    """
    closer = BulkCloser(
        rules, kinds, base or {}, tick, limit, deadline=deadline, old=old, old_limit=old_limit
    )
    return closer.close(triples)
