"""SPARQL operator semantics over semps terms, as the W3C test suites specify them: typed
values, comparison, effective boolean value. Errors are :class:`EvalError` (a FILTER treats
them as false).

Values (:func:`typed`): numbers (``Decimal`` for xsd:integer and its derived types and for
xsd:decimal, ``float`` for xsd:double and xsd:float, the latter rounded to single
precision), strings, booleans, dateTimes and dates (with or without a timezone, as
:class:`Instant`), language-tagged strings. A literal of one of those datatypes whose lexical
form is not valid is ill-typed (``bad``); a literal of any other datatype is ``other``.

``=`` and ``!=`` (:func:`compare`) follow SPARQL 1.1 section 17.4.1.7 (RDFterm-equal) the way
the W3C open-world tests resolve it: values of one kind compare by value; two literals of
known, different kinds (a number and a string, a dateTime and a date, a language-tagged
string and anything else) are different; a literal that is ill-typed or of an unknown
datatype equals only itself, and comparing it with another literal is an error (its value
is unknown). A dateTime without a timezone and one with a timezone compare only when the
answer is the same for every timezone (XML Schema's partial order, +/-14:00); otherwise the
comparison is an error.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from semps._types import Term
from semps.terms import (
    RDF_LANGSTRING,
    XSD,
    XSD_DECIMAL,
    XSD_FLOAT_TYPES,
    XSD_INTEGER_TYPES,
    XSD_STRING,
    Literal,
)


class EvalError(Exception):
    """A SPARQL expression error (unbound variable, type error, ...)."""


INTEGER_TYPES = XSD_INTEGER_TYPES
DECIMAL = XSD_DECIMAL
FLOAT_TYPES = XSD_FLOAT_TYPES
NUMERIC_TYPES = INTEGER_TYPES | FLOAT_TYPES | {DECIMAL}
BOOLEAN, DATE, DATETIME = XSD + "boolean", XSD + "date", XSD + "dateTime"
INTEGER, DOUBLE, FLOAT = XSD + "integer", XSD + "double", XSD + "float"

_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DOUBLE_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN")
_DATETIME_RE = re.compile(
    r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?"
)
_DATE_RE = re.compile(r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?")
#: Bounds of the integer types derived from xsd:integer (inclusive; None: unbounded).
_RANGES: dict[str, tuple[int | None, int | None]] = {
    XSD + "nonNegativeInteger": (0, None),
    XSD + "positiveInteger": (1, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-(2**7), 2**7 - 1),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 2**8 - 1),
}
_FOURTEEN_HOURS = dt.timedelta(hours=14)


@dataclass(frozen=True, slots=True)
class Instant:
    """A dateTime (or a date, at its midnight): ``at`` in UTC when ``zoned``, else local
    time with an unknown timezone; ``offset`` is the timezone as written (minutes)."""

    at: dt.datetime
    zoned: bool
    offset: int | None = None


def f32(value: float) -> float:
    """``value`` rounded to single precision (the value space of xsd:float)."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


@lru_cache(maxsize=65536)
def typed(term: Term) -> tuple[str, Any]:
    """(category, Python value) of a term; category ``bad`` for ill-typed literals.

    Example:
        >>> typed(Literal("2", XSD + "integer")), typed(Literal("x", lang="en"))
        (('num', Decimal('2')), ('lang', ('x', 'en')))
    """
    if isinstance(term, str):
        return ("bnode" if term.startswith("_:") else "iri", term)
    lexical, datatype, lang = term
    if lang:
        return ("lang", (lexical, lang))
    if datatype == XSD_STRING:
        return ("str", lexical)
    try:
        return _typed_literal(lexical, datatype)
    except (ValueError, InvalidOperation, OverflowError):
        return ("bad", term)


