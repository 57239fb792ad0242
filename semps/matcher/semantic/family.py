"""Families: shapes that differ only in their FILTER constants, counted together.

Subscriptions such as ``?x ex:age ?v FILTER(?v = 31)`` for many values share everything
but the constant. Their *family* is the query with each filter constant replaced by a
parameter. Per event, a family's candidates are counted with one join of the patterns
without the filters (the filters only select among its solutions) and one pass of every
member's filters (:func:`program_of`) over those solutions, both compiled
(:mod:`.familyjoin`), instead of one verification per member (:mod:`.count`).

Only simple forms enter a family (one connected component, no late filters, every filter
built from ``&&``/``||`` of a variable compared with a numeric constant of at most six
decimal places and ``CONTAINS``/``STRSTARTS``/``STRENDS`` of a variable and a plain string
constant). The compiled pass covers solutions whose filtered values are such numbers
(compared exactly, as integers in millionths: :func:`integer_value`) or plain strings; on
anything else, or when the join runs out of budget,
the members are verified one by one, so the answers are those of
:func:`~semps.matcher.semantic.verify.verify`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.ingest.sparql import typed
from semps.ingest.sparql.filters import Expression
from semps.matcher.semantic.codes import AND, COMPARISONS, END, EQ, MASK, OR
from semps.matcher.semantic.compiled import (
    ANY_KEY,
    CompiledSubscription,
    Component,
    NPNKey,
    Pattern,
    join_order,
    semi_join,
)
from semps.matcher.semantic.fastfilter import FLIP, STRING_FNS
from semps.terms import XSD_STRING, Literal

Template = tuple[Any, ...]

_INT_LIMIT = 2**62  # scaled values past it are not covered


@dataclass(frozen=True, slots=True)
class Family:
    """What a family's members share: the filterless component whose rows bind
    ``columns``, the filter templates, and the projection and form."""

    bare: Component
    columns: tuple[str, ...]
    templates: tuple[Template, ...]
    projected: tuple[int, ...]  # positions in ``columns`` of the projected variables
    distinct: bool
    ask: bool
    #: The templates as a postfix program for the compiled pass (:func:`program_of`).
    program: Any = field(default=None, compare=False)
    #: The row columns the program reads: (variable, ``"ids"`` or ``"int"``).
    inputs: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    #: The string templates, evaluated in Python into masks the program reads.
    strings: tuple[Template, ...] = field(default=(), compare=False)


class ParamTable:
    """The parameters of every member of an index's families as integers, one row per
    member (its parameters side by side: one cache line read per member in the compiled
    pass): term numbers for pattern constants and strings, integers for comparisons."""

    def __init__(self) -> None:
        self.ints = np.zeros((16, 1), dtype=np.int64)
        self.size = 0
        self.free: list[int] = []

    def column(self, values: Sequence[int]) -> int:
        """Store one member's parameters; its number (its row)."""
        row = self.free.pop() if self.free else self.size
        if row == self.size:
            self.size += 1
        rows, width = self.ints.shape
        if row >= rows or len(values) > width:
            grown = np.zeros((max(rows, 2 * row), max(width, len(values))), dtype=np.int64)
            grown[:rows, :width] = self.ints
            self.ints = grown
        ints = self.ints
        for j, value in enumerate(values):
            ints[row, j] = value
        return row

    def release(self, row: int) -> None:
        """Forget a member (its row is reused)."""
        self.ints[row] = 0
        self.free.append(row)


#: The string functions a family's templates may use, by their number in the compiled pass.
STRING_FN_CODES = {"CONTAINS": 0, "STRSTARTS": 1, "STRENDS": 2, "REGEX": 3}
#: How many (the compiled pass reads a term's needles at ``term * FUNCTIONS + function``).
FUNCTIONS = 4
REGEX = 3


def regex_needle(pattern: str, flags: str) -> str:
    """A ``REGEX`` template's parameter as one constant: an IRI no event can hold (control
    characters are not allowed in IRIs), numbered among the index's constants."""
    return f"\x00regex\x00{flags}\x00{pattern}"


def regex_parts(needle: str) -> tuple[str, str]:
    """A ``REGEX`` template's parameter (:func:`regex_needle`) as (pattern, flags)."""
    _, _, flags, pattern = needle.split("\x00", 3)
    return pattern, flags


