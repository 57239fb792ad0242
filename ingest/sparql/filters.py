"""FILTER expressions: a small AST (nested tuples) compiled into Python closures.

The AST is data, so two parses can be compared; :class:`Expression` carries both the AST
and the compiled function and implements the :class:`~semps.ingest.sparql.model.Filter`
protocol. Semantics follow SPARQL 1.1 section 17 (and rdflib where the two differ is a bug
we want to hear about: the tests compare with rdflib).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import Any

from semps._types import Term
from semps.ingest.sparql._regex import compile_regex
from semps.ingest.sparql._values import (
    BOOLEAN,
    DATETIME,
    DECIMAL,
    FLOAT_TYPES,
    INTEGER_TYPES,
    EvalError,
    compare,
    ebv,
    number_literal,
    string_value,
    typed,
)
from semps.terms import RDF_LANGSTRING, XSD, XSD_STRING, Literal

Value = Any  # a Term, or a Python bool from a comparison
Compiled = Callable[[Mapping[str, Term]], Value]
Ast = tuple[Any, ...]

TRUE = Literal("true", BOOLEAN)
FALSE = Literal("false", BOOLEAN)


class Expression:
    """A compiled FILTER expression."""

    __slots__ = ("_fn", "_key", "_vars", "ast")

    def __init__(self, ast: Ast) -> None:
        self.ast = ast
        self._fn = _compile(ast)
        self._vars = frozenset(_variables(ast))
        self._key = _frozen(ast)

    def variables(self) -> frozenset[str]:
        """Names of the variables the expression reads."""
        return self._vars

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """The effective boolean value; an evaluation error counts as false."""
        try:
            return _truth(self._fn(bindings))
        except EvalError:
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expression) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Expression({self.ast!r})"


def _frozen(node: object) -> object:
    """The AST with its argument lists as tuples (hashable)."""
    if type(node) is list or type(node) is tuple:
        return tuple(_frozen(x) for x in node)
    return node


def _variables(ast: Ast) -> list[str]:
    """The variables an AST reads (an explicit stack: no recursion however long it is)."""
    out: list[str] = []
    stack: list[object] = [ast]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            if node[0] == "var":
                out.append(node[1])
            else:
                stack.extend(node[1:])
        elif type(node) is list:
            stack.extend(node)
    return out


def _truth(value: Value) -> bool:
    if value is True or value is False:
        return value
    return ebv(value)


def _as_term(value: Value) -> Term:
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    return value  # type: ignore[no-any-return]


def _compile(ast: Ast) -> Compiled:
    kind = ast[0]
    if kind == "var":
        name = ast[1]

        def var(b: Mapping[str, Term]) -> Value:
            try:
                return b[name]
            except KeyError:
                raise EvalError(f"unbound ?{name}") from None

        return var
    if kind == "term":
        term = ast[1]
        return lambda b: term
    return _COMPILERS[kind](ast)


def _or(ast: Ast) -> Compiled:
    """``a || b || ...`` (n-ary: a long disjunction is one loop, not a deep call chain):
    true if one operand is true, else an error if one failed, else false."""
    operands = [_compile(a) for a in ast[1]]

    def fn(b: Mapping[str, Term]) -> Value:
        failed = False
        for operand in operands:
            try:
                if _truth(operand(b)):
                    return True
            except EvalError:
                failed = True
        if failed:
            raise EvalError("|| with an error")
        return False

    return fn


def _and(ast: Ast) -> Compiled:
    """``a && b && ...``: false if one operand is false, else an error if one failed, else
    true."""
    operands = [_compile(a) for a in ast[1]]

    def fn(b: Mapping[str, Term]) -> Value:
        failed = False
        for operand in operands:
            try:
                if not _truth(operand(b)):
                    return False
            except EvalError:
                failed = True
        if failed:
            raise EvalError("&& with an error")
        return True

    return fn


def _not(ast: Ast) -> Compiled:
    inner = _compile(ast[1])
    return lambda b: not _truth(inner(b))


def _cmp(ast: Ast) -> Compiled:
    op = ast[1]
    left, right = _compile(ast[2]), _compile(ast[3])
    return lambda b: compare(op, _as_term(left(b)), _as_term(right(b)))


def _in(ast: Ast) -> Compiled:
    negated = ast[1]
    needle = _compile(ast[2])
    items = [_compile(item) for item in ast[3]]

    def fn(b: Mapping[str, Term]) -> Value:
        # rdflib (the reference) tests IN by term identity, not by value equality, and
        # skips list items whose evaluation fails.
        value = _as_term(needle(b))
        for item in items:
            try:
                if value == _as_term(item(b)):
                    return not negated
            except EvalError:
                continue
        return negated

    return fn


def _numeric(term: Term) -> tuple[Decimal | float, bool]:
    kind, value = typed(term)
    if kind != "num":
        raise EvalError("not a number")
    assert isinstance(term, Literal)
    return value, term.datatype in INTEGER_TYPES


def _arith(ast: Ast) -> Compiled:
    """``a + b - c ...`` (or ``*``, ``/``): one left fold over the chain."""
    first = _compile(ast[1])
    rest = [(op, _compile(operand)) for op, operand in ast[2]]

    def fn(b: Mapping[str, Term]) -> Value:
        value = first(b)
        for op, operand in rest:
            value = _arith_step(op, value, operand(b))
        return value

    return fn


def _arith_step(op: str, left: Value, right: Value) -> Term:
    x: Any
    y: Any
    x, xi = _numeric(_as_term(left))
    y, yi = _numeric(_as_term(right))
    if isinstance(x, float) or isinstance(y, float):
        x, y = float(x), float(y)
    try:
        if op == "+":
            result = x + y
        elif op == "-":
            result = x - y
        elif op == "*":
            result = x * y
        else:
            result = x / y
    except (ZeroDivisionError, DivisionByZero, InvalidOperation):
        raise EvalError("division by zero") from None
    return number_literal(result, xi and yi and op != "/")


def _unary(ast: Ast) -> Compiled:
    inner = _compile(ast[1])
    sign = ast[0]

    def fn(b: Mapping[str, Term]) -> Value:
        value, integer = _numeric(_as_term(inner(b)))
        return number_literal(-value if sign == "neg" else value, integer)

    return fn


def _call(ast: Ast) -> Compiled:
    name, args = ast[1], [_compile(a) for a in ast[2]]
    if name == "BOUND":
        var = ast[2][0][1]
        return lambda b: var in b
    impl = _FUNCTIONS[name]
    return lambda b: impl(*[_as_term(a(b)) for a in args])


# -- built-in functions ----------------------------------------------------------------------


def _str(term: Term) -> Term:
    if not isinstance(term, str):
        return Literal(term[0])
    if term.startswith("_:"):
        raise EvalError("str of a blank node")
    return Literal(term)


def _lang(term: Term) -> Term:
    if type(term) is not Literal:
        raise EvalError("lang of a non-literal")
    return Literal(term.lang or "")


def _datatype(term: Term) -> Term:
    if isinstance(term, str):
        raise EvalError("datatype of a non-literal")
    return term[1]


_NO_FLAGS = Literal("")


def _regex(text: Term, pattern: Term, flags: Term = _NO_FLAGS) -> bool:
    try:
        compiled = compile_regex(string_value(pattern), string_value(flags))
    except ValueError as exc:  # refused or malformed: an evaluation error
        raise EvalError(str(exc)) from None
    return compiled.search(string_value(text)) is not None


def _lang_matches(tag: Term, pattern: Term) -> bool:
    lang, want = string_value(tag).lower(), string_value(pattern).lower()
    if want == "*":
        return lang != ""
    return lang == want or lang.startswith(want + "-")


def _string_fn(fn: Callable[[str, str], Any]) -> Callable[[Term, Term], Any]:
    def call(a: Term, b: Term) -> Any:
        if type(a) is Literal and type(b) is Literal and b.lang and a.lang != b.lang:
            raise EvalError("incompatible language tags")
        return fn(string_value(a), string_value(b))

    return call


def _cast(datatype: str) -> Callable[[Term], Term]:
    """An XSD cast, by the lexical rules of rdflib's ``default_cast`` (the reference)."""

    def cast(term: Term) -> Term:
        if datatype == XSD_STRING:
            if not isinstance(term, str):
                # rdflib (the reference) keeps a language tag: lang(xsd:string("a"@en)) = "en"
                return term if term.lang else Literal(term[0])
            if term.startswith("_:"):
                raise EvalError("cast of a blank node")
            return Literal(term)
        if type(term) is not Literal:
            raise EvalError("cast of a non-literal")
        if not (term.lang or term.datatype.startswith(XSD)):
            raise EvalError("cast of a literal with an unknown datatype")
        try:
            return _cast_lexical(term, datatype)
        except (ValueError, ArithmeticError):
            raise EvalError(f"cannot cast {term.lexical!r} to {datatype}") from None

    return cast