def _typed_literal(lexical: str, datatype: str) -> tuple[str, Any]:
    text = lexical.strip(" \t\n\r")  # XSD whitespace facet "collapse"
    if datatype in INTEGER_TYPES:
        if not _INTEGER_RE.fullmatch(text):
            raise ValueError(text)
        number = int(text)
        low, high = _RANGES.get(datatype, (None, None))
        if (low is not None and number < low) or (high is not None and number > high):
            raise ValueError(text)
        return ("num", Decimal(number))
    if datatype == DECIMAL:
        if not _DECIMAL_RE.fullmatch(text):
            raise ValueError(text)
        return ("num", Decimal(text))
    if datatype in FLOAT_TYPES:
        if not _DOUBLE_RE.fullmatch(text):
            raise ValueError(text)
        value = float(text)
        return ("num", f32(value) if datatype == FLOAT else value)
    if datatype == BOOLEAN:
        if text not in ("true", "false", "1", "0"):
            raise ValueError(text)
        return ("bool", text in ("true", "1"))
    if datatype == DATETIME:
        return ("dateTime", parse_datetime(text))
    if datatype == DATE:
        return ("date", parse_date(text))
    return ("other", (lexical, datatype))


def _offset(tz: str | None) -> int | None:
    if not tz:
        return None
    if tz == "Z":
        return 0
    hours, minutes = int(tz[1:3]), int(tz[4:6])
    if hours > 14 or minutes > 59 or (hours == 14 and minutes):
        raise ValueError(tz)
    sign = -1 if tz[0] == "-" else 1
    return sign * (hours * 60 + minutes)


def _instant(local: dt.datetime, tz: str | None) -> Instant:
    offset = _offset(tz)
    if offset is None:
        return Instant(local, False)
    return Instant(local - dt.timedelta(minutes=offset), True, offset)


def parse_datetime(text: str) -> Instant:
    """An xsd:dateTime lexical form as an :class:`Instant` (``24:00:00`` is the next
    day's midnight); raises ValueError when it is not one (or outside years 1-9999)."""
    m = _DATETIME_RE.fullmatch(text)
    if m is None:
        raise ValueError(text)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction = m.group(7) or ""
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    next_day = hour == 24
    if next_day:
        if minute or second or micro:
            raise ValueError(text)
        hour = 0
    local = dt.datetime(year, month, day, hour, minute, second, micro)  # noqa: DTZ001
    if next_day:
        local += dt.timedelta(days=1)
    return _instant(local, m.group(8))


def parse_date(text: str) -> Instant:
    """An xsd:date lexical form, as the instant its day starts."""
    m = _DATE_RE.fullmatch(text)
    if m is None:
        raise ValueError(text)
    local = dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)))  # noqa: DTZ001
    return _instant(local, m.group(4))


def ebv(term: Term) -> bool:
    """The effective boolean value of a term (SPARQL 17.2.2): an ill-typed boolean or
    number is false; IRIs, blank nodes, language-tagged strings (rdf:langString, as RDF 1.1
    and Oxigraph read "plain literal"), dates and unknown datatypes are errors."""
    kind, value = typed(term)
    if kind == "bool":
        return bool(value)
    if kind == "num":
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if kind == "str":
        return bool(value != "")
    if kind == "bad" and type(term) is Literal and term.datatype in NUMERIC_TYPES | {BOOLEAN}:
        return False
    raise EvalError("no effective boolean value")


_ORDERED = frozenset({"num", "str", "bool", "dateTime", "date"})
_KNOWN = _ORDERED | {"lang"}


def _instant_order(a: Instant, b: Instant) -> int:
    """-1, 0 or 1; EvalError when a zoned and an unzoned instant are too close to tell."""
    if a.zoned == b.zoned:
        return (a.at > b.at) - (a.at < b.at)
    local, zoned, sign = (a, b, 1) if not a.zoned else (b, a, -1)
    # the unzoned instant lies somewhere in [local - 14h, local + 14h] (in UTC)
    if local.at + _FOURTEEN_HOURS < zoned.at:
        return -sign
    if local.at - _FOURTEEN_HOURS > zoned.at:
        return sign
    raise EvalError("a dateTime with and one without a timezone, too close to order")


