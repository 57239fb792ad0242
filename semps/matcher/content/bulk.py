"""Many JSON subscriptions at once: validated and flattened in bulk (the CLI's loading path).

:func:`parse_json_many` takes decoded JSON documents (what ``semps content match`` reads
from a subscriptions file) and returns them as flat columns for
:meth:`~semps.matcher.content.index.CompiledIndex.add_many`. The common shape (an object
with ``id`` and ``constraints``, numeric or string-equality constraints on distinct
attributes) is checked with C-level passes over all documents at once; every document that
does not fit it exactly (an ``interface``, a repeated attribute, a wrong type, a missing
key, ...) goes through :func:`~semps.matcher.content.parse.subscription_from_json`, so the
answers and the error of the first bad document are exactly the one-by-one path's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np

from semps.errors import SubscriptionError
from semps.matcher.content._bulk_kernels import rows_with_repeats
from semps.matcher.content.parse import subscription_from_json

__all__ = ["ParsedSubscriptions", "parse_json_many"]

_OPS = {"between": 0, ">=": 1, "<=": 2, "=": 3}
_FLOAT, _INT, _STR, _OTHER = 0, 1, 2, 9
_TYPES = {float: _FLOAT, int: _INT, str: _STR}


@dataclass(frozen=True, slots=True)
class ParsedSubscriptions:
    """Subscriptions as flat columns: one merged condition per (subscription, attribute).

    Attributes:
        ids: subscription ids.
        starts: ``len(ids) + 1`` CSR offsets into the condition columns.
        names: attribute names; ``attr`` indexes them.
        attr: ``int32`` attribute per condition.
        lows: closed interval lows (``-inf`` when open); 0 for strings.
        highs: closed interval highs (``inf`` when open); 0 for strings.
        strings: condition position -> the string it must equal.
    """

    ids: list[str]
    starts: np.ndarray
    names: list[str]
    attr: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    strings: dict[int, str]

    def __len__(self) -> int:
        return len(self.ids)


def parse_json_many(
    docs: Sequence[object],
) -> tuple[ParsedSubscriptions, tuple[int, SubscriptionError] | None]:
    """Validate and flatten ``docs`` (decoded JSON subscriptions, ids given).

    Returns the subscriptions of the documents before the first invalid one, and that
    document's position with the error :func:`subscription_from_json` raises for it (or
    ``None`` when all are valid).

    Example:
        >>> ok, bad = parse_json_many([
        ...     {"id": "s1", "constraints": [{"attr": "a", "op": ">=", "value": 1}]},
        ...     {"id": "s2", "constraints": [{"attr": "c", "op": "=", "value": "x"}]},
        ...     {"id": "s3", "constraints": [{"attr": "a", "op": "<=", "value": True}]}])
        >>> ok.ids, ok.lows.tolist(), ok.strings, bad[0]
        (['s1', 's2'], [1.0, 0.0], {1: 'x'}, 2)
        >>> str(bad[1])
        'constraints[0]: a <=: the value must be a finite number or a string'
    """
    fast = _Fast(docs)
    odd = fast.suspects()
    slow: list[tuple[int, str, dict[str, tuple[float, float] | str]]] = []
    error: tuple[int, SubscriptionError] | None = None
    for i in odd.tolist():  # the exact path, in document order
        try:
            sub = subscription_from_json(docs[i])
        except SubscriptionError as exc:
            error = (i, exc)
            break
        slow.append((i, sub.id, sub.conditions()))
    end = error[0] if error else len(docs)
    return fast.assemble(odd, slow, end), error


class _Fast:
    """The C-level passes over a list of documents (see the module doc)."""

    def __init__(self, docs: Sequence[Any]) -> None:
        self.docs = docs
        n = len(docs)
        self.bad_doc = np.zeros(n, np.bool_)
        shaped = set(map(type, docs)) == {dict} and set(map(len, docs)) == {2}
        good: Sequence[Any] = docs
        if not shaped:
            self.bad_doc |= np.array([type(d) is not dict or len(d) != 2 for d in docs], np.bool_)
            good = [d if not b else {} for d, b in zip(docs, self.bad_doc.tolist(), strict=True)]
        get: Any = dict.get
        self.ids: list[Any] = list(map(get, good, repeat("id")))
        cons: list[Any] = list(map(get, good, repeat("constraints")))
        id_ok = set(map(type, self.ids)) == {str} and "" not in self.ids
        con_ok = set(map(type, cons)) == {list}
        if not (id_ok and con_ok):
            self.bad_doc |= np.array(
                [type(i) is not str or not i or type(c) is not list
                 for i, c in zip(self.ids, cons, strict=True)], np.bool_,
            )  # fmt: skip
            cons = [c if type(c) is list else [] for c in cons]
        counts = np.fromiter(map(len, cons), np.int64, count=n)
        self.bad_doc |= counts == 0
        self.starts = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=self.starts[1:])
        flat: list[Any] = list(chain.from_iterable(cons))
        self.row = np.repeat(np.arange(n, dtype=np.int64), counts)
        self._constraints(flat)

    def _constraints(self, flat: list[Any]) -> None:
        m = len(flat)
        bad = np.zeros(m, np.bool_)
        get: Any = dict.get
        try:
            ops: list[Any] = list(map(get, flat, repeat("op")))
        except TypeError:  # some constraint is not an object
            bad |= np.array([type(c) is not dict for c in flat], np.bool_)
            flat = [c if type(c) is dict else {} for c in flat]
            ops = list(map(get, flat, repeat("op")))
        op = _op_codes(ops)
        bad |= op == 9
        between = op == 0
        uniform = {4} if between.all() else {3} if not between.any() else None
        if uniform is None or set(map(len, flat)) != uniform:
            nkeys = np.fromiter(map(len, flat), np.int64, count=m)
            bad |= nkeys != np.where(op == 0, 4, 3)
        attrs: list[Any] = list(map(get, flat, repeat("attr")))
        try:  # checking the distinct names checks them all (a non-string stays a key)
            index = dict.fromkeys(attrs)
            named = all(type(a) is str and a for a in index)
        except TypeError:  # an unhashable "attr"
            named = False
        if not named:
            bad |= np.array([type(a) is not str or not a for a in attrs], np.bool_)
            attrs = [a if type(a) is str and a else "\x00" for a in attrs]
            index = dict.fromkeys(attrs)
        # Keys the operators cannot have are None without a pass (their docs are bad anyway).
        absent: list[Any] = [None] * m
        value = absent if uniform == {4} else list(map(get, flat, repeat("value")))
        low = absent if uniform == {3} else list(map(get, flat, repeat("low")))
        high = absent if uniform == {3} else list(map(get, flat, repeat("high")))
        tv, tl, th = (_type_codes(x) for x in (value, low, high))
        number = (tv == _FLOAT) | (tv == _INT)
        bad |= np.where(
            between,
            ~(((tl == _FLOAT) | (tl == _INT)) & ((th == _FLOAT) | (th == _INT))),
            ~(number | ((tv == _STR) & (op == 3))),
        )
        self.is_string = (tv == _STR) & (op == 3) & ~bad
        v, lo, hi = (_floats(x, t) for x, t in ((value, tv), (low, tl), (high, th)))
        given_lo = np.where(between, lo, np.where(op == 2, 0.0, v))
        given_hi = np.where(between, hi, np.where(op == 1, 0.0, v))
        with np.errstate(invalid="ignore"):
            bad |= ~(np.isfinite(given_lo) & np.isfinite(given_hi)) & ~self.is_string
            bad |= between & (lo > hi)
        self.lows = np.where(between, lo, np.where(op == 2, -np.inf, v))
        self.highs = np.where(between, hi, np.where(op == 1, np.inf, v))
        self.lows[self.is_string] = 0.0
        self.highs[self.is_string] = 0.0
        self.values = value
        for i, name in enumerate(index):
            index[name] = i
        self.names = list(index)
        self.attr = np.fromiter(map(index.__getitem__, attrs), np.int32, count=m)
        self.bad_constraint = bad

    def suspects(self) -> np.ndarray:
        """Documents the exact path must read, ascending."""
        bad = self.bad_doc.copy()
        bad[self.row[self.bad_constraint]] = True
        bad |= rows_with_repeats(self.starts, self.attr, len(self.names))
        return np.flatnonzero(bad)

    def assemble(
        self,
        odd: np.ndarray,
        slow: list[tuple[int, str, dict[str, tuple[float, float] | str]]],
        end: int,
    ) -> ParsedSubscriptions:
        """The fast documents before ``end`` plus the exact path's ones."""
        keep = np.ones(len(self.docs), np.bool_)
        keep[odd] = False
        keep[end:] = False
        rows = np.flatnonzero(keep)
        counts = np.diff(self.starts)[rows]
        take = np.repeat(self.starts[rows] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        take += np.arange(len(take), dtype=np.int64)
        ids = [self.ids[i] for i in rows.tolist()]
        attr, lows, highs = self.attr[take], self.lows[take], self.highs[take]
        where = np.flatnonzero(self.is_string[take])
        strings = {int(p): self.values[int(take[p])] for p in where}
        names = self.names
        extra_attr: list[int] = []
        extra_lo: list[float] = []
        extra_hi: list[float] = []
        sizes = counts.tolist()
        position = len(take)
        lookup = {name: i for i, name in enumerate(names)}
        for _, sub_id, conditions in slow:
            ids.append(sub_id)
            sizes.append(len(conditions))
            for name, cond in conditions.items():
                if name not in lookup:
                    lookup[name] = len(names)
                    names.append(name)
                extra_attr.append(lookup[name])
                if isinstance(cond, str):
                    strings[position] = cond
                    extra_lo.append(0.0)
                    extra_hi.append(0.0)
                else:
                    extra_lo.append(cond[0])
                    extra_hi.append(cond[1])
                position += 1
        starts = np.zeros(len(ids) + 1, np.int64)
        np.cumsum(np.array(sizes, np.int64), out=starts[1:])
        return ParsedSubscriptions(
            ids,
            starts,
            names,
            np.concatenate([attr, np.array(extra_attr, np.int32)]),
            np.concatenate([lows, np.array(extra_lo, np.float64)]),
            np.concatenate([highs, np.array(extra_hi, np.float64)]),
            strings,
        )


def _op_codes(ops: list[Any]) -> np.ndarray:
    """Per constraint, its operator's code (9: not an operator)."""
    try:
        kinds = set(ops)
    except TypeError:  # an unhashable "op"
        ops = [o if type(o) is str else "" for o in ops]
        kinds = set(ops)
    if len(kinds) == 1:
        return np.full(len(ops), _OPS.get(kinds.pop(), 9), np.int8)
    return np.fromiter(map(_OPS.get, ops, repeat(9)), np.int8, count=len(ops))


def _type_codes(values: list[Any]) -> np.ndarray:
    """Per value, float, int, str or other (absent keys are ``None``: other)."""
    kinds = set(map(type, values))
    if len(kinds) == 1:
        return np.full(len(values), _TYPES.get(kinds.pop(), _OTHER), np.int8)
    return np.fromiter(
        map(_TYPES.get, map(type, values), repeat(_OTHER)),
        np.int8,
        count=len(values),
    )


def _floats(values: list[Any], codes: np.ndarray) -> np.ndarray:
    """The numbers of ``values`` as doubles (NaN where not a number, inf past the range)."""
    numeric = (codes == _FLOAT) | (codes == _INT)
    if not (codes == _STR).any():
        try:  # None (an absent key) becomes NaN; other non-numbers are masked below
            out = np.array(values, np.float64)
        except (TypeError, ValueError, OverflowError):
            pass
        else:
            out[~numeric] = np.nan
            return out
    out = np.full(len(values), np.nan)
    for i in np.flatnonzero(numeric).tolist():
        try:
            out[i] = float(values[i])
        except OverflowError:
            out[i] = np.inf
    return out
