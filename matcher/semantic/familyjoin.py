"""The families' pass in compiled code: every family run of one event joined and counted
by one kernel call (``_join_kernels.family_join_runs``), over numbers instead of terms.

Two kinds of tables feed it:

- :class:`FamilyTables`, per index (rebuilt when its families change): each family's join
  (its bare component's plan as ``(property, mode, subject column, object column)`` rows,
  joins shared by families numbered once), program, inputs, string templates and
  projection;
- :class:`EventTerms`, per event: the pairs of the properties families join, with their
  terms numbered for the event, and per term its number among the index's constants, its
  integer value (if it is one) and, for plain strings at a place a string template reads,
  the needles each string function finds in it.

A string's needles are found by looking its pieces (substrings, prefixes or suffixes) up
among the numbered constants, or by trying each needle of the index on it, whichever is
fewer steps; when both pass :data:`STRING_STEPS`, the string is *unknown* and the runs
that read it are verified one by one (their work bounded by their candidates), as are runs
whose join passes the step budget or whose values are not of the kind compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

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
    """One event's pairs of the families' properties over its terms numbered (see
    ``family_join_runs``)."""

    pair_p: IntArray
    pair_s: IntArray
    pair_o: IntArray
    tid: IntArray
    ival: IntArray
    isint: BoolArray
    isstr: BoolArray
    hit_at: IntArray
    hits: IntArray
    known: BoolArray


def event_terms(
    index: SubscriptionIndex,
    tables: FamilyTables,
    pairs: EventPairs,
    props: Iterable[str],
    budget: int,
) -> EventTerms:
    """The event's pairs of ``props`` over its terms numbered; at most ``budget`` steps in
    all find the strings' needles."""
    local: dict[Term, int] = {}
    number = local.setdefault
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
            ss.append(number(s, len(local)))
            os_.append(number(o, len(local)))
    facts = index.term_facts.of(local, index.term_ids)
    isstr = facts[3].astype(np.bool_)
    hit_at, hits, known = _string_hits(index, tables, pairs, props, local, isstr, budget)
    return EventTerms(
        np.array(ps, dtype=np.int64),
        np.array(ss, dtype=np.int64),
        np.array(os_, dtype=np.int64),
        facts[0],
        facts[1],
        facts[2].astype(np.bool_),
        isstr,
        hit_at,
        hits,
        known,
    )


class TermFacts:
    """What the compiled pass reads of a term: its number among the index's constants
    (-1 for none), its integer value (0 for none), whether it has one, whether it is a
    plain string. Kept for up to :data:`MEMO_SIZE` terms (events repeat their nodes and
    values) as columns of one table, forgotten whenever the index numbers a new
    constant."""

    def __init__(self) -> None:
        self._row: dict[Term, int] = {}  # by term: its column in the table
        self._table = np.zeros((4, 8), dtype=np.int64)  # grows by doubling
        self._numbered = 0  # how many constants the index had numbered when they were kept

    def of(self, terms: Iterable[Term], term_ids: dict[Term, int]) -> IntArray:
        """The facts of ``terms`` as four rows (number, value, integer?, string?)."""
        row = self._row
        if self._numbered != len(term_ids) or len(row) > MEMO_SIZE:
            row.clear()
            self._numbered = len(term_ids)
        at = []
        for term in terms:
            found = row.get(term)
            if found is None:
                found = row[term] = len(row)
                if found >= self._table.shape[1]:
                    grown = np.zeros((4, 2 * found), dtype=np.int64)
                    grown[:, :found] = self._table[:, :found]
                    self._table = grown
                value = integer_value(term)
                self._table[:, found] = (
                    term_ids.get(term, -1),
                    0 if value is None else value,
                    value is not None,
                    type(term) is Literal and term[1] == XSD_STRING,
                )
            at.append(found)
        # Rows contiguous, as warm() compiles the pass for (``self._table[:, at]``'s are not).
        return np.take(self._table, at, axis=1)


def _string_hits(
    index: SubscriptionIndex,
    tables: FamilyTables,
    pairs: EventPairs,
    props: Iterable[str],
    local: dict[Term, int],
    isstr: BoolArray,
    budget: int,
) -> tuple[IntArray, IntArray, BoolArray]:
    """By ``term * 3 + function``: where the needle numbers it finds start in ``hits``
    (sorted, ending where the next starts), and whether they are known (not past
    :data:`STRING_STEPS` for the string, nor ``budget`` for them all)."""
    size = 3 * len(local)
    known = np.zeros(size, dtype=np.bool_)
    found: dict[int, list[int]] = {}
    texts: dict[int, str] = {}
    sites = tables.string_sites
    for prop in props:
        where = sites.get(prop)
        if where is None:
            continue
        at_s, at_o = where
        for s, o in pairs.by_prop.get(prop, ()):
            for term, site in ((s, at_s), (o, at_o)):
                if site:
                    t = local[term]
                    if isstr[t]:
                        texts[t] = term[0]
    if texts:
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
                found[t * 3 + fn] = ids
                known[t * 3 + fn] = True
    hit_at = np.zeros(size + 1, dtype=np.int64)
    hits: list[int] = []
    if found:
        for k in sorted(found):
            hit_at[k + 1] = len(found[k])
            hits.extend(found[k])
        np.cumsum(hit_at, out=hit_at)
    return hit_at, np.array(hits, dtype=np.int64), known


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
        ev.hit_at,
        ev.hits,
        ev.known,
        budget,
    )