def _cast_lexical(term: Literal, datatype: str) -> Literal:
    text = term.lexical
    if datatype == DATETIME:
        if term.datatype not in (DATETIME, XSD_STRING):
            raise ValueError(text)
        return Literal(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat(), DATETIME)
    if term.datatype == DATETIME:
        raise ValueError(text)
    if datatype in FLOAT_TYPES:
        return Literal(repr(float(text)), datatype)
    if datatype == DECIMAL:
        if term.datatype in FLOAT_TYPES:  # rdflib normalises doubles' lexical forms first
            text = repr(float(text))
        if "e" in text.lower():
            raise ValueError(text)
        return Literal(format(Decimal(text), "f"), DECIMAL)
    if datatype == INTEGER:
        return Literal(str(int(text)), INTEGER)
    lowered = text.lower()
    if lowered in ("1", "true", "0", "false"):
        return Literal("true" if lowered in ("1", "true") else "false", BOOLEAN)
    raise ValueError(text)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "STR": _str,
    "LANG": _lang,
    "DATATYPE": _datatype,
    "REGEX": _regex,
    "LANGMATCHES": _lang_matches,
    "ISIRI": lambda t: type(t) is str and not t.startswith("_:"),
    "ISURI": lambda t: type(t) is str and not t.startswith("_:"),
    "ISBLANK": lambda t: type(t) is str and t.startswith("_:"),
    "ISLITERAL": lambda t: type(t) is Literal,
    "ISNUMERIC": lambda t: typed(t)[0] == "num",
    "SAMETERM": lambda a, b: a == b,
    "CONTAINS": _string_fn(lambda a, b: b in a),
    "STRSTARTS": _string_fn(lambda a, b: a.startswith(b)),
    "STRENDS": _string_fn(lambda a, b: a.endswith(b)),
    "STRLEN": lambda t: Literal(str(len(string_value(t))), XSD + "integer"),
    "UCASE": lambda t: Literal(string_value(t).upper(), t.datatype, t.lang),
    "LCASE": lambda t: Literal(string_value(t).lower(), t.datatype, t.lang),
}
INTEGER = XSD + "integer"
for _dt in (INTEGER, DECIMAL, *FLOAT_TYPES, BOOLEAN, DATETIME, XSD_STRING):
    _FUNCTIONS[_dt] = _cast(_dt)

#: Function name -> (min args, max args) for the parser.
ARITY: dict[str, tuple[int, int]] = {
    "STR": (1, 1),
    "LANG": (1, 1),
    "DATATYPE": (1, 1),
    "BOUND": (1, 1),
    "REGEX": (2, 3),
    "LANGMATCHES": (2, 2),
    "ISIRI": (1, 1),
    "ISURI": (1, 1),
    "ISBLANK": (1, 1),
    "ISLITERAL": (1, 1),
    "ISNUMERIC": (1, 1),
    "SAMETERM": (2, 2),
    "CONTAINS": (2, 2),
    "STRSTARTS": (2, 2),
    "STRENDS": (2, 2),
    "STRLEN": (1, 1),
    "UCASE": (1, 1),
    "LCASE": (1, 1),
}
CASTS = frozenset(d for d in _FUNCTIONS if d.startswith(XSD))

_COMPILERS: dict[str, Callable[[Ast], Compiled]] = {
    "or": _or,
    "and": _and,
    "not": _not,
    "cmp": _cmp,
    "in": _in,
    "arith": _arith,
    "neg": _unary,
    "pos": _unary,
    "call": _call,
}

__all__ = ["ARITY", "CASTS", "RDF_LANGSTRING", "Expression"]
