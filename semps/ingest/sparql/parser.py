"""A hand-written recursive-descent parser for the subscription fragment of SPARQL 1.1.

Fast enough to register tens of thousands of subscriptions a second (rdflib's parser takes
~11 ms each), and strict: anything outside the fragment is refused with an
:class:`~semps.errors.UnsupportedQueryError` naming the construct.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urljoin

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError, UnsupportedQueryError
from semps.ingest.sparql._group import GroupParser, basic_graph_pattern, join
from semps.ingest.sparql._lexer import Token, tokenize
from semps.ingest.sparql._regex import RegexError, RegexRefused, compile_regex
from semps.ingest.sparql._shapes import Shapes
from semps.ingest.sparql.filters import ANY, ARITY, CASTS, Expression
from semps.ingest.sparql.model import PatternTerm, Query, TriplePattern, Var
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import RDF, XSD, Literal

_UNSUPPORTED_KEYWORDS = {
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
_AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"}
#: The words of the grammar, offered for a misspelt one ("FILTR": did you mean FILTER?).
_GRAMMAR_WORDS = frozenset(
    {"SELECT", "ASK", "WHERE", "PREFIX", "BASE", "FILTER", "OPTIONAL", "UNION", "MINUS"}
    | {"BIND", "VALUES", "AS", "DISTINCT", "REDUCED", "ORDER", "BY", "ASC", "DESC", "NOT"}
    | {"EXISTS", "IN", "UNDEF", *_UNSUPPORTED_KEYWORDS}
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


_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
#: An absolute IRI starts with its scheme.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:").match
_LOCAL_ESCAPE = re.compile(r"\\(.)").sub
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
#: Operators that make an arithmetic expression of an operand.
_ARITHMETIC = frozenset("+-*/")
_NUMERIC_TYPES = {
    k: sys.intern(XSD + t)
    for k, t in [("INTEGER", "integer"), ("DECIMAL", "decimal"), ("DOUBLE", "double")]
}


#: The memo :func:`parse_memo` opened in this context, with the limits it holds parses under.
_MEMO: ContextVar[tuple[dict[str, Query], Limits] | None] = ContextVar("_MEMO", default=None)


@contextmanager
def parse_memo(queries: dict[str, Query], limits: Limits = DEFAULT_LIMITS) -> Iterator[None]:
    """Within the block (this thread or task), :func:`parse_query` of a text (no ``base``,
    the same ``limits``) answers ``queries[text]`` without lexing or parsing, and adds each
    text it parses to ``queries``: texts parsed once, before (a snapshot's) or now.

    The caller vouches that each ``queries[text]`` is what ``parse_query(text,
    limits=limits)`` returns (a snapshot checks its digest first); queries are immutable,
    so sharing one is safe.

    Example:
        >>> memo: dict[str, Query] = {}
        >>> with parse_memo(memo):
        ...     q = parse_query("SELECT * { ?x <http://ex/p> ?y }")
        ...     again = parse_query("SELECT * { ?x <http://ex/p> ?y }")
        >>> q is again, len(memo)
        (True, 1)
    """
    token = _MEMO.set((queries, limits))
    try:
        yield
    finally:
        _MEMO.reset(token)


def open_memo(limits: Limits = DEFAULT_LIMITS) -> dict[str, Query] | None:
    """The memo of the :func:`parse_memo` block this code runs in, if it holds parses under
    ``limits`` (what :func:`parse_query` with those limits reads and adds to), else ``None``.

    Example:
        >>> memo: dict[str, Query] = {}
        >>> with parse_memo(memo):
        ...     open_memo() is memo
        True
        >>> open_memo() is None
        True
    """
    found = _MEMO.get()
    if found is None or (found[1] is not limits and found[1] != limits):
        return None
    return found[0]


def order_by_at(text: str) -> tuple[int, int] | None:
    """Where ``text`` says ORDER BY (line, column), or ``None``: a subscription's ORDER BY is
    read and ignored (:meth:`_Parser.modifiers`), which a query answered once may not do.

    >>> order_by_at("SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s")
    (1, 30)
    >>> order_by_at("SELECT ?s WHERE { ?s <http://ex/order> ?o }") is None
    True
    """
    tokens = tokenize(text)
    for tok, after in zip(tokens, tokens[1:], strict=False):
        if tok.is_keyword("ORDER") and after.is_keyword("BY"):
            return tok.line, tok.column
    return None


def parse_query(text: str, *, base: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Query:
    """Parse a subscription, in time linear in its size.

    Every input is hostile: ``limits`` bounds the text (``max_query_bytes``), its nesting
    (``max_query_depth``: parentheses, unary operators, blank-node brackets) and its triple
    patterns (``max_patterns``).

    Raises:
        SubscriptionSyntaxError: the text is not valid (message starts ``line:col:``).
        UnsupportedQueryError: valid SPARQL outside the fragment (``.construct`` names it),
            including a REGEX feature RE2 cannot run (``construct`` ``"regex lookahead"``,
            ...).
        SubscriptionLimitExceeded: the text passes one of ``limits`` (the message names it).

    Example:
        >>> q = parse_query("PREFIX ex: <http://ex/> SELECT ?x WHERE { ?x a ex:C }")
        >>> q.patterns[0]
        TriplePattern(s=Var(name='x'), p='http://www.w3.org/1999/02/22-rdf-syntax-ns#type', o='http://ex/C')
    """
    memo = _MEMO.get()
    if memo is not None and base is None and type(text) is str:
        if memo[1] is not limits and memo[1] != limits:  # (a matcher passes its own object)
            return _parse(text, base, limits)
        found = memo[0].get(text)
        if found is None:
            found = memo[0][text] = _parse(text, None, limits)
        return found
    return _parse(text, base, limits)


def _parse(text: str, base: str | None, limits: Limits) -> Query:
    if not isinstance(text, str):
        msg = f"a subscription must be text, not {type(text).__name__}"
        raise SubscriptionSyntaxError(msg, line=1, column=1)
    limits.check_query_size(text)
    tokens = tokenize(text)
    if base is not None:
        return _parse_tokens(tokens, base, limits)
    global _SHAPES  # noqa: PLW0603 - the memo of the last limits parsed under
    if _SHAPES.limits is not limits and _SHAPES.limits != limits:
        found = _SHAPES_BY_LIMITS.get(limits)
        if found is None:
            if len(_SHAPES_BY_LIMITS) >= 4:
                _SHAPES_BY_LIMITS.clear()
            found = _SHAPES_BY_LIMITS[limits] = Shapes(limits)
        _SHAPES = found
    return _SHAPES.parse(tokens, lambda toks: _parse_tokens(toks, None, limits))


#: The shapes of the queries parsed so far and their templates (:mod:`._shapes`), one
#: memo per set of limits (a few: parses under others start afresh), the last one used.
_SHAPES = Shapes(DEFAULT_LIMITS)
_SHAPES_BY_LIMITS: dict[Limits, Shapes] = {DEFAULT_LIMITS: _SHAPES}


def _parse_tokens(tokens: list[Token], base: str | None, limits: Limits) -> Query:
    try:
        return _Parser(tokens, base, limits).query()
    except RecursionError:  # only when max_query_depth is configured past the stack
        depth = limits.max_query_depth
        msg = f"the subscription nests too deep for the parser (max_query_depth is {depth})"
        raise SubscriptionLimitExceeded(msg) from None


class _Parser(GroupParser):
    def __init__(self, tokens: list[Token], base: str | None, limits: Limits) -> None:
        self.tokens = tokens
        self.limits = limits
        self.depth = 0
        self.i = 0
        self.tok = tokens[0]
        self.base = base
        self.prefixes: dict[str, str] = {}
        self.patterns: list[TriplePattern] = []
        self.filters: list[Expression] = []
        self.blank = 0
        self.bnode_labels: dict[str, str] = {}
        # A blank node label belongs to one basic graph pattern (SPARQL 1.1 section 4.1.4):
        # the serial of the pattern each label was first used in.
        self.bgp_serial = 0
        self.bnode_scope: dict[str, int] = {}
        self.block = []
        self.pattern_count = 0
        self.element_count = 0
        self.exists_stack = []
        self.constructs = {}
        self.selected: list[tuple[str, Any]] = []

    # -- token helpers ---------------------------------------------------------------------

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
            if word in _UNSUPPORTED_KEYWORDS:
                raise self.unsupported(_UNSUPPORTED_KEYWORDS[word])

    # -- query -----------------------------------------------------------------------------

    def query(self) -> Query:
        self.prologue()
        self.check_unsupported()
        tok = self.tok
        if tok.is_keyword("ASK"):
            self.advance()
            form, projection, distinct = "ASK", None, False
        elif tok.is_keyword("SELECT"):
            self.advance()
            form = "SELECT"
            distinct, projection = self.select_clause()
        else:
            raise self.error(f"expected SELECT or ASK but found {tok.describe()}")
        self.check_unsupported()
        if self.tok.is_keyword("WHERE"):
            self.advance()
        where = self.group_graph_pattern(nested=False)
        self.modifiers()
        if self.tok.is_keyword("VALUES"):
            self.constructs.setdefault("VALUES")
            where = join(where, self.values_block())
        if self.tok.kind != "EOF":
            self.check_unsupported()
            raise self.error(f"unexpected {self.tok.describe()} after the query")
        where = self.selected_expressions(where, tok)
        bgp = None if self.selected else basic_graph_pattern(where)
        if bgp is None:
            return Query(
                form=form,  # type: ignore[arg-type]
                projection=projection,
                distinct=distinct,
                patterns=(),
                algebra=where,
                constructs=tuple(self.constructs),
            )
        self.patterns, self.filters = list(bgp[0]), list(bgp[1])
        self.check_projection(projection, tok)
        return Query(
            form=form,  # type: ignore[arg-type]
            projection=projection,
            distinct=distinct,
            patterns=tuple(self.patterns),
            filters=tuple(self.filters),
        )

    def check_projection(self, projection: tuple[str, ...] | None, tok: Token) -> None:
        """SPARQL allows projecting a variable the pattern never binds: its column is
        unbound in every solution (and left out of them)."""

    def prologue(self) -> None:
        while True:
            if self.tok.is_keyword("BASE"):
                self.advance()
                self.base = self.iriref(self.advance_kind("IRIREF"))
            elif self.tok.is_keyword("PREFIX"):
                self.advance()
                name = self.advance_kind("PNAME")
                if not name.text.endswith(":") or ":" in name.text[:-1]:
                    raise self.error(
                        f"expected a prefix name ending in ':' but found {name.text!r}", name
                    )
                self.prefixes[name.text[:-1]] = self.iriref(self.advance_kind("IRIREF"))
            else:
                return

    def advance_kind(self, kind: str) -> Token:
        if self.tok.kind != kind:
            what = {"IRIREF": "an IRI", "PNAME": "a prefix name", "VAR": "a variable"}[kind]
            raise self.error(f"expected {what} but found {self.tok.describe()}")
        return self.advance()

    def select_clause(self) -> tuple[bool, tuple[str, ...] | None]:
        distinct = False
        if self.tok.is_keyword("DISTINCT", "REDUCED"):
            distinct = self.advance().text.upper() == "DISTINCT"
        if self.tok.is_op("*"):
            self.advance()
            return distinct, None
        names: dict[str, None] = {}  # ordered and deduplicated in linear time
        while self.tok.kind == "VAR" or self.tok.is_op("("):
            if self.tok.is_op("("):
                name, expr = self.select_expression()
                if name in names:
                    raise self.error(f"?{name} is projected twice")
                names.setdefault(name)
                self.selected.append((name, expr))
                continue
            names.setdefault(self.advance().text[1:])
        if not names:
            raise self.error(
                f"expected variables or '*' after SELECT but found {self.tok.describe()}"
            )
        return distinct, tuple(names)

    def modifiers(self) -> None:
        self.check_unsupported()
        if self.tok.is_keyword("ORDER"):
            # ORDER BY does not change which solutions exist: accepted and ignored.
            self.advance()
            if not self.tok.is_keyword("BY"):
                raise self.error(f"expected BY but found {self.tok.describe()}")
            self.advance()
            count = 0
            while True:
                if self.tok.is_keyword("ASC", "DESC"):
                    self.advance()
                    self.bracketed()
                elif self.tok.kind == "VAR":
                    self.advance()
                elif self.tok.is_op("("):
                    self.bracketed()
                elif self.tok.kind in ("NAME", "IRIREF", "PNAME") and not self.tok.is_keyword(
                    "LIMIT", "OFFSET", "VALUES"
                ):
                    self.primary()  # a built-in or function call: ORDER BY str(?o)
                else:
                    break
                count += 1
            if not count:
                raise self.error(f"expected an ORDER BY condition but found {self.tok.describe()}")
        self.check_unsupported()

    def bracketed(self) -> Any:
        self.expect_op("(")
        expr = self.expression()
        self.expect_op(")")
        return expr

    # -- graph patterns --------------------------------------------------------------------

    def fresh_blank(self) -> Var:
        self.blank += 1
        return Var(f"_#{self.blank}")  # '#' is in no blank node label: no clash with _:b1

    def collection(self) -> PatternTerm:
        """``( item ... )``: an RDF list, as ``rdf:first`` / ``rdf:rest`` triple patterns
        over fresh blank nodes; its head (``rdf:nil`` when empty)."""
        start = self.expect_op("(")
        self.enter()
        items: list[PatternTerm] = []
        while not self.tok.is_op(")"):
            if self.tok.is_op("[") and not self.peek().is_op("]"):
                items.append(self.blank_node_property_list())
            else:
                items.append(self.term("list item"))
        self.advance()
        self.depth -= 1
        if not items:
            return RDF + "nil"
        nodes = [self.fresh_blank() for _ in items]
        for k, item in enumerate(items):
            rest = nodes[k + 1] if k + 1 < len(items) else RDF + "nil"
            self.emit(TriplePattern(nodes[k], RDF + "first", item), start)
            self.emit(TriplePattern(nodes[k], RDF + "rest", rest), start)
        return nodes[0]

    def term(self, position: str) -> PatternTerm:
        tok = self.tok
        if tok.kind == "VAR":
            self.advance()
            return Var(sys.intern(tok.text[1:]))
        if tok.kind in ("IRIREF", "PNAME"):
            return self.iri(self.advance())
        if tok.kind == "BNODE":
            self.advance()
            if self.bnode_scope.setdefault(tok.text, self.bgp_serial) != self.bgp_serial:
                msg = f"the blank node label {tok.text} is used in two basic graph patterns"
                raise self.error(msg, tok)
            label = self.bnode_labels.setdefault(tok.text, f"_{tok.text[2:]}")
            return Var(label)
        if tok.is_op("[") and self.peek().is_op("]"):
            self.advance()
            self.advance()
            return self.fresh_blank()
        if tok.is_op("("):
            return self.collection()
        literal = self.literal()
        if literal is None:
            raise self.error(f"expected a {position} but found {tok.describe()}")
        return literal

    def literal(self) -> Literal | None:
        tok = self.tok
        if tok.kind in ("STRING", "STRING_LONG"):
            self.advance()
            quote = 3 if tok.kind == "STRING_LONG" else 1
            try:
                text = _unescape(tok.text[quote:-quote])
            except ValueError as exc:
                raise self.error(f"bad escape sequence \\{exc} in a string", tok) from None
            if self.tok.kind == "LANGTAG":
                return Literal(text, lang=self.advance().text[1:])
            if self.tok.is_op("^^"):
                self.advance()
                if self.tok.kind not in ("IRIREF", "PNAME"):
                    raise self.error(f"expected a datatype IRI but found {self.tok.describe()}")
                return Literal(text, self.iri(self.advance()))
            return Literal(text)
        sign = ""
        if (
            tok.kind == "OP"
            and tok.text in "+-"
            and self.peek().kind in ("INTEGER", "DECIMAL", "DOUBLE")
        ):
            sign = tok.text  # kept: "+5" is another RDF term than "5"
            self.advance()
            tok = self.tok
        if tok.kind in _NUMERIC_TYPES:
            self.advance()
            return Literal(sign + tok.text, _NUMERIC_TYPES[tok.kind])
        if tok.kind == "NAME" and tok.text.lower() in ("true", "false"):  # keywords: any case
            self.advance()
            return Literal(tok.text.lower(), XSD + "boolean")
        return None

    def iri(self, tok: Token) -> str:
        """An IRI, interned: an index of many subscriptions holds each IRI once."""
        if tok.kind == "IRIREF":
            return self.iriref(tok)
        prefix, _, local = tok.text.partition(":")
        if prefix not in self.prefixes:
            raise self.error(f"unknown prefix {prefix!r}", tok)
        if "\\" in local:
            local = _LOCAL_ESCAPE(r"\1", local)
        return sys.intern(self.prefixes[prefix] + local)

    def iriref(self, tok: Token) -> str:
        iri = tok.text[1:-1]
        if self.base and not _SCHEME(iri):
            return sys.intern(_resolve(self.base, iri))
        if not _SCHEME(iri):
            raise self.error(f"relative IRI <{iri}> without a BASE", tok)
        return sys.intern(iri)

    # -- expressions -----------------------------------------------------------------------

    def constraint(self) -> Any:
        if self.tok.is_op("("):
            return self.bracketed()
        if self.tok.kind in ("NAME", "IRIREF", "PNAME"):
            return self.primary()
        raise self.error(
            f"expected '(' or a function call after FILTER but found {self.tok.describe()}"
        )

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
        if tok.kind == "VAR" or tok.kind in _NUMERIC_TYPES:  # a lone operand (the common case)
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
            if name in _UNSUPPORTED_KEYWORDS:
                raise self.unsupported(_UNSUPPORTED_KEYWORDS[name], tok)
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


def _resolve(base: str, reference: str) -> str:
    """RFC 3986 resolution (``urljoin`` drops an empty fragment: ``<#>`` against
    ``http://ex/x/`` must be ``http://ex/x/#``)."""
    if reference.startswith("#"):
        return base.partition("#")[0] + reference
    if reference == "":
        return base.partition("#")[0]
    return urljoin(base, reference)


def _arity(low: int, high: int) -> str:
    if high == ANY:
        return f"at least {low}"
    return str(low) if low == high else f"{low} to {high}"


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "uU" and len(code) > 1:  # (the lexer replaced them already)
            point = int(code[1:], 16)
            if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
                raise ValueError(code)
            return chr(point)
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise ValueError(code)

    return _ESCAPE_RE.sub(sub, text)


__all__ = ["RDF", "order_by_at", "parse_memo", "parse_query"]
