"""SPARQL expressions: a small AST (nested tuples) compiled into Python closures.

The evaluator API (FILTER, BIND, ``SELECT (expr AS ?v)``):

- ``Expression(ast)``: compiles an AST the parser built (``parser.expression()``).
- ``Expression.evaluate(bindings) -> bool``: a FILTER's verdict, the effective boolean
  value; an evaluation error (unbound variable, type error, ...) is false.
- ``Expression.value(bindings) -> Term``: the expression's value as a term (a comparison
  gives an xsd:boolean literal); raises :class:`EvalError` on an evaluation error, which
  BIND and ``SELECT (expr AS ?v)`` turn into an unbound ``?v``.
- ``Expression.variables()``: the variables it reads. Expressions compare and hash by AST.

``bindings`` maps variable names (no ``?``) to terms (IRIs and ``_:`` blank nodes as
``str``, :class:`~semps.terms.Literal`). The AST nodes: ``("var", name)``,
``("term", term)``, ``("or", [..])``, ``("and", [..])``, ``("not", e)``,
``("cmp", op, a, b)``, ``("in", negated, e, [..])``, ``("arith", first, [[op, e], ..])``,
``("neg", e)``, ``("pos", e)``, ``("call", NAME or cast IRI, [args])``.

Semantics follow SPARQL 1.1 sections 17.2-17.5 as the W3C test suites pin them down
(:mod:`._values` for operators, :mod:`._functions` for the built-ins and casts); where
rdflib answers differently the W3C results win (docs/sparql.md lists the differences).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import Any

from semps._types import Term
from semps.ingest.sparql._casts import CAST_TYPES
from semps.ingest.sparql._functions import ANY, FUNCTIONS
from semps.ingest.sparql._values import (
    BOOLEAN,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INTEGER,
    EvalError,
    compare,
    ebv,
    f32,
    number_literal,
    numeric_type,
    promote,
    typed,
)
from semps.terms import RDF_LANGSTRING, Literal

Value = Any  # a Term, or a Python bool from a comparison
Compiled = Callable[[Mapping[str, Term]], Value]
Ast = tuple[Any, ...]

TRUE = Literal("true", BOOLEAN)
FALSE = Literal("false", BOOLEAN)


class Expression:
    """A compiled expression (see the module docstring for the API)."""

    __slots__ = ("_fn", "_hash", "_key", "_vars", "ast")

    def __init__(self, ast: Ast) -> None:
        self.ast = ast
        self._fn = _compile(ast)
        self._vars = frozenset(_variables(ast))
        self._key = _frozen(ast)
        self._hash = hash(self._key)  # kept: every registration hashes its filters

    def variables(self) -> frozenset[str]:
        """Names of the variables the expression reads."""
        return self._vars

    def evaluate(self, bindings: Mapping[str, Term]) -> bool:
        """The effective boolean value; an evaluation error counts as false."""
        try:
            return _truth(self._fn(bindings))
        except EvalError:
            return False

    def value(self, bindings: Mapping[str, Term]) -> Term:
        """The value as a term.

        Raises:
            EvalError: an evaluation error (unbound variable, type error, ...).

        Example:
            >>> from semps.terms import XSD
            >>> one = Literal("1", XSD + "integer")
            >>> Expression(("arith", ("var", "x"), [["/", ("term", one)]])).value({"x": one})
            Literal('1.0', 'http://www.w3.org/2001/XMLSchema#decimal')
        """
        return _as_term(self._fn(bindings))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expression) and other._key == self._key

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[object, tuple[Ast]]:
        # Rebuilt from the AST: the closures do not pickle, and a string's hash (in
        # ``_hash``) differs from one process to the next.
        return (Expression, (self.ast,))

    def __repr__(self) -> str:
        return f"Expression({self.ast!r})"


def _frozen(node: object) -> object:
    """The AST with its argument lists as tuples (hashable); leaves are taken in line (one
    call per node, not per leaf: every FILTER of every subscription goes through here)."""
    if type(node) is list or type(node) is tuple:
        return tuple([_frozen(x) if type(x) is list or type(x) is tuple else x for x in node])
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
            elif node[0] != "term":
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
    return _connective(ast, True, "||")


def _and(ast: Ast) -> Compiled:
    """``a && b && ...``: false if one operand is false, else an error if one failed, else
    true."""
    return _connective(ast, False, "&&")


def _connective(ast: Ast, decisive: bool, symbol: str) -> Compiled:
    """An n-ary ``||`` (``decisive`` true) or ``&&`` (false): ``decisive`` as soon as one
    operand's truth is, else an error if one failed, else ``not decisive``."""
    operands = [_compile(a) for a in ast[1]]

    def fn(b: Mapping[str, Term]) -> Value:
        failed = False
        for operand in operands:
            try:
                if bool(_truth(operand(b))) is decisive:
                    return decisive
            except EvalError:
                failed = True
        if failed:
            raise EvalError(f"{symbol} with an error")
        return not decisive

    return fn