class Needles:
    """The distinct string parameters (needles, by term number) of every family member of
    an index, per string function, with how many members use each; and the needles found
    in the values seen lately (:attr:`found`, by function and value: values repeat from
    event to event), until a new needle comes."""

    def __init__(self) -> None:
        self.uses: tuple[dict[int, int], ...] = tuple({} for _ in range(FUNCTIONS))
        self._strings: list[list[tuple[int, str]] | None] = [None] * FUNCTIONS
        #: By (function, value): the sorted numbers of the needles found in the value
        #: (others may be among them). Bounded: cleared when full, and by a new needle.
        self.found: dict[tuple[int, str], list[int]] = {}
        self._regexes: tuple[object, list[tuple[int, str, str]]] = (None, [])

    def add(self, fn: int, needle: int) -> None:
        uses = self.uses[fn]
        if needle not in uses:
            self._strings[fn] = None
            self.found.clear()
        uses[needle] = uses.get(needle, 0) + 1

    def remove(self, fn: int, needle: int) -> None:
        uses = self.uses[fn]
        uses[needle] -= 1
        if not uses[needle]:
            del uses[needle]
            self._strings[fn] = None

    def regexes(self, terms: Sequence[Term]) -> list[tuple[int, str, str]]:
        """The distinct ``REGEX`` needles as (number, pattern, flags), by number, until
        they change."""
        strings = self.strings(REGEX, terms)
        of, found = self._regexes
        if of is not strings:
            found = [(n, *regex_parts(s)) for n, s in strings]
            self._regexes = (strings, found)
        return found

    def strings(self, fn: int, terms: Sequence[Term]) -> list[tuple[int, str]]:
        """The distinct needles of string function ``fn`` as (number, string), by
        number (``terms`` by number: the index's constants), until they change."""
        found = self._strings[fn]
        if found is None:
            found = self._strings[fn] = [(n, terms[n]) for n in sorted(self.uses[fn])]  # type: ignore[misc]
        return found


class Members:
    """A family's members: their parameters' kinds; the parameters themselves are rows
    of the :class:`ParamTable` (strings by their number, as pattern constants), and the
    string ones are counted in the index's :class:`Needles`."""

    def __init__(self, family: Family, table: ParamTable, needles: Needles) -> None:
        self.kinds = _param_kinds(family.templates)
        self.table = table
        self.needles = needles
        #: (parameter, string function number) of each string template.
        self._strings = tuple((t[3], STRING_FN_CODES[t[1]]) for t in family.strings)

    def add(self, params: tuple[object, ...], term_id: Callable[[Term], int]) -> int:
        """Store a member's parameters; its row."""
        values = [
            v if k == "int" else term_id(v)  # type: ignore[arg-type]
            for k, v in zip(self.kinds, params, strict=True)
        ]
        for at, fn in self._strings:
            self.needles.add(fn, values[at])  # type: ignore[arg-type]
        return self.table.column(values)  # type: ignore[arg-type]

    def remove(self, row: int) -> None:
        """Forget a member."""
        for at, fn in self._strings:
            self.needles.remove(fn, int(self.table.ints[row, at]))
        self.table.release(row)


def _param_kinds(templates: Sequence[Template]) -> tuple[str, ...]:
    found: dict[int, str] = {}
    stack = list(templates)
    while stack:
        t = stack.pop()
        if t[0] in ("and", "or"):
            stack.extend(t[1])
        elif t[0] == "eq":
            found[t[2]] = "eq"
        elif t[0] == "cmp":
            found[t[3]] = "int"
        else:
            found[t[3]] = "str"
    return tuple(found[j] for j in range(len(found)))


def family_of(sub: CompiledSubscription) -> tuple[Family, tuple[object, ...]] | None:
    """The subscription's family and its parameters (its pattern constants, then its
    filter constants, in order), or ``None`` when it is not of a form families cover.

    A pattern's constant subject or object becomes a fresh variable that the member
    selects by term equality (what the binding table's lookup by constant does), so
    ``?x a ex:Student`` and ``?x a ex:Course`` fall in one family whose join reads every
    typed node once."""
    if len(sub.components) != 1 or sub.components[0].late_filters:
        return None
    templates: list[Template] = []
    params: list[object] = []
    patterns: list[tuple[str, NPNKey, str, str]] = []
    # Constants as parameters widen the family's join: ``?x a ?k`` reads every type of
    # every node (a node has one per class above its own), and two such patterns multiply.
    # With more than PARAM_CONSTANTS constant ends, the constants stay in the join (read
    # by their binding table, as verification does): smaller joins, narrower families.
    keep = sum((p.s_var is None) + (p.o_var is None) for p in sub.patterns) > PARAM_CONSTANTS
    for p in sub.patterns:
        s_var, o_var = p.s_var, p.o_var
        npn = ANY_KEY
        if keep and (s_var is None or o_var is None):
            npn = p.key
            s_var = s_var or f" c{len(patterns)}s"  # a column no query can name
            o_var = o_var or f" c{len(patterns)}o"
        if s_var is None:
            s_var = _fresh(len(params))
            params.append(p.key[0])
            templates.append(("eq", s_var, len(params) - 1))
        if o_var is None:
            o_var = _fresh(len(params))
            params.append(p.key[1])
            templates.append(("eq", o_var, len(params) - 1))
        patterns.append((p.prop, npn, s_var, o_var))  # plain tuples: hashed in C
    for f in sub.filters:
        template, constants = _filter_template(f, len(params))
        if template is None:
            return None
        templates.append(template)
        params.extend(constants)
    if not templates and not keep:
        return None  # one shape, counted once already: no family to share
    key = (tuple(patterns), tuple(templates), sub.components[0].projection, sub.distinct, sub.ask)
    family = _FAMILIES.get(key)
    if family is None:
        family = _new_family(key)
        if len(_FAMILIES) >= 65536:
            _FAMILIES.clear()
        _FAMILIES[key] = family
    return family, tuple(params)


