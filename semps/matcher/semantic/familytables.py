"""The semantic index's families as arrays for the compiled families' pass
(:mod:`.familyjoin`): :class:`FamilyTables`, per index (rebuilt when its families change),
and :class:`TermFacts`, what the pass reads of each term seen (numbers kept across
events)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.matcher.semantic.compiled import ANY_KEY
from semps.matcher.semantic.family import FUNCTIONS, STRING_FN_CODES, Family, integer_value
from semps.terms import XSD_STRING, Literal

__all__ = ["MEMO_SIZE", "MEMO_TEXT", "FamilyTables", "TermFacts", "family_tables"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: The needles found in values of at most MEMO_TEXT characters are kept for later events
#: (:attr:`~.family.Needles.found`), MEMO_SIZE values at most; as many terms' facts.
MEMO_TEXT, MEMO_SIZE = 256, 8192


class FamilyTables(NamedTuple):
    """An index's families as arrays, by family number (see ``family_join_runs``)."""

    #: The binding tables families join, numbered: a property (every pair of it), or
    #: ``(property, subject or STAR, object or STAR)`` (the pairs with those constants).
    props: dict[str | tuple[str, Term, Term], int]
    #: Per property: whether its subjects, its objects are read by a string template.
    string_sites: dict[str, tuple[bool, bool]]
    #: The properties of every binding table in ``props``; those of tables with constants.
    joined: frozenset[str]
    keyed: frozenset[str]
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
    props: dict[str | tuple[str, Term, Term], int] = {}
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
                for prop, key, mode, s_var, o_var, _ in family.bare.plan:
                    assert s_var is not None and o_var is not None, "constants have columns"
                    # A binding table with a constant end is a "property" of its own.
                    name = prop if key == ANY_KEY else (prop, *key)
                    steps.append((props.setdefault(name, len(props)), mode, col[s_var], col[o_var]))
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
        frozenset(p if type(p) is str else p[0] for p in props),
        frozenset(p[0] for p in props if type(p) is tuple),
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


class TermFacts:
    """What the compiled pass reads of a term, as columns by term number: its number
    among the index's constants (``tid``, -1 for none), its integer value (``ival``, 0 for
    none), whether it has one (``isint``), whether it is a plain string (``isstr``); and
    by ``term * FUNCTIONS + string function``, for the current event's strings, whether their
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
        self.known: BoolArray = np.zeros(8 * FUNCTIONS, dtype=np.bool_)
        self.hit_lo: IntArray = np.zeros(8 * FUNCTIONS, dtype=np.int64)
        self.hit_hi: IntArray = np.zeros(8 * FUNCTIONS, dtype=np.int64)

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
        """The needles of string function and term ``k`` (``term * FUNCTIONS + function``) are
        ``hits[lo:hi]`` of this event."""
        self.known[k] = True
        self.hit_lo[k] = lo
        self.hit_hi[k] = hi
        self._dirty.append(k)


def _doubled(column: npt.NDArray[Any]) -> npt.NDArray[Any]:
    grown = np.zeros(2 * len(column), dtype=column.dtype)
    grown[: len(column)] = column
    return grown
