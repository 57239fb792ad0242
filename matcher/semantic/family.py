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
from typing import Any

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.ingest.sparql._values import typed
from semps.ingest.terms import XSD_STRING, Literal
from semps.matcher.semantic.compiled import CompiledSubscription, Component

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


def family_of(sub: CompiledSubscription) -> tuple[Family, tuple[object, ...]] | None:
    """The subscription's family and its parameters (the filter constants, in order), or
    ``None`` when it is not of a form families cover."""
    if len(sub.components) != 1 or not sub.filters:
        return None
    (comp,) = sub.components
    if comp.late_filters:
        return None
    templates: list[Template] = []
    params: list[object] = []
    for f in sub.filters:
        ast = getattr(f, "ast", None)
        template = _template(ast, params) if isinstance(ast, tuple) else None
        if template is None:
            return None
        templates.append(template)
    bound = [v for step in comp.plan for v in (step[3], step[4]) if v is not None]
    columns = tuple(dict.fromkeys(bound))
    plan = tuple((*step[:5], ()) for step in comp.plan)
    bare = Component(plan, (), columns, comp.cut, tuple(() for _ in plan), ())
    projected = tuple(columns.index(v) for v in comp.projection)
    return Family(bare, columns, tuple(templates), projected, sub.distinct, sub.ask), tuple(params)


def _template(ast: tuple[Any, ...], params: list[object]) -> Template | None:
    kind = ast[0]
    if kind in ("and", "or") and len(ast) == 2 and isinstance(ast[1], list | tuple):
        parts = [_template(a, params) if isinstance(a, tuple) else None for a in ast[1]]
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
    kind, value = typed(term)
    if kind != "num" or not isinstance(value, Decimal) or value != value.to_integral_value():
        return None
    number = int(value)
    return number if -_INT_LIMIT < number < _INT_LIMIT else None


def family_counts(
    family: Family,
    params: Sequence[tuple[object, ...]],
    rows: list[tuple[Term | None, ...]],
) -> npt.NDArray[np.int64] | None:
    """Each member's solution count over ``rows`` (the bare component's solutions), or
    ``None`` when some filtered value is outside what the vectorised pass covers."""
    n = len(rows)
    if not n:
        return np.zeros(len(params), dtype=np.int64)
    columns: dict[str, tuple[str, object]] = {}
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
        groups: dict[tuple[Term | None, ...], int] = {}
        ids = [groups.setdefault(tuple(r[i] for i in family.projected), len(groups)) for r in rows]
        if len(groups) < n:
            onehot = np.zeros((n, len(groups)), dtype=np.int64)
            onehot[np.arange(n), ids] = 1
            return ((passing.astype(np.int64) @ onehot) > 0).sum(axis=1)  # type: ignore[no-any-return]
    return passing.sum(axis=1)  # type: ignore[no-any-return]


def _evaluate(
    template: Template,
    family: Family,
    params: Sequence[tuple[object, ...]],
    rows: list[tuple[Term | None, ...]],
    columns: dict[str, tuple[str, object]],
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
    if kind == "cmp":
        _, op, name, at = template
        values = _column(name, "int", family, rows, columns)
        if values is None:
            return None
        constants = np.fromiter((p[at] for p in params), dtype=np.int64, count=len(params))
        return _OPS[op](values[None, :], constants[:, None])  # type: ignore[no-any-return]
    _, fn_name, name, at = template
    texts = _column(name, "str", family, rows, columns)
    if texts is None:
        return None
    fn = _STRING_FNS[fn_name]
    return np.array([[fn(t, p[at]) for t in texts] for p in params], dtype=np.bool_)  # type: ignore[arg-type]


def _column(
    name: str,
    kind: str,
    family: Family,
    rows: list[tuple[Term | None, ...]],
    columns: dict[str, tuple[str, object]],
) -> Any:
    """A variable's values over the rows as int64 (``int``) or plain strings (``str``),
    or ``None`` if one is not of that kind; cached per call."""
    cached = columns.get(name)
    if cached is not None and cached[0] == kind:
        return cached[1]
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
    columns[name] = (kind, out)
    return out
