"""The families' pass in compiled code: every family run of one event joined and counted
by one kernel call (``_join_kernels.family_join_runs``), over numbers instead of terms.

Two kinds of tables feed it:

- :class:`FamilyTables`, per index (rebuilt when its families change): each family's join
  (its bare component's plan as ``(property, mode, subject column, object column)`` rows,
  joins shared by families numbered once), program, inputs, string templates and
  projection;
- :class:`EventTerms`, per event: the pairs of the properties families join, with their
  terms numbered (:class:`TermFacts`: numbers kept across events), and per term its number
  among the index's constants, its integer value (if it is one) and, for plain strings at
  a place a string template reads, the needles each string function finds in it.

A string's needles are found by looking its pieces (substrings, prefixes or suffixes) up
among the numbered constants, or by trying each needle of the index on it, whichever is
fewer steps; when both pass :data:`STRING_STEPS`, the string is *unknown* and the runs
that read it are verified one by one (their work bounded by their candidates), as are runs
whose join passes the step budget or whose values are not of the kind compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.matcher.semantic._join_kernels import family_join_runs
from semps.matcher.semantic.family import STRING_FN_CODES, Family, Needles, integer_value
from semps.terms import XSD_STRING, Literal

if TYPE_CHECKING:
    from semps.matcher.semantic.index import EventPairs, SubscriptionIndex

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Most steps finding one string's needles (pieces looked up or needles tried).
STRING_STEPS = 4096
#: The needles found in values of at most MEMO_TEXT characters are kept for later events
#: (:attr:`Needles.found`), MEMO_SIZE values at most.
MEMO_TEXT, MEMO_SIZE = 256, 8192


class FamilyTables(NamedTuple):
    """An index's families as arrays, by family number (see ``family_join_runs``)."""

    props: dict[str, int]  # the properties families join, numbered
    #: Per property: whether its subjects, its objects are read by a string template.
    string_sites: dict[str, tuple[bool, bool]]
    fam_bare: IntArray
    fam_mode: IntArray
    bare_at: IntArray
    steps: IntArray
    width: IntArray
    programs: IntArray
    program_at: IntArray
    inputs_at: IntArray
    inputs: IntArray
    strings_at: IntArray
    strings: IntArray
    proj_at: IntArray
    proj: IntArray


def family_tables(families: dict[int, Family], count: int) -> FamilyTables:
    """The tables of families ``0..count - 1`` (numbers missing from ``families`` get
    empty entries)."""
    props: dict[str, int] = {}
    sites: dict[str, list[bool]] = {}
    bares: dict[object, int] = {}
    fam_bare, fam_mode = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
    bare_at, program_at, inputs_at, strings_at, proj_at = [0], [0], [0], [0], [0]
    width: list[int] = []
    proj: list[int] = []
    steps: list[tuple[int, int, int, int]] = []
    programs: list[list[int]] = []
    inputs: list[tuple[int, int]] = []
    strings: list[tuple[int, int]] = []
    for fid in range(count):
        family = families.get(fid)
        if family is not None:
            col = {v: i for i, v in enumerate(family.columns)}
            b = bares.get(family.bare)
            if b is None:
                b = bares[family.bare] = len(width)
                for prop, _, mode, s_var, o_var, _ in family.bare.plan:
                    assert s_var is not None and o_var is not None, "constants are parameters"
                    steps.append((props.setdefault(prop, len(props)), mode, col[s_var], col[o_var]))
                bare_at.append(len(steps))
                width.append(len(family.columns))
            fam_bare[fid] = b
            if family.ask or (family.distinct and not family.projected):
                fam_mode[fid] = 1
            elif family.distinct:
                fam_mode[fid] = 2
            programs.extend(family.program.tolist())
            inputs.extend((col[name], 0 if kind == "ids" else 1) for name, kind in family.inputs)
            for _, fn_name, name, _ in family.strings:
                strings.append((col[name], STRING_FN_CODES[fn_name]))
                for prop, _, _, s_var, o_var, _ in family.bare.plan:
                    site = sites.setdefault(prop, [False, False])
                    site[0] |= s_var == name
                    site[1] |= o_var == name
            proj.extend(family.projected)
        program_at.append(len(programs))
        inputs_at.append(len(inputs))
        strings_at.append(len(strings))
        proj_at.append(len(proj))
    return FamilyTables(
        props,
        {prop: (s, o) for prop, (s, o) in sites.items()},
        fam_bare,
        fam_mode,
        np.array(bare_at, dtype=np.int64),
        _rows(steps, 4),
        np.array(width, dtype=np.int64),
        _rows(programs, 3),
        np.array(program_at, dtype=np.int64),
        np.array(inputs_at, dtype=np.int64),
        _rows(inputs, 2),
        np.array(strings_at, dtype=np.int64),
        _rows(strings, 2),
        np.array(proj_at, dtype=np.int64),
        np.array(proj, dtype=np.int64),
    )


def _rows(values: Iterable[object], width: int) -> IntArray:
    return np.array(list(values), dtype=np.int64).reshape(-1, width)


