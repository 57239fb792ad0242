"""XSD casts (SPARQL 1.1 section 17.5, XPath casting): ``xsd:integer(x)`` and the rest."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from semps._types import Term
from semps.ingest.sparql._values import (
    BOOLEAN,
    DATETIME,
    DECIMAL,
    DOUBLE,
    FLOAT,
    FLOAT_TYPES,
    INTEGER,
    EvalError,
    double_lexical,
    f32,
    number_literal,
    parse_datetime,
    typed,
)
from semps.terms import XSD_STRING, Literal

CAST_TYPES = (XSD_STRING, INTEGER, DECIMAL, FLOAT, DOUBLE, BOOLEAN, DATETIME)


def cast(target: str) -> Callable[[Term], Term]:
    """``xsd:T(x)`` by SPARQL's cast table (XPath casting)."""

    def fn(term: Term) -> Term:
        if not isinstance(term, Literal):
            if target == XSD_STRING and not term.startswith("_:"):
                return Literal(term)
            raise EvalError(f"cannot cast {term} to {target}")
        kind, value = typed(term)
        try:
            return _cast(target, term, kind, value)
        except (ValueError, ArithmeticError, InvalidOperation):
            raise EvalError(f"cannot cast {term.lexical!r} to {target}") from None

    return fn


def _cast(target: str, term: Literal, kind: str, value: Any) -> Term:
    if target == XSD_STRING and kind in ("bad", "other", "lang"):
        return Literal(term.lexical)  # as STR(): the lexical form, without a language tag
    if kind in ("bad", "other", "lang"):
        raise ValueError(term.lexical)
    if target == XSD_STRING:
        return Literal(_string_of(kind, value, term))
    if kind == "str":
        return _from_string(target, value.strip(" \t\n\r"))
    if target == BOOLEAN:
        if kind == "bool":
            return Literal("true" if value else "false", BOOLEAN)
        if kind == "num":
            false = value == 0 or (isinstance(value, float) and math.isnan(value))
            return Literal("false" if false else "true", BOOLEAN)
        raise ValueError(term.lexical)
    if target == DATETIME:
        if kind == "dateTime":
            return Literal(term.lexical.strip(), DATETIME)
        raise ValueError(term.lexical)
    if kind == "bool":
        return number_literal(Decimal(int(value)), target)
    if kind != "num":
        raise ValueError(term.lexical)
    if target in (FLOAT, DOUBLE):
        number = float(value)
        return number_literal(f32(number) if target == FLOAT else number, target)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise ValueError(term.lexical)
    exact = Decimal(repr(value)) if isinstance(value, float) else value
    if target == INTEGER:
        return number_literal(int(exact), INTEGER)
    return number_literal(exact, DECIMAL)


def _string_of(kind: str, value: Any, term: Literal) -> str:
    """XPath's cast to xs:string: canonical numbers and booleans (``1.0`` -> ``1``, a
    double in [1e-6, 1e6) without an exponent), other literals' lexical forms."""
    if kind == "bool":
        return "true" if value else "false"
    if kind != "num":
        lexical: str = term.lexical
        return lexical
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or not (1e-6 <= abs(value) < 1e6 or value == 0):
            return double_lexical(value)
        value = Decimal(repr(value))
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") and value == 0 and term.datatype not in FLOAT_TYPES else text


def _from_string(target: str, text: str) -> Term:
    checked = typed(Literal(text, target))
    if checked[0] == "bad":
        raise ValueError(text)
    if target == DATETIME:
        parse_datetime(text)
        return Literal(text, DATETIME)
    if target == BOOLEAN:
        return Literal("true" if checked[1] else "false", BOOLEAN)
    return number_literal(checked[1], target)