def _order(kind: str, x: Any, y: Any) -> int | None:
    """-1, 0, 1 (``None``: unordered, a NaN)."""
    if kind in ("dateTime", "date"):
        return _instant_order(x, y)
    if kind == "num" and (isinstance(x, float) or isinstance(y, float)):
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):
            return None
    return int((x > y) - (x < y))


def compare(op: str, a: Term, b: Term) -> bool:
    """SPARQL relational operator ``op`` (``= != < > <= >=``) on two terms (see the module
    docstring); raises EvalError where SPARQL has a type error."""
    ka, va = typed(a)
    kb, vb = typed(b)
    if ka == kb and ka in _ORDERED:
        order = _order(ka, va, vb)
        if order is None:  # NaN: unequal, unordered
            return op == "!="
        return bool(_OPS[op](order))
    if op not in ("=", "!="):
        raise EvalError(f"cannot order {ka} and {kb}")
    return equal(a, b, ka, kb) == (op == "=")


_OPS = {
    "=": lambda o: o == 0,
    "!=": lambda o: o != 0,
    "<": lambda o: o < 0,
    ">": lambda o: o > 0,
    "<=": lambda o: o <= 0,
    ">=": lambda o: o >= 0,
}


def equal(a: Term, b: Term, ka: str | None = None, kb: str | None = None) -> bool:
    """RDFterm-equal of two terms that are not values of one kind (see the module)."""
    if a == b:
        return True
    if type(a) is not Literal or type(b) is not Literal:
        return False  # an IRI or blank node is only itself
    ka = ka or typed(a)[0]
    kb = kb or typed(b)[0]
    if ka == kb == "lang":
        return False  # not the same term: different text or tag
    if ka == "lang" or kb == "lang":
        return False  # rdf:langString shares its values with no other datatype
    if ka in _KNOWN and kb in _KNOWN:
        if ka == kb:
            order = _order(ka, typed(a)[1], typed(b)[1])
            return order == 0
        return False  # disjoint value spaces
    raise EvalError("the value of an ill-typed literal or an unknown datatype is unknown")


def numeric_type(datatype: str) -> str:
    """The type an arithmetic operand counts as: integer, decimal, float or double."""
    if datatype in INTEGER_TYPES:
        return INTEGER
    return datatype


_RANK = {INTEGER: 0, DECIMAL: 1, FLOAT: 2, DOUBLE: 3}


def promote(a: str, b: str) -> str:
    """The datatype of ``a op b`` for numeric operand types ``a`` and ``b`` (XPath
    promotion: integer -> decimal -> float -> double)."""
    x, y = numeric_type(a), numeric_type(b)
    return x if _RANK[x] >= _RANK[y] else y


def number_literal(value: Decimal | float | int, datatype: str) -> Literal:
    """A numeric value as a literal of ``datatype``, in its canonical lexical form."""
    if datatype in INTEGER_TYPES:
        return Literal(str(int(value)), INTEGER if datatype == INTEGER else datatype)
    if datatype == DECIMAL:
        return Literal(decimal_lexical(Decimal(value)), DECIMAL)
    return Literal(double_lexical(float(value)), datatype)


def decimal_lexical(value: Decimal) -> str:
    """The canonical xsd:decimal form: no exponent, at least one digit after the point."""
    text = format(value, "f")
    if "." not in text:
        return text + ".0"
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


def double_lexical(value: float) -> str:
    """The canonical xsd:double form (``1.0E0``, ``INF``, ``NaN``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0.0E0" if math.copysign(1, value) < 0 else "0.0E0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    power = int(exponent) + len(text) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def string_value(term: Term) -> str:
    """The lexical form of a string literal (simple, xsd:string or language-tagged)."""
    if not isinstance(term, str) and term[1] in (XSD_STRING, RDF_LANGSTRING):
        return term[0]
    raise EvalError("not a string literal")