def _not(ast: Ast) -> Compiled:
    inner = _compile(ast[1])
    return lambda b: not _truth(inner(b))


def _cmp(ast: Ast) -> Compiled:
    op = ast[1]
    left, right = _compile(ast[2]), _compile(ast[3])
    return lambda b: compare(op, _as_term(left(b)), _as_term(right(b)))


def _in(ast: Ast) -> Compiled:
    """``e IN (a, b, ...)`` is ``e = a || e = b || ...`` (an error only when no item is
    equal and one failed); ``NOT IN`` its negation."""
    negated = ast[1]
    needle = _compile(ast[2])
    items = [_compile(item) for item in ast[3]]

    def fn(b: Mapping[str, Term]) -> Value:
        value = _as_term(needle(b))
        failed = False
        for item in items:
            try:
                if compare("=", value, _as_term(item(b))):
                    return not negated
            except EvalError:
                failed = True
        if failed:
            raise EvalError("IN with an error")
        return negated

    return fn


def _numeric(term: Term) -> tuple[Decimal | float, str]:
    kind, value = typed(term)
    if kind != "num":
        raise EvalError("not a number")
    assert isinstance(term, Literal)
    return value, numeric_type(term.datatype)


def _arith(ast: Ast) -> Compiled:
    """``a + b - c ...`` (or ``*``, ``/``): one left fold over the chain."""
    first = _compile(ast[1])
    rest = [(op, _compile(operand)) for op, operand in ast[2]]

    def fn(b: Mapping[str, Term]) -> Value:
        value = first(b)
        for op, operand in rest:
            value = arith(op, _as_term(value), _as_term(operand(b)))
        return value

    return fn


def arith(op: str, left: Term, right: Term) -> Term:
    """``left op right`` with XPath numeric promotion: integer and decimal operands give a
    decimal (integer unless dividing), a float a float, a double a double."""
    x: Any
    y: Any
    x, tx = _numeric(left)
    y, ty = _numeric(right)
    result_type = promote(tx, ty)
    if op == "/" and result_type == INTEGER:
        result_type = DECIMAL
    if result_type in (FLOAT, DOUBLE):
        return number_literal(_float_op(op, float(x), float(y), result_type), result_type)
    try:
        result = _OPERATORS[op](x, y)
    except (ZeroDivisionError, DivisionByZero, InvalidOperation):
        raise EvalError("division by zero") from None
    return number_literal(result, result_type)


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
}


def _float_op(op: str, x: float, y: float, result_type: str) -> float:
    if op == "/" and y == 0:
        if x == 0 or x != x:
            return float("nan")
        negative = (x < 0) != (str(y).startswith("-"))
        return float("-inf") if negative else float("inf")
    try:
        result = float(_OPERATORS[op](x, y))
    except OverflowError:
        result = float("inf")
    return f32(result) if result_type == FLOAT else result