#: Families by pattern structure, templates, projection and form (registration reuses
#: the join plan of a family it has seen). Bounded: cleared when full.
_FAMILIES: dict[tuple[Any, ...], Family] = {}
_BARES: dict[Component, Component] = {}  # bounded likewise


def _new_family(key: tuple[Any, ...]) -> Family:
    shapes, templates, projection, distinct, ask = key
    patterns = tuple(Pattern(prop, key, s, o) for prop, key, s, o in shapes)
    plan, _ = join_order(patterns, ())
    columns = tuple(dict.fromkeys(v for step in plan for v in (step[3], step[4]) if v))
    bare = Component(plan, (), columns, semi_join(plan), tuple(() for _ in plan), ())
    if len(_BARES) >= 65536:
        _BARES.clear()
    bare = _BARES.setdefault(bare, bare)  # one object per join: families share it per event
    projected = tuple(columns.index(v) for v in projection)
    program, inputs, strings = program_of(templates)
    return Family(bare, columns, templates, projected, distinct, ask, program, inputs, strings)


def program_of(
    templates: Sequence[Template],
) -> tuple[npt.NDArray[np.int64], tuple[tuple[str, str], ...], tuple[Template, ...]]:
    """The templates (all of which must hold) as a program of ``(code, a, b)`` rows: each
    template in postfix, then ``END`` (a row fails at the first template that is false:
    the pattern constants' templates come first, and most rows fail there); the row
    columns it reads (``a`` of ``EQ`` and the comparisons), and the string templates
    (``a`` of ``MASK``); ``b`` is the parameter compared with.

    Example:
        >>> prog, inputs, _ = program_of([("eq", "x", 1), ("cmp", "<", "v", 0)])
        >>> prog.tolist(), inputs
        ([[0, 0, 1], [10, 0, 0], [3, 1, 0], [10, 0, 0]], (('x', 'ids'), ('v', 'int')))
    """
    code: list[tuple[int, int, int]] = []
    inputs: dict[tuple[str, str], int] = {}
    strings: list[Template] = []
    for t in templates:
        _emit(t, code, inputs, strings)
        code.append((END, 0, 0))
    return np.array(code, dtype=np.int64).reshape(-1, 3), tuple(inputs), tuple(strings)


def _emit(
    t: Template,
    code: list[tuple[int, int, int]],
    inputs: dict[tuple[str, str], int],
    strings: list[Template],
) -> None:
    """One template in postfix onto ``code`` (a module function, not a closure calling
    itself: that would be a reference cycle per family, left for the cyclic GC, which
    ``semps match`` pauses while it registers)."""
    if t[0] in ("and", "or"):
        for part in t[1]:
            _emit(part, code, inputs, strings)
        code.append((AND if t[0] == "and" else OR, len(t[1]), 0))
    elif t[0] == "eq":
        code.append((EQ, inputs.setdefault((t[1], "ids"), len(inputs)), t[2]))
    elif t[0] == "cmp":
        code.append((COMPARISONS[t[1]], inputs.setdefault((t[2], "int"), len(inputs)), t[3]))
    else:
        strings.append(t)
        code.append((MASK, len(strings) - 1, t[3]))


def _fresh(n: int) -> str:
    """A variable name no query can spell (the parser's names never hold a space)."""
    return _FRESH[n] if n < len(_FRESH) else f" k{n}"


_FRESH = tuple(f" k{n}" for n in range(64))

#: Most constant ends of a subscription's patterns that become parameters of its family
#: (past it, none does: they stay in the family's join).
PARAM_CONSTANTS = 1


