"""The subscription parser's token cursor: the tokens read so far, the nesting depth, and
the errors a grammar rule raises where it stands (the parts of the grammar, :mod:`._terms`,
:mod:`._triples`, :mod:`._expressions` and :mod:`._group`, are built on it)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError, UnsupportedQueryError
from semps.ingest.sparql._lexer import Token
from semps.limits import Limits

UNSUPPORTED_KEYWORDS = {
    "GRAPH": "GRAPH",
    "SERVICE": "SERVICE",
    "FROM": "FROM",
    "CONSTRUCT": "CONSTRUCT",
    "DESCRIBE": "DESCRIBE",
    "GROUP": "GROUP BY",
    "HAVING": "HAVING",
    "LIMIT": "LIMIT",
    "OFFSET": "OFFSET",
    "EXISTS": "EXISTS inside an expression",
    "INSERT": "SPARQL Update",
    "DELETE": "SPARQL Update",
    "LOAD": "SPARQL Update",
    "CLEAR": "SPARQL Update",
    "DROP": "SPARQL Update",
    "CREATE": "SPARQL Update",
}
#: The words of the grammar, offered for a misspelt one ("FILTR": did you mean FILTER?).
_GRAMMAR_WORDS = frozenset(
    {"SELECT", "ASK", "WHERE", "PREFIX", "BASE", "FILTER", "OPTIONAL", "UNION", "MINUS"}
    | {"BIND", "VALUES", "AS", "DISTINCT", "REDUCED", "ORDER", "BY", "ASC", "DESC", "NOT"}
    | {"EXISTS", "IN", "UNDEF", *UNSUPPORTED_KEYWORDS}
)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean FILTER?)`` for a word close to one of ``choices`` (upper case)
    but none of them; else the empty string.

    Example:
        >>> did_you_mean("FILTR", _GRAMMAR_WORDS), did_you_mean("filter", _GRAMMAR_WORDS)
        (' (did you mean FILTER?)', '')
    """
    upper = word.upper()
    if upper in choices:
        return ""
    close = difflib.get_close_matches(upper, choices, n=1, cutoff=0.8)
    return f" (did you mean {close[0]}?)" if close else ""


class Cursor:
    """The position in a query's tokens, and the errors raised there."""

    tokens: list[Token]
    i: int
    #: The current token, ``tokens[i]`` (an attribute: it is read a hundred times a query).
    tok: Token
    depth: int
    limits: Limits

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "EOF":
            self.i += 1
            self.tok = self.tokens[self.i]
        return tok

    def error(self, message: str, tok: Token | None = None) -> SubscriptionSyntaxError:
        """The error at ``tok`` (default: the current token); a word there close to one of
        the grammar's is offered in its place."""
        tok = tok or self.tok
        if tok.kind == "NAME":
            message += did_you_mean(tok.text, _GRAMMAR_WORDS)
        return SubscriptionSyntaxError(message, line=tok.line, column=tok.column)

    def unsupported(
        self, construct: str, tok: Token | None = None, hint: str = ""
    ) -> UnsupportedQueryError:
        tok = tok or self.tok
        msg = f"{construct} is not supported in subscriptions{hint}"
        return UnsupportedQueryError(msg, construct=construct, line=tok.line, column=tok.column)

    def too_many(
        self, limit: int, what: str, tok: Token | None = None
    ) -> SubscriptionLimitExceeded:
        """The error at ``tok`` (default: the current token) for a text holding more than
        ``limit`` of ``what`` (which names the limit in parentheses)."""
        tok = tok or self.tok
        msg = f"the subscription has more than the limit of {limit} {what}"
        return SubscriptionLimitExceeded(msg, line=tok.line, column=tok.column)

    def enter(self) -> None:
        """One level deeper (a parenthesis, a unary operator, a blank-node bracket)."""
        self.depth += 1
        if self.depth > self.limits.max_query_depth:
            limit = self.limits.max_query_depth
            msg = (
                f"the subscription nests deeper than the limit of {limit} levels (max_query_depth)"
            )
            raise SubscriptionLimitExceeded(msg, line=self.tok.line, column=self.tok.column)

    def expect_op(self, text: str) -> Token:
        if not self.tok.is_op(text):
            raise self.error(f"expected {text!r} but found {self.tok.describe()}")
        return self.advance()

    def check_unsupported(self) -> None:
        tok = self.tok
        if tok.kind == "NAME":
            word = tok.text.upper()
            if word == "NOT" and self.peek().is_keyword("EXISTS"):
                raise self.unsupported("NOT EXISTS inside an expression")
            if word in UNSUPPORTED_KEYWORDS:
                raise self.unsupported(UNSUPPORTED_KEYWORDS[word])

    def advance_kind(self, kind: str) -> Token:
        if self.tok.kind != kind:
            what = {"IRIREF": "an IRI", "PNAME": "a prefix name", "VAR": "a variable"}[kind]
            raise self.error(f"expected {what} but found {self.tok.describe()}")
        return self.advance()
