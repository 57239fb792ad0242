"""The SPARQL 1.1 built-in functions (section 17.4) over semps terms, with the XSD casts of
:mod:`._casts` (17.5), in one table (:data:`FUNCTIONS`).

Each function takes evaluated argument terms and returns a term or a Python bool, or raises
:class:`EvalError`. ``BOUND``, ``IF``, ``COALESCE``, ``BNODE`` and ``IN`` need the unevaluated
arguments or the solution and live in :mod:`.filters`.

Cost is bounded: a string a function builds (``CONCAT``, ``REPLACE``, ``UCASE``, ...) longer
than :data:`MAX_STRING` characters is an evaluation error, so a subscription cannot make one
event cost more than its own text and the event's literals allow.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import re
import uuid
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any
from urllib.parse import quote, urljoin

from semps._types import Term
from semps.ingest.sparql._casts import CAST_TYPES, cast
from semps.ingest.sparql._regex import compile_regex
from semps.ingest.sparql._values import (
    _DATE_RE,
    _DATETIME_RE,
    DATE,
    DATETIME,
    DECIMAL,
    DOUBLE,
    INTEGER,
    EvalError,
    number_literal,
    numeric_type,
    typed,
)
from semps.terms import RDF_LANGSTRING, XSD, XSD_STRING, Literal

#: The longest string a function may build (characters).
MAX_STRING = 1 << 20

_LANGTAG = re.compile(r"[a-zA-Z]{1,8}(?:-[a-zA-Z0-9]{1,8})*")


def _bounded(text: str) -> str:
    _bounded_size(len(text))
    return text


def _bounded_size(size: int) -> None:
    if size > MAX_STRING:
        msg = f"a string result longer than {MAX_STRING} characters"
        raise EvalError(msg)


def _string(term: Term) -> Literal:
    """A string literal argument (simple, xsd:string or language-tagged)."""
    if type(term) is Literal and term.datatype in (XSD_STRING, RDF_LANGSTRING):
        return term
    raise EvalError("not a string literal")


def _simple(term: Term) -> str:
    """A simple literal / xsd:string argument's text (no language tag)."""
    if type(term) is Literal and term.datatype == XSD_STRING:
        text: str = term.lexical
        return text
    raise EvalError("not a simple literal")


def _like(model: Literal, text: str) -> Literal:
    """``text`` with the language tag (or xsd:string) of ``model``."""
    return Literal(_bounded(text), model.datatype, model.lang)


def _compatible(a: Term, b: Term) -> tuple[Literal, Literal]:
    """Argument-compatible string literals (17.4.3.1.1)."""
    x, y = _string(a), _string(b)
    if y.lang and x.lang != y.lang:
        raise EvalError("incompatible language tags")
    return x, y


# -- terms -----------------------------------------------------------------------------------


def str_(term: Term) -> Term:
    if isinstance(term, Literal):
        return Literal(term.lexical)
    if term.startswith("_:"):
        raise EvalError("STR of a blank node")
    return Literal(term)


def lang(term: Term) -> Term:
    if type(term) is not Literal:
        raise EvalError("LANG of a non-literal")
    return Literal(term.lang or "")


def datatype(term: Term) -> Term:
    if not isinstance(term, Literal):
        raise EvalError("DATATYPE of a non-literal")
    iri: str = term.datatype
    return iri


def lang_matches(tag: Term, pattern: Term) -> bool:
    lang_, want = _simple(tag).lower(), _simple(pattern).lower()
    if want == "*":
        return lang_ != ""
    return lang_ == want or lang_.startswith(want + "-")


def iri(term: Term, base: Term) -> Term:
    """``IRI(x)``: an IRI as is, a simple literal resolved against the query's base."""
    if type(term) is str:
        if term.startswith("_:"):
            raise EvalError("IRI of a blank node")
        return term
    text = _simple(term)
    base_text = base.lexical if type(base) is Literal else ""
    return urljoin(base_text, text) if base_text else text


