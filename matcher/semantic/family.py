"""Families: shapes that differ only in their FILTER constants, counted together.

Subscriptions such as ``?x ex:age ?v FILTER(?v = 31)`` for many values share everything
but the constant. Their *family* is the query with each filter constant replaced by a
parameter. Per event, a family's candidates are counted with one join of the patterns
without the filters (the filters only select among its solutions) and one vectorised pass
of every member's filters over those solutions, instead of one verification per member.

Only simple forms enter a family (one connected component, no late filters, every filter
built from ``&&``/``||`` of a variable compared with an integer constant and
``CONTAINS``/``STRSTARTS``/``STRENDS`` of a variable and a plain string constant). The
vectorised pass covers solutions whose filtered values are integers (numeric literals of
integral value) or plain strings; on anything else, or when the join runs out of budget,
:func:`family_counts` returns ``None`` and the members are verified one by one, so the
answers are those of :func:`~semps.matcher.semantic.verify.verify`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.ingest.sparql import typed
from semps.matcher.semantic.compiled import (
    STAR,
    CompiledSubscription,
    Component,
    Pattern,
    join_order,
    semi_join,
)
from semps.terms import XSD_STRING, Literal

BoolMatrix = npt.NDArray[np.bool_]
Template = tuple[Any, ...]

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_STRING_FNS: dict[str, Callable[[str, str], bool]] = {
    "CONTAINS": lambda a, b: b in a,
    "STRSTARTS": str.startswith,
    "STRENDS": str.endswith,
}
_INT_LIMIT = 2**62


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


class Members:
    """A family's members' parameters, one array per parameter (members by row): term
    numbers for pattern constants (``eq``), integers (``int``), strings (``str``)."""

    def __init__(self, family: Family) -> None:
        self.kinds = _param_kinds(family.templates)
        self.size = 0
        self.arrays: list[Any] = [
            np.zeros(4, dtype=object if kind == "str" else np.int64) for kind in self.kinds
        ]
        self.free: list[int] = []

    def add(self, params: tuple[object, ...], term_id: Callable[[Term], int]) -> int:
        """Store a member's parameters; its row."""
        row = self.free.pop() if self.free else self.size
        if row == self.size:
            self.size += 1
            if row == len(self.arrays[0]):
                self.arrays = [np.resize(a, 2 * len(a)) for a in self.arrays]
        for j, (kind, value) in enumerate(zip(self.kinds, params, strict=True)):
            self.arrays[j][row] = term_id(value) if kind == "eq" else value  # type: ignore[arg-type]
        return row

    def remove(self, row: int) -> None:
        """Forget a member (its row is reused)."""
        self.free.append(row)


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
    patterns = []
    for p in sub.patterns:
        s_var, o_var = p.s_var, p.o_var
        if s_var is None:
            s_var = _fresh(len(params))
            params.append(p.key[0])
            templates.append(("eq", s_var, len(params) - 1))
        if o_var is None:
            o_var = _fresh(len(params))
            params.append(p.key[1])
            templates.append(("eq", o_var, len(params) - 1))
        patterns.append(Pattern(p.prop, (STAR, STAR), s_var, o_var))
    for f in sub.filters:
        ast = getattr(f, "ast", None)
        template = _template(ast, params) if type(ast) is tuple else None
        if template is None:
            return None
        templates.append(template)
    if not templates:
        return None
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


def _new_family(key: tuple[Any, ...]) -> Family:
    patterns, templates, projection, distinct, ask = key
    plan, _ = join_order(patterns, ())
    columns = tuple(dict.fromkeys(v for step in plan for v in (step[3], step[4]) if v))
    bare = Component(plan, (), columns, semi_join(plan), tuple(() for _ in plan), ())
    projected = tuple(columns.index(v) for v in projection)
    return Family(bare, columns, templates, projected, distinct, ask)


def _fresh(n: int) -> str:
    """A variable name no query can spell (the parser's names never hold a space)."""
    return f" k{n}"


def _template(ast: tuple[Any, ...], params: list[object]) -> Template | None:
    kind = ast[0]
    if kind in ("and", "or") and len(ast) == 2 and type(ast[1]) in (list, tuple):
        parts = [_template(a, params) if type(a) is tuple else None for a in ast[1]]
        if not parts or any(p is None for p in parts):
            return None
        return (kind, tuple(parts))
    if kind == "cmp" and len(ast) == 4 and ast[1] in _OPS:
        op, left, right = ast[1], ast[2], ast[3]
        if _is(left, "var") and _is(right, "term"):
            return _cmp(op, left[1], right[1], params)
        if _is(left, "term") and _is(right, "var"):
            return _cmp(_FLIP[op], right[1], left[1], params)
        return None
    if kind == "call" and len(ast) == 3 and ast[1] in _STRING_FNS and len(ast[2]) == 2:
        a, b = ast[2]
        if _is(a, "var") and _is(b, "term") and type(b[1]) is Literal and b[1][1] == XSD_STRING:
            params.append(b[1][0])
            return ("str", ast[1], a[1], len(params) - 1)
    return None


def _is(node: object, kind: str) -> bool:
    return type(node) is tuple and len(node) == 2 and node[0] == kind


def _cmp(op: str, name: str, constant: Term, params: list[object]) -> Template | None:
    value = _integer(constant)
    if value is None:
        return None
    params.append(value)
    return ("cmp", op, name, len(params) - 1)


