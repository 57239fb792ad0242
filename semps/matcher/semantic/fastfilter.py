"""FILTER checks with fast paths for the common forms, exact by construction.

A check is ``check(bindings) -> bool`` with the result of ``Filter.evaluate``. The forms
recognised (a variable compared with a numeric constant, ``CONTAINS``/``STRSTARTS``/
``STRENDS`` of a variable and a plain string constant, and ``&&``/``||`` of those) are
answered directly when the bound term is of the case the fast path covers (a number; a
plain string); any other term, an unbound variable or any other form goes to the filter's
own evaluation. The fast path takes the same values the general one takes
(:func:`~semps.ingest.sparql._values.typed`), so the answers are the same.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from semps._types import Term
from semps.ingest.sparql import typed
from semps.ingest.sparql.model import Filter
from semps.terms import XSD_STRING, Literal

Check = Callable[[Mapping[str, Term]], bool]
_Fast = Callable[[Mapping[str, Term]], Any]  # True, False or _SLOW

_SLOW = object()  # the fast path does not cover this binding
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}
#: The comparison with its operands swapped.
FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
#: The string functions the fast paths cover, on plain strings.
STRING_FNS: dict[str, Callable[[str, str], bool]] = {
    "CONTAINS": lambda a, b: b in a,
    "STRSTARTS": str.startswith,
    "STRENDS": str.endswith,
}


def check_of(f: Filter) -> Check:
    """The filter's check: a fast path when its form is recognised, else its evaluate.

    Example:
        >>> from semps.ingest.sparql import parse_query
        >>> f = parse_query("SELECT * { ?x <http://p> ?v FILTER(?v < 3) }").filters[0]
        >>> check = check_of(f)
        >>> check({"v": Literal("2", XSD + "integer")}), check({"v": "http://iri"})
        (True, False)
    """
    try:
        found = _CACHE.get(f)
    except TypeError:  # an unhashable filter: no caching
        found = None
    if found is not None:
        return found
    check = _check_of(f)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    try:
        _CACHE[f] = check
    except TypeError:
        pass
    return check


#: Checks by filter (filters compare by their syntax tree): subscriptions that share a
#: filter share its check. Bounded: cleared when full.
_CACHE: dict[Filter, Check] = {}
_CACHE_SIZE = 65536


def _check_of(f: Filter) -> Check:
    ast = getattr(f, "ast", None)
    fast = _fast(ast) if type(ast) is tuple else None
    if fast is None:
        return f.evaluate
    slow = f.evaluate

    def check(b: Mapping[str, Term]) -> bool:
        result = fast(b)
        if result is _SLOW:
            return slow(b)
        return result  # type: ignore[no-any-return]

    return check


def _fast(ast: tuple[Any, ...]) -> _Fast | None:
    kind = ast[0]
    if kind in ("and", "or") and len(ast) == 2 and type(ast[1]) in (list, tuple):
        parts = [_fast(a) if type(a) is tuple else None for a in ast[1]]
        if not parts or any(p is None for p in parts):
            return None
        return _junction(kind == "and", parts)  # type: ignore[arg-type]
    if kind == "cmp" and len(ast) == 4 and ast[1] in _OPS:
        op, left, right = ast[1], ast[2], ast[3]
        if _is_var(left) and _is_term(right):
            return _compare(op, left[1], right[1])
        if _is_term(left) and _is_var(right):
            return _compare(FLIP[op], right[1], left[1])
        return None
    if kind == "call" and len(ast) == 3 and ast[1] in STRING_FNS and len(ast[2]) == 2:
        a, b = ast[2]
        if _is_var(a) and _is_term(b):
            return _string(STRING_FNS[ast[1]], a[1], b[1])
    return None


def _is_var(node: object) -> bool:
    return type(node) is tuple and len(node) == 2 and node[0] == "var"


def _is_term(node: object) -> bool:
    return type(node) is tuple and len(node) == 2 and node[0] == "term"


def _junction(conjunction: bool, parts: list[_Fast]) -> _Fast:
    # && is false as soon as one operand is false (whatever the others do), || true as soon
    # as one is true; an operand the fast path does not cover sends the whole to the slow.
    def fn(b: Mapping[str, Term]) -> Any:
        for part in parts:
            result = part(b)
            if result is _SLOW:
                return _SLOW
            if result is not conjunction:
                return result
        return conjunction

    return fn


def _compare(op: str, name: str, constant: Term) -> _Fast | None:
    kind, value = typed(constant)
    if kind != "num":
        return None
    fn = _OPS[op]
    constant_float = isinstance(value, float)

    def compare(b: Mapping[str, Term]) -> Any:
        term = b.get(name)
        if term is None or type(term) is str:
            return _SLOW
        k, v = typed(term)
        if k != "num":
            return _SLOW
        if constant_float or isinstance(v, float):
            return fn(float(v), float(value))
        return fn(v, value)

    return compare


def _string(fn: Callable[[str, str], bool], name: str, constant: Term) -> _Fast | None:
    if type(constant) is not Literal or constant[1] != XSD_STRING:
        return None
    needle = constant[0]

    def call(b: Mapping[str, Term]) -> Any:
        term = b.get(name)
        if type(term) is Literal and term[1] == XSD_STRING:
            return fn(term[0], needle)
        return _SLOW

    return call


from semps.terms import XSD  # noqa: E402,F401  (doctest names)