def strdt(lexical: Term, dtype: Term) -> Term:
    if type(dtype) is not str or dtype.startswith("_:"):
        raise EvalError("STRDT needs a datatype IRI")
    return Literal(_simple(lexical), dtype)


def strlang(lexical: Term, tag: Term) -> Term:
    text, tag_text = _simple(lexical), _simple(tag)
    if not _LANGTAG.fullmatch(tag_text):
        raise EvalError(f"bad language tag {tag_text!r}")
    return Literal(text, RDF_LANGSTRING, tag_text)


# -- strings ---------------------------------------------------------------------------------


def strlen(term: Term) -> Term:
    return Literal(str(len(_string(term).lexical)), INTEGER)


def substr(term: Term, start: Term, length: Term | None = None) -> Term:
    """XPath ``fn:substring``: 1-based, positions rounded, counted in code points."""
    text = _string(term)
    first = _round_half_up(_number(start))
    chars = text.lexical
    if length is None:
        if math.isnan(first):
            return _like(text, "")
        begin = (
            max(int(first), 1) if not math.isinf(first) else (1 if first < 0 else len(chars) + 1)
        )
        return _like(text, chars[begin - 1 :])
    count = _round_half_up(_number(length))
    end = first + count
    if math.isnan(end) or math.isnan(first):
        return _like(text, "")
    low = max(first, 1)
    high = min(end, len(chars) + 1)
    if low >= high:
        return _like(text, "")
    return _like(text, chars[int(low) - 1 : int(high) - 1])


def _number(term: Term) -> float:
    kind, value = typed(term)
    if kind != "num":
        raise EvalError("not a number")
    return float(value)


def _round_half_up(x: float) -> float:
    return x if math.isnan(x) or math.isinf(x) else math.floor(x + 0.5)


def ucase(term: Term) -> Term:
    text = _string(term)
    return _like(text, text.lexical.upper())


def lcase(term: Term) -> Term:
    text = _string(term)
    return _like(text, text.lexical.lower())


def encode_for_uri(term: Term) -> Term:
    return Literal(_bounded(quote(_string(term).lexical, safe="-_.~")))


def contains(a: Term, b: Term) -> bool:
    x, y = _compatible(a, b)
    return y.lexical in x.lexical


def strstarts(a: Term, b: Term) -> bool:
    x, y = _compatible(a, b)
    return bool(x.lexical.startswith(y.lexical))


def strends(a: Term, b: Term) -> bool:
    x, y = _compatible(a, b)
    return bool(x.lexical.endswith(y.lexical))


def strbefore(a: Term, b: Term) -> Term:
    x, y = _compatible(a, b)
    at = x.lexical.find(y.lexical)
    if at < 0:
        return Literal("")
    return _like(x, x.lexical[:at])


def strafter(a: Term, b: Term) -> Term:
    x, y = _compatible(a, b)
    at = x.lexical.find(y.lexical)
    if at < 0:
        return Literal("")
    return _like(x, x.lexical[at + len(y.lexical) :])


def concat(*args: Term) -> Term:
    parts = [_string(a) for a in args]
    langs = {p.lang for p in parts}
    text = _bounded("".join(p.lexical for p in parts))
    if len(langs) == 1 and parts and parts[0].lang:
        return Literal(text, RDF_LANGSTRING, parts[0].lang)
    return Literal(text)


_NO_FLAGS = Literal("")


def regex(text: Term, pattern: Term, flags: Term = _NO_FLAGS) -> bool:
    try:
        compiled = compile_regex(_simple(pattern), _simple(flags))
    except ValueError as exc:  # refused or malformed: an evaluation error
        raise EvalError(str(exc)) from None
    return compiled.search(_string(text).lexical) is not None


_GROUP_REF = re.compile(r"\\([\\$])|\$([0-9]+)|([\\$])")