def _filter_template(f: object, offset: int) -> tuple[Template | None, tuple[object, ...]]:
    """A FILTER's template, its parameters numbered from ``offset``, and those parameters
    (``None`` for a filter no family covers). Kept by filter and offset for the small
    ones (a FILTER shared by subscriptions, as :mod:`semps.ingest.sparql` builds them, is
    read once); bounded: cleared when full."""
    key = (f, offset) if type(f) is Expression else None
    found = _FILTER_TEMPLATES.get(key) if key is not None else None
    if found is None:
        ast = getattr(f, "ast", None)
        params: list[object] = [None] * offset  # the template numbers from offset
        template = _template(ast, params) if type(ast) is tuple else None
        found = (template, tuple(params[offset:]))
        small = len(found[1]) <= 8 and sum(len(p) for p in found[1] if type(p) is str) <= 256
        if key is not None and template is not None and small:
            if len(_FILTER_TEMPLATES) >= 8192:
                _FILTER_TEMPLATES.clear()
            _FILTER_TEMPLATES[key] = found
    return found


_FILTER_TEMPLATES: dict[tuple[Expression, int], tuple[Template | None, tuple[object, ...]]] = {}


def _template(ast: tuple[Any, ...], params: list[object]) -> Template | None:
    kind = ast[0]
    if kind in ("and", "or") and len(ast) == 2 and type(ast[1]) in (list, tuple):
        parts = [_template(a, params) if type(a) is tuple else None for a in ast[1]]
        if not parts or any(p is None for p in parts):
            return None
        return (kind, tuple(parts))
    if kind == "cmp" and len(ast) == 4 and ast[1] in COMPARISONS:
        op, left, right = ast[1], ast[2], ast[3]
        if _is(left, "var") and _is(right, "term"):
            return _cmp(op, left[1], right[1], params)
        if _is(left, "term") and _is(right, "var"):
            return _cmp(FLIP[op], right[1], left[1], params)
        return None
    if kind == "call" and len(ast) == 3 and ast[1] == "REGEX" and len(ast[2]) in (2, 3):
        a, *rest = ast[2]
        if _is(a, "var") and all(_is(b, "term") and _plain(b[1]) for b in rest):
            flags = rest[1][1][0] if len(rest) == 2 else ""
            params.append(regex_needle(rest[0][1][0], flags))
            return ("str", "REGEX", a[1], len(params) - 1)
        return None
    if kind == "call" and len(ast) == 3 and ast[1] in STRING_FNS and len(ast[2]) == 2:
        a, b = ast[2]
        if _is(a, "var") and _is(b, "term") and type(b[1]) is Literal and b[1][1] == XSD_STRING:
            params.append(b[1][0])
            return ("str", ast[1], a[1], len(params) - 1)
    return None


def _plain(term: object) -> bool:
    return type(term) is Literal and term[1] == XSD_STRING and not term[2]


def _is(node: object, kind: str) -> bool:
    return type(node) is tuple and len(node) == 2 and node[0] == kind


def _cmp(op: str, name: str, constant: Term, params: list[object]) -> Template | None:
    value = integer_value(constant)
    if value is None:
        return None
    params.append(value)
    return ("cmp", op, name, len(params) - 1)


def integer_value(term: Term) -> int | None:
    """The term's value as an exact integer in millionths (:data:`SCALE`) when it is a
    number (as the general comparison reads it) of at most six decimal places and within
    the compiled pass's range, else ``None``: comparing these integers is comparing the
    values, exactly (``"2.5"^^xsd:decimal`` is 2,500,000; ``3`` and ``3.0`` are equal)."""
    if type(term) is str:
        return None
    found = _INTEGERS.get(term, _UNKNOWN)
    if found is _UNKNOWN:
        if len(_INTEGERS) >= 65536:
            _INTEGERS.clear()
        found = _INTEGERS[term] = _read_integer(term)
    return found  # type: ignore[return-value]


#: Values are compared in the compiled pass as integers in units of 1 / SCALE.
SCALE = 10**6

_INTEGERS: dict[Term, int | None] = {}  # bounded: cleared when full
_UNKNOWN = object()


def _read_integer(term: Term) -> int | None:
    kind, value = typed(term)
    if kind != "num" or not isinstance(value, Decimal) or not value.is_finite():
        return None
    if len(value.as_tuple().digits) > 18:  # past the range anyway; and the product is exact
        return None
    scaled = value * SCALE
    if scaled != scaled.to_integral_value():
        return None
    number = int(scaled)
    return number if -_INT_LIMIT < number < _INT_LIMIT else None
