"""The expression grammar (FILTER constraints, BIND and SELECT expressions): operators by
precedence, built-in calls checked for their arity (a constant REGEX compiled now), casts.
An expression is read into the nested-tuple AST that
:class:`~semps.ingest.sparql.filters.Expression` evaluates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semps.errors import UnsupportedQueryError
from semps.ingest.sparql._cursor import UNSUPPORTED_KEYWORDS, did_you_mean
from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql._regex import RegexError, RegexRefused, compile_regex
from semps.ingest.sparql._terms import NUMERIC_TOKENS, TermParser
from semps.ingest.sparql.filters import ANY, ARITY, CASTS
from semps.terms import Literal

_AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"}
#: Operators that make an arithmetic expression of an operand.
_ARITHMETIC = frozenset("+-*/")


class ExpressionParser(TermParser):
    """The expressions of :class:`~semps.ingest.sparql.parser._Parser`."""

    # -- provided by the group's grammar (:mod:`._group`) ----------------------------------

    def exists_in_expression(self, negated: bool) -> tuple[str, str]:
        raise NotImplementedError

    # -- expressions -----------------------------------------------------------------------

    def constraint(self) -> Any:
        if self.tok.is_op("("):
            return self.bracketed()
        if self.tok.kind in ("NAME", "IRIREF", "PNAME"):
            return self.primary()
        raise self.error(
            f"expected '(' or a function call after FILTER but found {self.tok.describe()}"
        )

    def bracketed(self) -> Any:
        self.expect_op("(")
        expr = self.expression()
        self.expect_op(")")
        return expr

    def expression(self) -> Any:
        # Operator chains become one n-ary node (no AST depth proportional to their length).
        self.enter()
        operands = [self.conjunction()]
        while self.tok.is_op("||"):
            self.advance()
            operands.append(self.conjunction())
        self.depth -= 1
        return operands[0] if len(operands) == 1 else ("or", operands)

    def conjunction(self) -> Any:
        operands = [self.relational()]
        while self.tok.is_op("&&"):
            self.advance()
            operands.append(self.relational())
        return operands[0] if len(operands) == 1 else ("and", operands)

    def relational(self) -> Any:
        left = self.additive()
        tok = self.tok
        if tok.kind == "OP" and tok.text in ("=", "!=", "<", ">", "<=", ">="):
            self.advance()
            return ("cmp", tok.text, left, self.additive())
        negated = False
        if tok.is_keyword("NOT") and self.peek().is_keyword("IN"):
            self.advance()
            negated = True
        if self.tok.is_keyword("IN"):
            self.advance()
            return ("in", negated, left, self.expression_list())
        return left

    def expression_list(self) -> list[Any]:
        self.expect_op("(")
        items: list[Any] = []
        while not self.tok.is_op(")"):
            items.append(self.expression())
            if not self.tok.is_op(","):
                break
            self.advance()
        self.expect_op(")")
        return items

    def additive(self) -> Any:
        tok = self.tok
        if tok.kind == "VAR" or tok.kind in NUMERIC_TOKENS:  # a lone operand (the common case)
            nxt = self.peek()
            if nxt.kind != "OP" or nxt.text not in _ARITHMETIC:
                return self.primary()  # what the chain below would reach
        return self.arithmetic(("+", "-"), self.multiplicative)

    def multiplicative(self) -> Any:
        return self.arithmetic(("*", "/"), self.unary)

    def arithmetic(self, ops: tuple[str, ...], operand: Callable[[], Any]) -> Any:
        """``operand (op operand)*`` with ``ops`` of one precedence, left to right."""
        left = operand()
        rest: list[list[Any]] = []
        while self.tok.kind == "OP" and self.tok.text in ops:
            op = self.advance().text
            rest.append([op, operand()])
        return ("arith", left, rest) if rest else left

    def unary(self) -> Any:
        tok = self.tok
        if tok.is_op("!"):
            self.advance()
            self.enter()
            inner = ("not", self.unary())
            self.depth -= 1
            return inner
        if (
            tok.kind == "OP"
            and tok.text in "+-"
            and self.peek().kind not in ("INTEGER", "DECIMAL", "DOUBLE")
        ):
            self.advance()
            self.enter()
            inner = ("neg" if tok.text == "-" else "pos", self.unary())
            self.depth -= 1
            return inner
        return self.primary()

    def primary(self) -> Any:
        tok = self.tok
        if tok.is_op("("):
            return self.bracketed()
        if tok.kind == "VAR":
            self.advance()
            return ("var", tok.text[1:])
        if tok.kind in ("IRIREF", "PNAME"):
            iri = self.iri(self.advance())
            if self.tok.is_op("("):
                return self.function_call(iri, tok)
            return ("term", iri)
        if tok.kind == "NAME" and tok.text.lower() not in ("true", "false"):
            return self.builtin()
        literal = self.literal()
        if literal is None:
            self.check_unsupported()
            raise self.error(f"expected an expression but found {tok.describe()}")
        return ("term", literal)

    def builtin(self) -> Any:
        tok = self.advance()
        name = tok.text.upper()
        if name == "NOT" and self.tok.is_keyword("EXISTS"):
            self.advance()
            return self.exists_in_expression(negated=True)
        if name == "EXISTS":
            return self.exists_in_expression(negated=False)
        if name in _AGGREGATES:
            raise self.unsupported("aggregate", tok)
        if name not in ARITY:
            if name in UNSUPPORTED_KEYWORDS:
                raise self.unsupported(UNSUPPORTED_KEYWORDS[name], tok)
            hint = did_you_mean(name, ARITY)
            raise self.unsupported(f"the function {tok.text.upper()}()", tok, hint)
        args = self.expression_list()
        low, high = ARITY[name]
        if not low <= len(args) <= high:
            raise self.error(
                f"{name}() takes {_arity(low, high)} arguments, not {len(args)}",
                tok,
            )
        if name == "BOUND" and args[0][0] != "var":
            raise self.error("BOUND() takes a variable", tok)
        if name == "REGEX":
            self.check_regex(args[1:], tok)
        elif name == "REPLACE":
            self.check_regex([args[1], *args[3:]], tok)
        elif name in ("IRI", "URI"):  # resolved against the query's base when evaluated
            args.append(("term", Literal(self.base or "")))
        return ("call", name, args)

    def check_regex(self, args: list[Any], tok: Token) -> None:
        """A constant pattern (``args``: the pattern and the flags, if any) is compiled now:
        what RE2 cannot run is refused here, not found false at every event."""
        constant = [a[1] for a in args if a[0] == "term" and type(a[1]) is Literal]
        if len(constant) != len(args):
            return  # a variable pattern or flags: checked when evaluated (an error is false)
        pattern, flags = constant[0].lexical, constant[1].lexical if len(constant) > 1 else ""
        try:
            compile_regex(pattern, flags)
        except RegexRefused as exc:
            raise self.unsupported_regex(exc, tok) from None
        except RegexError as exc:
            raise self.error(str(exc), tok) from None

    def unsupported_regex(self, exc: RegexRefused, tok: Token) -> UnsupportedQueryError:
        msg = f"{exc} (REGEX runs on RE2, in time linear in the text)"
        return UnsupportedQueryError(msg, construct=exc.construct, line=tok.line, column=tok.column)

    def function_call(self, iri: str, tok: Token) -> Any:
        if iri not in CASTS:
            raise self.unsupported(f"the function <{iri}>", tok)
        args = self.expression_list()
        if len(args) != 1:
            raise self.error(f"a cast takes one argument, not {len(args)}", tok)
        return ("call", iri, args)


def _arity(low: int, high: int) -> str:
    if high == ANY:
        return f"at least {low}"
    return str(low) if low == high else f"{low} to {high}"