class EventTerms(NamedTuple):
    """One event's pairs of the families' properties over its terms numbered, and the
    columns by term number the pass reads (see ``family_join_runs`` and
    :class:`TermFacts`, whose columns these are)."""

    pair_p: IntArray
    pair_s: IntArray
    pair_o: IntArray
    tid: IntArray
    ival: IntArray
    isint: BoolArray
    isstr: BoolArray
    hit_lo: IntArray
    hit_hi: IntArray
    hits: IntArray
    known: BoolArray


def event_terms(
    index: SubscriptionIndex,
    tables: FamilyTables,
    pairs: EventPairs,
    props: Iterable[str],
    budget: int,
) -> EventTerms:
    """The event's pairs of ``props`` over its terms numbered (by the index's
    :class:`TermFacts`); at most ``budget`` steps in all find the strings' needles."""
    facts = index.term_facts
    term_ids = index.term_ids
    facts.start(term_ids)
    get, add = facts.row.get, facts.add
    ps: list[int] = []
    ss: list[int] = []
    os_: list[int] = []
    by_prop, numbered = pairs.by_prop, tables.props
    for prop in props:
        rows = by_prop.get(prop)
        if rows is None:
            continue
        pid = numbered[prop]
        for s, o in rows:
            ps.append(pid)
            a = get(s)
            ss.append(add(s, term_ids) if a is None else a)
            b = get(o)
            os_.append(add(o, term_ids) if b is None else b)
    hits = _string_hits(index, tables, pairs, props, facts, budget)
    return EventTerms(
        np.array(ps, dtype=np.int64),
        np.array(ss, dtype=np.int64),
        np.array(os_, dtype=np.int64),
        facts.tid,
        facts.ival,
        facts.isint,
        facts.isstr,
        facts.hit_lo,
        facts.hit_hi,
        hits,
        facts.known,
    )


class TermFacts:
    """What the compiled pass reads of a term, as columns by term number: its number
    among the index's constants (``tid``, -1 for none), its integer value (``ival``, 0 for
    none), whether it has one (``isint``), whether it is a plain string (``isstr``); and
    by ``term * 3 + string function``, for the current event's strings, whether their
    needles are known and where they are in its ``hits`` (``hit_lo:hit_hi``).

    Terms are numbered on first sight and kept across events (events repeat their nodes
    and values): the pass reads the columns as they are, no per-event copy. They are
    forgotten, before an event, once more than :data:`MEMO_SIZE` are kept or whenever the
    index has numbered a new constant since. Not for concurrent use (one per index, as
    matching an index is).
    """

    def __init__(self) -> None:
        self.row: dict[Term, int] = {}  # by term: its number
        self._numbered = 0  # how many constants the index had numbered when they were kept
        self._dirty: list[int] = []  # ``known`` entries the last event set
        self.tid: IntArray = np.zeros(8, dtype=np.int64)
        self.ival: IntArray = np.zeros(8, dtype=np.int64)
        self.isint: BoolArray = np.zeros(8, dtype=np.bool_)
        self.isstr: BoolArray = np.zeros(8, dtype=np.bool_)
        self.known: BoolArray = np.zeros(24, dtype=np.bool_)
        self.hit_lo: IntArray = np.zeros(24, dtype=np.int64)
        self.hit_hi: IntArray = np.zeros(24, dtype=np.int64)

    def _grow(self) -> None:
        """Room for twice as many terms, what is held kept."""
        self.tid, self.ival = _doubled(self.tid), _doubled(self.ival)
        self.isint, self.isstr = _doubled(self.isint), _doubled(self.isstr)
        self.known = _doubled(self.known)
        self.hit_lo, self.hit_hi = _doubled(self.hit_lo), _doubled(self.hit_hi)

    def start(self, term_ids: dict[Term, int]) -> None:
        """Before an event: the last event's strings forgotten, and every term when the
        index numbered a new constant or too many are kept."""
        known = self.known
        for k in self._dirty:
            known[k] = False
        self._dirty.clear()
        if self._numbered != len(term_ids) or len(self.row) > MEMO_SIZE:
            self.row.clear()
            self._numbered = len(term_ids)

    def add(self, term: Term, term_ids: dict[Term, int]) -> int:
        """Number ``term`` (not numbered yet) and note its facts; its number."""
        n = len(self.row)
        if n == len(self.tid):
            self._grow()
        self.row[term] = n
        value = integer_value(term)
        self.tid[n] = term_ids.get(term, -1)
        self.ival[n] = 0 if value is None else value
        self.isint[n] = value is not None
        self.isstr[n] = type(term) is Literal and term[1] == XSD_STRING
        return n

    def found(self, k: int, lo: int, hi: int) -> None:
        """The needles of string function and term ``k`` (``term * 3 + function``) are
        ``hits[lo:hi]`` of this event."""
        self.known[k] = True
        self.hit_lo[k] = lo
        self.hit_hi[k] = hi
        self._dirty.append(k)


