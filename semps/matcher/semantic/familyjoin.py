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
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.matcher.semantic._join_kernels import family_join_runs
from semps.matcher.semantic.codes import STAR
from semps.matcher.semantic.family import FUNCTIONS, REGEX, Needles
from semps.matcher.semantic.familytables import MEMO_SIZE, MEMO_TEXT, FamilyTables, TermFacts
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.regextest import holds_all
from semps.matcher.semantic.shapefamilies import ShapeFamilies

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Most steps finding one string's needles (pieces looked up or needles tried); patterns
#: tried on it, for ``REGEX``.
STRING_STEPS, REGEX_STEPS = 4096, 1024


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
    families: ShapeFamilies,
    tables: FamilyTables,
    pairs: EventPairs,
    props: Iterable[str],
    budget: int,
) -> EventTerms:
    """The event's pairs of ``props`` over its terms numbered (by the index's
    :class:`TermFacts`); at most ``budget`` steps in all find the strings' needles."""
    facts = families.term_facts
    term_ids = families.term_ids
    facts.start(term_ids)
    get, add = facts.row.get, facts.add
    ps: list[int] = []
    ss: list[int] = []
    os_: list[int] = []
    by_prop, numbered, keyed = pairs.by_prop, tables.props, tables.keyed
    for prop in props:
        rows = by_prop.get(prop)
        if rows is None:
            continue
        pid = numbered.get(prop)
        with_constants = prop in keyed
        for s, o in rows:
            a = get(s)
            a = add(s, term_ids) if a is None else a
            b = get(o)
            b = add(o, term_ids) if b is None else b
            if pid is not None:
                ps.append(pid)
                ss.append(a)
                os_.append(b)
            if not with_constants:
                continue
            for table in ((prop, STAR, o), (prop, s, STAR), (prop, s, o)):
                k = numbered.get(table)  # the pair is in a binding table with constants
                if k is not None:
                    ps.append(k)
                    ss.append(a)
                    os_.append(b)
    hits = _string_hits(families, tables, pairs, props, facts, budget)
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


def _string_hits(
    families: ShapeFamilies,
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
    needles: Needles = families.needles
    numbered = families.term_ids
    memo = needles.found
    for fn in range(FUNCTIONS):
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
                ids = _needles_in(fn, text, plan[1], numbered, families)
                if len(text) <= MEMO_TEXT:
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[fn, text] = ids
            facts.found(t * FUNCTIONS + fn, len(hits), len(hits) + len(ids))
            hits.extend(ids)
    return np.array(hits, dtype=np.int64)


_NO_HITS: IntArray = np.zeros(0, dtype=np.int64)


def _plan(fn: int, size: int, needles: int) -> tuple[int, bool] | None:
    """How to find the needles of string function ``fn`` in a string of ``size``
    characters among ``needles``: the steps and whether by the string's pieces (else by
    trying each needle), the cheaper way within :data:`STRING_STEPS` (a piece looked up
    costs about twice a needle tried); ``None`` when neither is."""
    if fn == REGEX:  # no pieces to look up: each pattern is tried
        return (needles, False) if needles <= REGEX_STEPS else None
    pieces = size * (size + 1) // 2 + 1 if fn == 0 else size + 1
    by_pieces = pieces <= STRING_STEPS and (2 * pieces <= needles or needles > STRING_STEPS)
    if by_pieces:
        return pieces, True
    return (needles, False) if needles <= STRING_STEPS else None


def _needles_in(
    fn: int, text: str, by_pieces: bool, numbered: dict[Term, int], families: ShapeFamilies
) -> list[int]:
    """The sorted numbers of the needles string function ``fn`` finds in ``text``
    (numbers of other constants may be among them)."""
    if by_pieces:
        get = numbered.get
        return sorted({x for x in map(get, _pieces(fn, text)) if x is not None})
    if fn == REGEX:
        return holds_all(text, families.needles.regexes(families.terms()))
    strings = families.needles.strings(fn, families.terms())
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
    families: ShapeFamilies,
    pairs: EventPairs,
    run_fam: IntArray,
    bounds: IntArray,
    member_cols: IntArray,
    budget: int,
) -> tuple[IntArray, BoolArray]:
    """The counts of the members of the runs (members ``bounds[q]:bounds[q + 1]`` of
    family ``run_fam[q]``), and by run whether it is left to verify one by one."""
    tables = families.tables()
    # The event's pairs of every property a family joins, not only those of the runs'
    # families: as many pairs, or hardly more (the joins never read the others), and
    # cheaper to list than the runs' joins' properties.
    joined = tables.joined
    props = [p for p in pairs.by_prop if p in joined]
    ev = event_terms(families, tables, pairs, props, budget)
    return family_join_runs(
        run_fam,
        bounds,
        member_cols,
        families.params.ints,
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
