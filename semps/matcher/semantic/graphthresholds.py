"""Which subscriptions of one template and constants a changed solution passes: their post
filters (:mod:`.graphtemplate`), the comparisons with a numeric constant sorted.

Subscriptions such as "this point's reading above *t*" for many *t* share a template and
its constants and differ only in a FILTER ``?v > t``. Rather than testing each, the
thresholds of each (variable, comparison) are kept sorted, and a solution's value finds
the ones it passes with one binary search: ``?v > t`` holds for the thresholds below the
value, ``?v < t`` for those above. The comparison is the FILTER's own
(:mod:`.fastfilter`'s reading: both numbers as doubles when either is one, else exactly),
so the thresholds are split by kind: doubles (sorted as doubles) and exact numbers (sorted
exactly, and their doubles in the same order for a double value: rounding to a double
keeps the order). A value that is not a number, a NaN, or any other post filter is tested
one subscription at a time with the FILTER itself.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from semps._types import Term
from semps.ingest.sparql import typed
from semps.matcher.semantic.fastfilter import FLIP, check_of

__all__ = ["PostFilters", "comparison_of"]

T = TypeVar("T")
Row = Mapping[str, Term]
_SORTED = frozenset((">", ">=", "<", "<="))


def comparison_of(post: tuple[Any, ...]) -> tuple[str, str, Any] | None:
    """``(variable, operator, number)`` when the post filters are one comparison of a
    variable with a numeric constant (``?v > 26``, ``26 < ?v``) by ``<``, ``>``, ``<=``
    or ``>=``; else ``None``."""
    if len(post) != 1:
        return None
    ast = getattr(post[0], "ast", None)
    if type(ast) is not tuple or len(ast) != 4 or ast[0] != "cmp" or ast[1] not in _SORTED:
        return None
    op, left, right = ast[1], ast[2], ast[3]
    if _is(left, "term") and _is(right, "var"):
        op, left, right = FLIP[op], right, left
    if not (_is(left, "var") and _is(right, "term")):
        return None
    kind, value = typed(right[1])
    if kind != "num" or value != value:  # (a NaN constant: every comparison false)
        return None
    return left[1], op, value


def _is(node: object, kind: str) -> bool:
    return type(node) is tuple and len(node) == 2 and node[0] == kind


class _Sorted(Generic[T]):
    """One (variable, operator)'s thresholds and the items they belong to."""

    def __init__(self, op: str, entries: Iterable[tuple[Any, T]]) -> None:
        self.op = op
        doubles = sorted(((v, i) for v, i in entries if isinstance(v, float)), key=_first)
        exact = sorted(((v, i) for v, i in entries if not isinstance(v, float)), key=_first)
        self.d_values = [v for v, _ in doubles]
        self.d_items = [i for _, i in doubles]
        self.x_values = [v for v, _ in exact]
        self.x_as_double = [float(v) for v in self.x_values]
        self.x_items = [i for _, i in exact]

    def passing(self, value: Any) -> list[T]:
        """The items whose comparison ``value OP threshold`` holds (``value`` a number,
        not a NaN)."""
        if isinstance(value, float):
            return self._cut(self.d_values, self.d_items, value) + self._cut(
                self.x_as_double, self.x_items, value
            )
        return self._cut(self.d_values, self.d_items, float(value)) + self._cut(
            self.x_values, self.x_items, value
        )

    def _cut(self, values: Sequence[Any], items: list[T], value: Any) -> list[T]:
        op = self.op
        if op == ">":  # threshold < value
            return items[: bisect_left(values, value)]
        if op == ">=":
            return items[: bisect_right(values, value)]
        if op == "<":  # threshold > value
            return items[bisect_right(values, value) :]
        return items[bisect_left(values, value) :]


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


class PostFilters(Generic[T]):
    """Items (a template's subscriptions with one set of constants) by their post filters:
    which of them a solution passes.

    Example:
        >>> from semps.ingest.sparql import parse_query
        >>> def post(text):
        ...     return tuple(parse_query("SELECT * { ?s <http://p> ?v " + text + " }").filters)
        >>> items = [("none", ()), ("above 3", post("FILTER(?v > 3)"))]
        >>> pf = PostFilters([*items, ("above 5", post("FILTER(?v > 5)"))])
        >>> sorted(pf.passing({"v": Literal("4", XSD + "integer")}))
        ['above 3', 'none']
    """

    def __init__(self, items: Iterable[tuple[T, tuple[Any, ...]]]) -> None:
        #: Items without post filters: every solution passes.
        self.plain: list[T] = []
        self.sorted: list[tuple[str, _Sorted[T]]] = []
        #: Every item with post filters, and its checks (values the sorted ones cannot take).
        self.checked: list[tuple[T, tuple[Callable[[Row], bool], ...]]] = []
        self.others: list[tuple[T, tuple[Callable[[Row], bool], ...]]] = []
        groups: dict[tuple[str, str], list[tuple[Any, T]]] = {}
        for item, post in items:
            if not post:
                self.plain.append(item)
                continue
            checks = tuple(check_of(f) for f in post)
            self.checked.append((item, checks))
            found = comparison_of(post)
            if found is None:
                self.others.append((item, checks))
            else:
                var, op, value = found
                groups.setdefault((var, op), []).append((value, item))
        for (var, op), entries in groups.items():
            if len(entries) < 4:  # a few: tested one by one
                self.others.extend((i, self._checks_of(i)) for _, i in entries)
            else:
                self.sorted.append((var, _Sorted(op, entries)))

    def _checks_of(self, item: T) -> tuple[Callable[[Row], bool], ...]:
        return next(c for i, c in self.checked if i is item)

    def passing(self, row: Row) -> list[T]:
        """The items ``row`` passes every post filter of."""
        out = list(self.plain)
        for var, thresholds in self.sorted:
            term = row.get(var)
            value = _number(term)
            if value is None:  # not a number, or a NaN: each FILTER itself
                out.extend(i for i, c in self._members(thresholds) if all(f(row) for f in c))
            else:
                out.extend(thresholds.passing(value))
        for item, checks in self.others:
            if all(f(row) for f in checks):
                out.append(item)
        return out

    def _members(self, thresholds: _Sorted[T]) -> list[tuple[T, tuple[Callable[[Row], bool], ...]]]:
        mine = {id(i) for i in (*thresholds.d_items, *thresholds.x_items)}
        return [(i, c) for i, c in self.checked if id(i) in mine]


def _number(term: Term | None) -> Any:
    if term is None or type(term) is str:
        return None
    kind, value = typed(term)
    if kind != "num" or value != value:
        return None
    return value


from semps.terms import XSD, Literal  # noqa: E402,F401  (doctest names)
