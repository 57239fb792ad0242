"""The group graph pattern grammar (the ``{ ... }`` of a WHERE clause), on the grammars of
the triples (:mod:`._triples`) and the expressions (:mod:`._expressions`) it holds.

It reads triples blocks, nested groups, UNION, OPTIONAL, MINUS, FILTER (with EXISTS / NOT
EXISTS), BIND and VALUES, and builds the SPARQL
algebra (:mod:`.algebra`) as SPARQL 1.1 section 18.2.2 translates a group: the elements
joined left to right, OPTIONAL as a LeftJoin carrying its group's FILTERs, MINUS and BIND
applied to what precedes them, the group's FILTERs over the whole group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semps.errors import SubscriptionLimitExceeded
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql._expressions import ExpressionParser
from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql._triples import ELEMENTS, TriplesParser
from semps.ingest.sparql.filters import Expression
from semps.ingest.sparql.model import TriplePattern, Var

_REFUSED = {"GRAPH": "GRAPH", "SERVICE": "SERVICE"}


def join(left: alg.Node | None, right: alg.Node) -> alg.Node:
    """``Join(left, right)``; the empty group is the identity and two BGPs merge."""
    if left is None or left == alg.BGP():
        return right
    if right == alg.BGP():
        return left
    if type(left) is alg.BGP and type(right) is alg.BGP:
        return alg.BGP(left.triples + right.triples)
    return alg.Join(left, right)


def basic_graph_pattern(
    node: alg.Node,
) -> tuple[tuple[TriplePattern, ...], tuple[Expression, ...]] | None:
    """The patterns and filters of a group that is a basic graph pattern with FILTERs (at
    least one pattern, constant predicates, no EXISTS), or ``None``: the fast path."""
    filters: tuple[Any, ...] = ()
    if isinstance(node, alg.Filter):
        filters = node.filters
        node = node.inner
        if any(type(f) is alg.Exists or type(f) is alg.WithExists for f in filters):
            return None
    if type(node) is not alg.BGP or not node.triples:
        return None
    triples = node.triples
    if any(type(t) is not TriplePattern or type(t.p) is Var for t in triples):
        return None
    return triples, filters  # type: ignore[return-value]


class GroupParser(TriplesParser, ExpressionParser):
    """What :class:`~semps.ingest.sparql.parser._Parser` parses between braces."""

    selected: list[tuple[str, Any]]
    #: Per expression being read, the EXISTS patterns found inside it (innermost last).
    exists_stack: list[list[tuple[str, alg.Exists]]]
    element_count: int

    # -- groups ----------------------------------------------------------------------------

    def group_graph_pattern(self, nested: bool = True) -> alg.Node:
        """``{ ... }``: a group, its elements joined and its FILTERs over the whole (a
        nested group is one level of ``max_query_depth``)."""
        self.expect_op("{")
        self.bgp_serial += 1  # a new basic graph pattern starts (blank node label scope)
        if nested:
            self.enter()
        if self.tok.is_keyword("SELECT"):
            raise self.unsupported("sub-query")
        node: alg.Node | None = None
        filters: list[Any] = []
        outer, self.block = self.block, []
        while True:
            tok = self.tok
            if tok.text == "}" and tok.kind == "OP":
                break
            if tok.kind == "EOF":
                raise self.error("expected '}' but found end of input")
            word = tok.text.upper() if tok.kind == "NAME" else ""
            if word == "FILTER":
                self.advance()
                filters.append(self.filter_constraint())
            elif tok.is_op("{") or word in ELEMENTS:
                node = self.group_element(self.flush(node), word)
                self.bgp_serial += 1  # the triples after it form another pattern
            else:
                self.triples_same_subject()
                nxt = self.tok
                if nxt.kind == "OP" and nxt.text == ".":
                    self.advance()
                elif not (
                    (nxt.kind == "OP" and nxt.text in ("{", "}"))
                    or (nxt.kind == "NAME" and nxt.text.upper() in ELEMENTS)
                ):
                    raise self.error(f"expected '.' or '}}' but found {nxt.describe()}")
                continue
            if self.tok.is_op("."):
                self.advance()
        self.advance()
        self.bgp_serial += 1
        self.depth -= nested
        node = self.flush(node)
        self.block = outer
        group = node if node is not None else alg.BGP()
        return alg.Filter(group, tuple(filters)) if filters else group

    def flush(self, node: alg.Node | None) -> alg.Node | None:
        """The group so far joined with the triples read since its last other element."""
        if not self.block:
            return node
        block, self.block = self.block, []
        return join(node, alg.BGP(tuple(block)))

    def group_element(self, node: alg.Node | None, word: str) -> alg.Node:
        """One element of a group other than triples and FILTER, applied to ``node``."""
        if word in _REFUSED:
            raise self.unsupported(_REFUSED[word])
        self.count_element()
        if word == "OPTIONAL":
            self.construct("OPTIONAL")
            right = self.group_graph_pattern()
            if isinstance(right, alg.Filter):
                return alg.LeftJoin(node or alg.BGP(), right.inner, right.filters)
            return alg.LeftJoin(node or alg.BGP(), right)
        if word == "MINUS":
            self.construct("MINUS")
            return alg.Minus(node or alg.BGP(), self.group_graph_pattern())
        if word == "BIND":
            return self.bind(node)
        if word == "VALUES":
            self.construct("VALUES")
            return join(node, self.values_block())
        return join(node, self.group_or_union())

    def count_element(self) -> None:
        """One more operator of the algebra (each deepens its tree by one): OPTIONAL,
        MINUS, UNION, BIND, VALUES and nested groups together stay within
        ``max_patterns``, so the tree's depth is bounded as its patterns are."""
        self.element_count += 1
        if self.element_count > self.limits.max_patterns:
            what = (
                "group elements (OPTIONAL, UNION, MINUS, BIND, VALUES, nested groups; max_patterns)"
            )
            raise self.too_many(self.limits.max_patterns, what)

    def construct(self, name: str) -> None:
        """Note a construct beyond basic graph patterns (and step over its keyword)."""
        self.constructs.setdefault(name)
        if name in ("OPTIONAL", "MINUS"):
            self.advance()

    def group_or_union(self) -> alg.Node:
        """``{ ... } UNION { ... } ...`` or one nested group."""
        node = self.group_graph_pattern()
        if not self.tok.is_keyword("UNION"):
            if node != alg.BGP() and type(node) is not alg.BGP:
                self.constructs.setdefault("nested group")
            return node
        while self.tok.is_keyword("UNION"):
            self.constructs.setdefault("UNION")
            self.count_element()
            self.advance()
            node = alg.Union(node, self.group_graph_pattern())
        return node

    def filter_constraint(self) -> Any:
        """A FILTER's constraint: ``EXISTS { }`` or ``NOT EXISTS { }`` alone (in any
        parentheses) as a whole; otherwise an expression, where EXISTS is a built-in call
        that may stand anywhere (``FILTER(EXISTS { ... } && NOT EXISTS { ... })``)."""
        opened = self.exists_alone()
        if opened is None:
            return self.with_exists(self.constraint)
        for _ in range(opened):
            self.advance()
        negated = self.tok.is_keyword("NOT")
        if negated:
            self.advance()
        self.advance()
        self.constructs.setdefault("NOT EXISTS" if negated else "EXISTS")
        found = alg.Exists(self.group_graph_pattern(), negated)
        for _ in range(opened):
            self.expect_op(")")
        return found

    def exists_alone(self) -> int | None:
        """The opening parentheses before an ``EXISTS { }`` / ``NOT EXISTS { }`` that is the
        whole constraint (as many closing ones follow its group), or ``None`` when the
        constraint is anything else. Looks ahead without reading."""
        opened = 0
        while self.peek(opened).is_op("("):
            opened += 1
        if not self.exists_ahead(opened):
            return None
        at = opened + (2 if self.peek(opened).is_keyword("NOT") else 1)
        depth = 0
        while True:  # to the group's closing brace (the lexer keeps braces in literals whole)
            tok = self.peek(at)
            if tok.kind == "EOF":
                return None
            if tok.is_op("{"):
                depth += 1
            elif tok.is_op("}"):
                depth -= 1
                if depth == 0:
                    break
            at += 1
        for k in range(1, opened + 1):
            if not self.peek(at + k).is_op(")"):
                return None
        return opened

    def with_exists(self, parse: Callable[[], Any]) -> Any:
        """An expression read by ``parse``, wrapped in :class:`WithExists` when EXISTS
        occurs inside it."""
        self.exists_stack.append([])
        try:
            ast = parse()
        finally:
            found = self.exists_stack.pop()
        expr = Expression(ast)
        return alg.WithExists(expr, tuple(found)) if found else expr

    def exists_in_expression(self, negated: bool) -> tuple[str, str]:
        """``EXISTS { }`` inside an expression (the keyword just read): the pattern, and a
        variable standing for its answer in the expression's AST."""
        tok = self.tok
        if not self.exists_stack:  # e.g. ORDER BY: outside FILTER, BIND and SELECT
            raise self.unsupported("EXISTS outside FILTER, BIND and SELECT", tok)
        self.constructs.setdefault("NOT EXISTS" if negated else "EXISTS")
        pattern = self.group_graph_pattern()
        name = f"\x00exists{sum(map(len, self.exists_stack))}.{len(self.exists_stack)}"
        self.exists_stack[-1].append((name, alg.Exists(pattern, negated)))
        return ("var", name)

    def exists_ahead(self, offset: int) -> bool:
        """True when ``EXISTS { `` or ``NOT EXISTS { `` starts ``offset`` tokens ahead,
        after any opening parentheses when ``offset`` is not 0."""
        while offset and self.peek(offset).is_op("("):
            offset += 1
        tok = self.peek(offset) if offset else self.tok
        if tok.is_keyword("EXISTS"):
            return self.peek(offset + 1).is_op("{")
        if tok.is_keyword("NOT") and self.peek(offset + 1).is_keyword("EXISTS"):
            return self.peek(offset + 2).is_op("{")
        return False

    def bind(self, node: alg.Node | None) -> alg.Node:
        """``BIND ( expression AS ?var )``: the group so far, extended."""
        start = self.advance()
        name, expr = self.expression_as()
        if node is not None and name in alg.in_scope(node):
            raise self.error(f"BIND assigns ?{name}, already in scope in the group", start)
        self.constructs.setdefault("BIND")
        return alg.Extend(node or alg.BGP(), name, expr)

    def values_block(self) -> alg.Values:
        """``VALUES ?x { ... }`` or ``VALUES (?x ?y) { (...) ... }``."""
        self.advance()
        names: list[str] = []
        single = self.tok.kind == "VAR"
        if single:
            names.append(self.advance().text[1:])
        else:
            self.expect_op("(")
            while self.tok.kind == "VAR":
                names.append(self.advance().text[1:])
            self.expect_op(")")
        if len(set(names)) != len(names):
            raise self.error("a variable is named twice in VALUES")
        self.expect_op("{")
        rows: list[tuple[Any, ...]] = []
        while not self.tok.is_op("}"):
            if single:
                rows.append((self.data_value(),))
                continue
            tok = self.expect_op("(")
            row = []
            while not self.tok.is_op(")"):
                row.append(self.data_value())
            self.advance()
            if len(row) != len(names):
                msg = f"a VALUES row has {len(row)} values for {len(names)} variables"
                raise self.error(msg, tok)
            rows.append(tuple(row))
        self.advance()
        if len(rows) > self.limits.max_patterns * 16:
            limit = self.limits.max_patterns * 16
            msg = f"VALUES has more than {limit} rows (16 x max_patterns)"
            raise SubscriptionLimitExceeded(msg, line=self.tok.line, column=self.tok.column)
        return alg.Values(tuple(names), tuple(rows))

    def data_value(self) -> Any:
        tok = self.tok
        if tok.is_keyword("UNDEF"):
            self.advance()
            return None
        if tok.kind in ("IRIREF", "PNAME"):
            return self.iri(self.advance())
        literal = self.literal()
        if literal is None:
            raise self.error(f"expected a VALUES term but found {tok.describe()}")
        return literal

    # -- the query around the group -------------------------------------------------------

    def select_expression(self) -> tuple[str, Any]:
        """``( expression AS ?var )`` in a SELECT clause."""
        self.count_element()
        name, expr = self.expression_as()
        self.constructs.setdefault("SELECT expression")
        return name, expr

    def expression_as(self) -> tuple[str, Any]:
        """``( expression AS ?var )`` (of BIND and SELECT): the variable's name and the
        expression."""
        self.expect_op("(")
        expr = self.with_exists(self.expression)
        if not self.tok.is_keyword("AS"):
            raise self.error(f"expected AS but found {self.tok.describe()}")
        self.advance()
        var = self.tok
        if var.kind != "VAR":
            raise self.error(f"expected a variable but found {var.describe()}")
        self.advance()
        self.expect_op(")")
        return var.text[1:], expr

    def selected_expressions(self, where: alg.Node, tok: Token) -> alg.Node:
        """The WHERE pattern extended by the SELECT clause's expressions, in order."""
        for name, expr in self.selected:
            if name in alg.in_scope(where):
                raise self.error(f"SELECT (... AS ?{name}): ?{name} is already in scope", tok)
            where = alg.Extend(where, name, expr)
        return where