def _integer(term: Term) -> int | None:
    """The term's value when it is a number of integral value (as the general comparison
    reads it), else ``None``."""
    if type(term) is str:
        return None
    found = _INTEGERS.get(term, _UNKNOWN)
    if found is _UNKNOWN:
        if len(_INTEGERS) >= 65536:
            _INTEGERS.clear()
        found = _INTEGERS[term] = _read_integer(term)
    return found  # type: ignore[return-value]


_INTEGERS: dict[Term, int | None] = {}  # bounded: cleared when full
_UNKNOWN = object()


def _read_integer(term: Term) -> int | None:
    kind, value = typed(term)
    if kind != "num" or not isinstance(value, Decimal) or value != value.to_integral_value():
        return None
    number = int(value)
    return number if -_INT_LIMIT < number < _INT_LIMIT else None


def family_counts(
    family: Family,
    members: Members,
    member_rows: npt.NDArray[np.int64],
    rows: Sequence[tuple[Term | None, ...]],
    columns: dict[tuple[str, str], Any],
) -> npt.NDArray[np.int64] | None:
    """The solution counts of the members at ``member_rows`` over ``rows`` (the bare
    component's solutions), or ``None`` when some filtered value is outside what the
    vectorised pass covers. ``columns`` caches the rows' columns (families with one bare
    component share it); it starts as :func:`new_columns`."""
    n = len(rows)
    if not n:
        return np.zeros(len(member_rows), dtype=np.int64)
    params = _Params(members, member_rows)
    masks = []
    for template in family.templates:
        mask = _evaluate(template, family, params, rows, columns)
        if mask is None:
            return None
        masks.append(mask)
    passing = masks[0]
    for mask in masks[1:]:
        passing = passing & mask
    if family.ask or (family.distinct and not family.projected):
        return passing.any(axis=1).astype(np.int64)  # type: ignore[return-value]
    if family.distinct:
        groups: dict[object, int] = {}
        key = itemgetter(*family.projected)
        ids = [groups.setdefault(key(r), len(groups)) for r in rows]
        if len(groups) < n:
            onehot = np.zeros((n, len(groups)), dtype=np.int64)
            onehot[np.arange(n), ids] = 1
            return ((passing.astype(np.int64) @ onehot) > 0).sum(axis=1)  # type: ignore[no-any-return]
    return passing.sum(axis=1)  # type: ignore[no-any-return]


def new_columns(term_ids: dict[Term, int]) -> dict[tuple[str, str], Any]:
    """An empty column cache for :func:`family_counts`; ``term_ids`` numbers the pattern
    constants."""
    return {("", "terms"): term_ids}


class _Params:
    """The parameters of some members, gathered per parameter on first use."""

    def __init__(self, members: Members, rows: npt.NDArray[np.int64]) -> None:
        self.members = members
        self.rows = rows
        self.cache: dict[int, Any] = {}

    def __getitem__(self, j: int) -> Any:
        found = self.cache.get(j)
        if found is None:
            found = self.cache[j] = self.members.arrays[j][self.rows]
        return found


def _evaluate(
    template: Template,
    family: Family,
    params: _Params,
    rows: Sequence[tuple[Term | None, ...]],
    columns: dict[tuple[str, str], Any],
) -> BoolMatrix | None:
    kind = template[0]
    if kind in ("and", "or"):
        out = None
        for part in template[1]:
            mask = _evaluate(part, family, params, rows, columns)
            if mask is None:
                return None
            out = mask if out is None else (out & mask if kind == "and" else out | mask)
        return out
    if kind == "eq":
        _, name, at = template
        ids = _term_ids(name, family, rows, columns)
        return ids[None, :] == params[at][:, None]  # type: ignore[no-any-return]
    if kind == "cmp":
        _, op, name, at = template
        values = _column(name, "int", family, rows, columns)
        if values is None:
            return None
        return _OPS[op](values[None, :], params[at][:, None])  # type: ignore[no-any-return]
    _, fn_name, name, at = template
    texts = _column(name, "str", family, rows, columns)
    if texts is None:
        return None
    fn = _STRING_FNS[fn_name]
    return np.array([[fn(t, p) for t in texts] for p in params[at]], dtype=np.bool_)


def _term_ids(
    name: str,
    family: Family,
    rows: Sequence[tuple[Term | None, ...]],
    columns: dict[tuple[str, str], Any],
) -> Any:
    """A variable's values over the rows as the numbers of the pattern constants they
    equal (-1 for none); cached per call."""
    cached = columns.get((name, "ids"))
    if cached is not None:
        return cached
    at = family.columns.index(name)
    numbers = columns["", "terms"]
    get = numbers.get
    out = np.array([get(t, -1) for t in map(itemgetter(at), rows)], dtype=np.int64)
    columns[name, "ids"] = out
    return out


def _column(
    name: str,
    kind: str,
    family: Family,
    rows: Sequence[tuple[Term | None, ...]],
    columns: dict[tuple[str, str], Any],
) -> Any:
    """A variable's values over the rows as int64 (``int``) or plain strings (``str``),
    or ``None`` if one is not of that kind; cached per call."""
    if (name, kind) in columns:
        return columns[name, kind]
    at = family.columns.index(name)
    out: Any
    if kind == "int":
        numbers = [_integer(r[at]) for r in rows]  # type: ignore[arg-type]
        if any(x is None for x in numbers):
            return None
        out = np.array(numbers, dtype=np.int64)
    else:
        texts = [r[at] for r in rows]
        if not all(type(t) is Literal and t[1] == XSD_STRING for t in texts):
            return None
        out = [t[0] for t in texts]  # type: ignore[index]
    columns[name, kind] = out
    return out