def replace(text: Term, pattern: Term, replacement: Term, flags: Term = _NO_FLAGS) -> Term:
    """XPath ``fn:replace`` on RE2 (``$N`` refers to a group, ``\\$`` is a dollar)."""
    arg = _string(text)
    template = _simple(replacement)
    try:
        compiled = compile_regex(_simple(pattern), _simple(flags), capture=True)
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    if compiled.search("") is not None:
        raise EvalError("REPLACE with a pattern that matches the empty string")
    for m in _GROUP_REF.finditer(template):
        if m.group(3):
            raise EvalError(f"bad replacement string {template!r}")

    built = [len(arg.lexical)]  # an upper bound of the result so far: checked as it grows

    def expand(m: Any) -> str:
        def one(ref: re.Match[str]) -> str:
            if ref.group(1):
                return ref.group(1)
            number = int(ref.group(2))
            if number > compiled.groups:
                return ""
            return m.group(number) or ""

        text = _GROUP_REF.sub(one, template)
        built[0] += len(text)
        _bounded_size(built[0])
        return text

    return _like(arg, compiled.sub(expand, arg.lexical))


# -- numbers ---------------------------------------------------------------------------------


def _numeric(term: Term) -> tuple[Any, str]:
    kind, value = typed(term)
    if kind != "num":
        raise EvalError("not a number")
    assert type(term) is Literal
    return value, numeric_type(term.datatype)


def abs_(term: Term) -> Term:
    value, dtype = _numeric(term)
    return number_literal(abs(value), dtype)


def _rounded(term: Term, decimal_mode: str, float_fn: Callable[[float], float]) -> Term:
    value, dtype = _numeric(term)
    if dtype == INTEGER:
        return number_literal(value, dtype)
    if dtype == DECIMAL:
        return number_literal(value.to_integral_value(rounding=decimal_mode), dtype)
    if math.isnan(value) or math.isinf(value):
        return number_literal(value, dtype)
    return number_literal(float_fn(value), dtype)


def ceil(term: Term) -> Term:
    return _rounded(term, ROUND_CEILING, math.ceil)


def floor(term: Term) -> Term:
    return _rounded(term, ROUND_FLOOR, math.floor)


def round_(term: Term) -> Term:
    value, dtype = _numeric(term)
    if dtype == DECIMAL:
        half = (value + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR)
        return number_literal(half, dtype)
    return _rounded(term, ROUND_FLOOR, lambda x: math.floor(x + 0.5))


def rand() -> Term:
    return number_literal(random.random(), DOUBLE)  # noqa: S311  (SPARQL RAND, not crypto)


# -- dates -----------------------------------------------------------------------------------


def _parts(term: Term) -> re.Match[str]:
    if type(term) is Literal and term.datatype in (DATETIME, DATE):
        kind, _ = typed(term)
        rx = _DATETIME_RE if term.datatype == DATETIME else _DATE_RE
        m = rx.fullmatch(term.lexical.strip())
        if m is not None and kind != "bad":
            return m
    raise EvalError("not a dateTime")


def _time_parts(term: Term) -> re.Match[str]:
    m = _parts(term)
    if type(term) is Literal and term.datatype != DATETIME:
        raise EvalError("not a dateTime")
    return m


def year(term: Term) -> Term:
    return Literal(str(int(_parts(term).group(1))), INTEGER)


def month(term: Term) -> Term:
    return Literal(str(int(_parts(term).group(2))), INTEGER)


def day(term: Term) -> Term:
    return Literal(str(int(_parts(term).group(3))), INTEGER)


def hours(term: Term) -> Term:
    return Literal(str(int(_time_parts(term).group(4))), INTEGER)


def minutes(term: Term) -> Term:
    return Literal(str(int(_time_parts(term).group(5))), INTEGER)


def seconds(term: Term) -> Term:
    m = _time_parts(term)
    return number_literal(Decimal(m.group(6) + (m.group(7) or "")), DECIMAL)


def _zone(term: Term) -> str | None:
    m = _parts(term)
    return m.group(8) if type(term) is Literal and term.datatype == DATETIME else m.group(4)