def _doubled(column: npt.NDArray[Any]) -> npt.NDArray[Any]:
    grown = np.zeros(2 * len(column), dtype=column.dtype)
    grown[: len(column)] = column
    return grown


def _string_hits(
    index: SubscriptionIndex,
    tables: FamilyTables,
    pairs: EventPairs,
    props: Iterable[str],
    facts: TermFacts,
    budget: int,
) -> IntArray:
    """The needle numbers found in the event's plain strings at places string templates
    read, each (term, function)'s sorted and noted in ``facts`` (:meth:`TermFacts.found`)
    unless not known (past :data:`STRING_STEPS` for the string, or ``budget`` for them
    all)."""
    texts: dict[int, str] = {}
    sites = tables.string_sites
    row, isstr = facts.row, facts.isstr
    for prop in props:
        where = sites.get(prop)
        if where is None:
            continue
        at_s, at_o = where
        for s, o in pairs.by_prop.get(prop, ()):
            for term, site in ((s, at_s), (o, at_o)):
                if site:
                    t = row[term]
                    if isstr[t]:
                        texts[t] = term[0]
    if not texts:
        return _NO_HITS
    hits: list[int] = []
    needles: Needles = index.needles
    numbered = index.term_ids
    memo = needles.found
    for fn in range(3):
        every = needles.uses[fn]
        if not every:
            continue
        for t, text in texts.items():
            ids = memo.get((fn, text))
            if ids is None:
                plan = _plan(fn, len(text), len(every))
                if plan is None or plan[0] > budget:
                    continue
                budget -= plan[0]
                ids = _needles_in(fn, text, plan[1], numbered, index)
                if len(text) <= MEMO_TEXT:
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[fn, text] = ids
            facts.found(t * 3 + fn, len(hits), len(hits) + len(ids))
            hits.extend(ids)
    return np.array(hits, dtype=np.int64)


_NO_HITS: IntArray = np.zeros(0, dtype=np.int64)


def _plan(fn: int, size: int, needles: int) -> tuple[int, bool] | None:
    """How to find the needles of string function ``fn`` in a string of ``size``
    characters among ``needles``: the steps and whether by the string's pieces (else by
    trying each needle), the cheaper way within :data:`STRING_STEPS` (a piece looked up
    costs about twice a needle tried); ``None`` when neither is."""
    pieces = size * (size + 1) // 2 + 1 if fn == 0 else size + 1
    by_pieces = pieces <= STRING_STEPS and (2 * pieces <= needles or needles > STRING_STEPS)
    if by_pieces:
        return pieces, True
    return (needles, False) if needles <= STRING_STEPS else None


def _needles_in(
    fn: int, text: str, by_pieces: bool, numbered: dict[Term, int], index: SubscriptionIndex
) -> list[int]:
    """The sorted numbers of the needles string function ``fn`` finds in ``text``
    (numbers of other constants may be among them)."""
    if by_pieces:
        get = numbered.get
        return sorted({x for x in map(get, _pieces(fn, text)) if x is not None})
    strings = index.needles.strings(fn, index.terms())
    if fn == 0:
        return [needle for needle, s in strings if s in text]
    if fn == 1:
        return [needle for needle, s in strings if text.startswith(s)]
    return [needle for needle, s in strings if text.endswith(s)]


def _pieces(fn: int, text: str) -> set[str]:
    """The strings ``fn(text, piece)`` holds for (the empty one included)."""
    n = len(text)
    if fn == 0:
        return {text[i:j] for i in range(n + 1) for j in range(i, n + 1)}
    if fn == 1:
        return {text[:j] for j in range(n + 1)}
    return {text[i:] for i in range(n + 1)}


def count_runs(
    index: SubscriptionIndex,
    pairs: EventPairs,
    run_fam: IntArray,
    bounds: IntArray,
    member_cols: IntArray,
    budget: int,
) -> tuple[IntArray, BoolArray]:
    """The counts of the members of the runs (members ``bounds[q]:bounds[q + 1]`` of
    family ``run_fam[q]``), and by run whether it is left to verify one by one."""
    tables = index.family_tables()
    # The event's pairs of every property a family joins, not only those of the runs'
    # families: as many pairs, or hardly more (the joins never read the others), and
    # cheaper to list than the runs' joins' properties.
    numbered = tables.props
    props = [p for p in pairs.by_prop if p in numbered]
    ev = event_terms(index, tables, pairs, props, budget)
    return family_join_runs(
        run_fam,
        bounds,
        member_cols,
        index.params.ints,
        tables.fam_bare,
        tables.fam_mode,
        tables.bare_at,
        tables.steps,
        tables.width,
        tables.programs,
        tables.program_at,
        tables.inputs_at,
        tables.inputs,
        tables.strings_at,
        tables.strings,
        tables.proj_at,
        tables.proj,
        ev.pair_p,
        ev.pair_s,
        ev.pair_o,
        ev.tid,
        ev.ival,
        ev.isint,
        ev.isstr,
        ev.hit_lo,
        ev.hit_hi,
        ev.hits,
        ev.known,
        budget,
    )