def _unary(ast: Ast) -> Compiled:
    inner = _compile(ast[1])
    sign = ast[0]

    def fn(b: Mapping[str, Term]) -> Value:
        value, dtype = _numeric(_as_term(inner(b)))
        return number_literal(-value if sign == "neg" else value, dtype)

    return fn


def _call(ast: Ast) -> Compiled:
    name, arg_asts = ast[1], ast[2]
    special = _SPECIAL.get(name)
    if special is not None:
        return special(arg_asts)
    args = [_compile(a) for a in arg_asts]
    impl = FUNCTIONS[name][0]
    if not args:
        return lambda b: impl()
    if len(args) == 1:
        (only,) = args
        return lambda b: impl(_as_term(only(b)))
    return lambda b: impl(*[_as_term(a(b)) for a in args])


def _bound(arg_asts: list[Ast]) -> Compiled:
    name = arg_asts[0][1]
    return lambda b: name in b


def _if(arg_asts: list[Ast]) -> Compiled:
    cond, then, other = (_compile(a) for a in arg_asts)
    return lambda b: then(b) if _truth(cond(b)) else other(b)


def _coalesce(arg_asts: list[Ast]) -> Compiled:
    args = [_compile(a) for a in arg_asts]

    def fn(b: Mapping[str, Term]) -> Value:
        for arg in args:
            try:
                return arg(b)
            except EvalError:
                continue
        raise EvalError("COALESCE without a value")

    return fn


def _bnode(arg_asts: list[Ast]) -> Compiled:
    """``BNODE()`` a fresh blank node per call; ``BNODE(s)`` one per string and solution
    (the solution known by its bindings, less the blank nodes BNODE itself made: two
    ``SELECT (BNODE(?s) AS ?b1) (BNODE(?s) AS ?b2)`` give one node)."""
    if not arg_asts:
        import uuid

        return lambda b: f"_:bn{uuid.uuid4().hex}"
    arg = _compile(arg_asts[0])

    def fn(b: Mapping[str, Term]) -> Value:
        term = _as_term(arg(b))
        if type(term) is not Literal or term.datatype == RDF_LANGSTRING:
            raise EvalError("BNODE takes a simple literal")
        solution = sorted((k, str(v)) for k, v in b.items() if not str(v).startswith("_:bn"))
        key = f"{solution!r}\x00{term.lexical}".encode()
        return "_:bn" + hashlib.sha1(key, usedforsecurity=False).hexdigest()

    return fn


_SPECIAL: dict[str, Callable[[list[Ast]], Compiled]] = {
    "BOUND": _bound,
    "IF": _if,
    "COALESCE": _coalesce,
    "BNODE": _bnode,
}

#: Function name -> (min args, max args) for the parser (``ANY``: no upper bound).
ARITY: dict[str, tuple[int, int]] = {
    name: (low, high) for name, (_, low, high) in FUNCTIONS.items() if not name.startswith("http")
}
ARITY.update({"BOUND": (1, 1), "IF": (3, 3), "COALESCE": (0, ANY), "BNODE": (0, 1)})
CASTS = frozenset(CAST_TYPES)

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

__all__ = ["ANY", "ARITY", "CASTS", "EvalError", "Expression", "arith"]


def regex_holds(text: str, pattern: str, flags: str = "") -> bool:
    """Whether ``REGEX(text, pattern, flags)`` over plain strings is true, as a FILTER
    evaluates it; an evaluation error (a malformed or refused pattern, bad flags) is
    false.

    Example:
        >>> regex_holds("red oak", "^RED", "i"), regex_holds("red oak", "(")
        (True, False)
    """
    try:
        return bool(FUNCTIONS["REGEX"][0](Literal(text), Literal(pattern), Literal(flags)))
    except EvalError:
        return False