def timezone(term: Term) -> Term:
    zone = _zone(term)
    if not zone:
        raise EvalError("no timezone")
    if zone == "Z":
        return Literal("PT0S", XSD + "dayTimeDuration")
    sign = "-" if zone[0] == "-" else ""
    h, m = int(zone[1:3]), int(zone[4:6])
    if not (h or m):
        return Literal("PT0S", XSD + "dayTimeDuration")
    text = f"{sign}PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "")
    return Literal(text, XSD + "dayTimeDuration")


def tz(term: Term) -> Term:
    return Literal(_zone(term) or "")


def now() -> Term:
    stamp = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    return Literal(stamp, DATETIME)


# -- hashes, identifiers -----------------------------------------------------------------------


def _hash(name: str) -> Callable[[Term], Term]:
    def digest(term: Term) -> Term:
        data = _simple(term).encode("utf-8")
        return Literal(hashlib.new(name, data).hexdigest())

    return digest


def uuid_() -> Term:
    return f"urn:uuid:{uuid.uuid4()}"


def struuid() -> Term:
    return Literal(str(uuid.uuid4()))


# -- the table -------------------------------------------------------------------------------

ANY = 1 << 16  # "no upper bound" for an arity

#: Name -> (function, min args, max args). BOUND, IF, COALESCE, BNODE: see .filters.
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "STR": (str_, 1, 1),
    "LANG": (lang, 1, 1),
    "LANGMATCHES": (lang_matches, 2, 2),
    "DATATYPE": (datatype, 1, 1),
    "IRI": (iri, 1, 1),
    "URI": (iri, 1, 1),
    "STRDT": (strdt, 2, 2),
    "STRLANG": (strlang, 2, 2),
    "SAMETERM": (lambda a, b: a == b, 2, 2),
    "ISIRI": (lambda t: type(t) is str and not t.startswith("_:"), 1, 1),
    "ISURI": (lambda t: type(t) is str and not t.startswith("_:"), 1, 1),
    "ISBLANK": (lambda t: type(t) is str and t.startswith("_:"), 1, 1),
    "ISLITERAL": (lambda t: type(t) is Literal, 1, 1),
    "ISNUMERIC": (lambda t: typed(t)[0] == "num", 1, 1),
    "STRLEN": (strlen, 1, 1),
    "SUBSTR": (substr, 2, 3),
    "UCASE": (ucase, 1, 1),
    "LCASE": (lcase, 1, 1),
    "ENCODE_FOR_URI": (encode_for_uri, 1, 1),
    "CONTAINS": (contains, 2, 2),
    "STRSTARTS": (strstarts, 2, 2),
    "STRENDS": (strends, 2, 2),
    "STRBEFORE": (strbefore, 2, 2),
    "STRAFTER": (strafter, 2, 2),
    "CONCAT": (concat, 0, ANY),
    "REGEX": (regex, 2, 3),
    "REPLACE": (replace, 3, 4),
    "ABS": (abs_, 1, 1),
    "CEIL": (ceil, 1, 1),
    "FLOOR": (floor, 1, 1),
    "ROUND": (round_, 1, 1),
    "RAND": (rand, 0, 0),
    "YEAR": (year, 1, 1),
    "MONTH": (month, 1, 1),
    "DAY": (day, 1, 1),
    "HOURS": (hours, 1, 1),
    "MINUTES": (minutes, 1, 1),
    "SECONDS": (seconds, 1, 1),
    "TIMEZONE": (timezone, 1, 1),
    "TZ": (tz, 1, 1),
    "NOW": (now, 0, 0),
    "UUID": (uuid_, 0, 0),
    "STRUUID": (struuid, 0, 0),
    "MD5": (_hash("md5"), 1, 1),
    "SHA1": (_hash("sha1"), 1, 1),
    "SHA256": (_hash("sha256"), 1, 1),
    "SHA384": (_hash("sha384"), 1, 1),
    "SHA512": (_hash("sha512"), 1, 1),
}
for _target in CAST_TYPES:
    FUNCTIONS[_target] = (cast(_target), 1, 1)
