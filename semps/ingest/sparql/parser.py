"""A hand-written recursive-descent parser for the subscription fragment of SPARQL 1.1.

Fast enough to register tens of thousands of subscriptions a second (rdflib's parser takes
~11 ms each), and strict: anything outside the fragment is refused with an
:class:`~semps.errors.UnsupportedQueryError` naming the construct.

The query's frame (prologue, SELECT or ASK, modifiers) is read here; the grammar within is
built up in layers, each a class on the one below: the token cursor and its errors
(:mod:`._cursor`), terms (:mod:`._terms`), then triples with property paths
(:mod:`._triples`) and expressions (:mod:`._expressions`), then groups (:mod:`._group`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError
from semps.ingest.sparql._group import GroupParser, basic_graph_pattern, join
from semps.ingest.sparql._lexer import Token, tokenize
from semps.ingest.sparql._shapes import Shapes
from semps.ingest.sparql.filters import Expression
from semps.ingest.sparql.model import Query, TriplePattern
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import RDF

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


__all__ = ["RDF", "order_by_at", "parse_memo", "parse_query"]
