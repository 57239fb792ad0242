"""The group graph pattern grammar (the ``{ ... }`` of a WHERE clause) as a parser mixin.

It reads triples (with property paths and variable predicates), nested groups, UNION,
OPTIONAL, MINUS, FILTER (with EXISTS / NOT EXISTS), BIND and VALUES, and builds the SPARQL
algebra (:mod:`.algebra`) as SPARQL 1.1 section 18.2.2 translates a group: the elements
joined left to right, OPTIONAL as a LeftJoin carrying its group's FILTERs, MINUS and BIND
applied to what precedes them, the group's FILTERs over the whole group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError, UnsupportedQueryError
from semps.ingest.sparql import algebra as alg
from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql.filters import Expression
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.limits import Limits
from semps.terms import RDF_TYPE, Literal

_REFUSED = {"GRAPH": "GRAPH", "SERVICE": "SERVICE"}
_MODIFIERS = {"*": "star", "+": "plus", "?": "opt"}
#: Operators that continue a property path after an IRI.
_PATH_OPS = frozenset(("/", "|", *_MODIFIERS))
#: Words that start a group element other than triples (a '.' before them is optional).
_ELEMENTS = {"OPTIONAL", "MINUS", "FILTER", "BIND", "VALUES", "GRAPH", "SERVICE"}


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


class GroupParser:
    """What :class:`~semps.ingest.sparql.parser._Parser` parses between braces."""

    tokens: list[Token]
    i: int
    #: The current token, ``tokens[i]`` (an attribute: it is read a hundred times a query).
    tok: Token
    depth: int
    limits: Limits
    block: list[TriplePattern | alg.PathPattern]
    selected: list[tuple[str, Any]]
    #: Per expression being read, the EXISTS patterns found inside it (innermost last).
    exists_stack: list[list[tuple[str, alg.Exists]]]
    pattern_count: int
    element_count: int
    constructs: dict[str, None]
    bgp_serial: int

    # -- provided by the parser ------------------------------------------------------------

    def peek(self, offset: int = 1) -> Token:
        raise NotImplementedError

    def advance(self) -> Token:
        raise NotImplementedError

    def error(self, message: str, tok: Token | None = None) -> SubscriptionSyntaxError:
        raise NotImplementedError

    def unsupported(self, construct: str, tok: Token | None = None) -> UnsupportedQueryError:
        raise NotImplementedError

    def enter(self) -> None:
        raise NotImplementedError

    def expect_op(self, text: str) -> Token:
        raise NotImplementedError

    def term(self, position: str) -> PatternTerm:
        raise NotImplementedError

    def iri(self, tok: Token) -> str:
        raise NotImplementedError

    def literal(self) -> Literal | None:
        raise NotImplementedError

    def fresh_blank(self) -> Var:
        raise NotImplementedError

    def constraint(self) -> Any:
        raise NotImplementedError

    def expression(self) -> Any:
        raise NotImplementedError

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
            elif tok.is_op("{") or word in _ELEMENTS:
                node = self.group_element(self.flush(node), word)
                self.bgp_serial += 1  # the triples after it form another pattern
            else:
                self.triples_same_subject()
                nxt = self.tok
                if nxt.kind == "OP" and nxt.text == ".":
                    self.advance()
                elif not (
                    (nxt.kind == "OP" and nxt.text in ("{", "}"))
                    or (nxt.kind == "NAME" and nxt.text.upper() in _ELEMENTS)
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
            limit = self.limits.max_patterns
            msg = (
                f"the subscription has more than the limit of {limit} group elements "
                "(OPTIONAL, UNION, MINUS, BIND, VALUES, nested groups; max_patterns)"
            )
            raise SubscriptionLimitExceeded(msg, line=self.tok.line, column=self.tok.column)

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

    # -- triples ---------------------------------------------------------------------------

    def emit(self, pattern: TriplePattern | alg.PathPattern, tok: Token) -> None:
        if self.pattern_count >= self.limits.max_patterns:
            limit = self.limits.max_patterns
            msg = (
                f"the subscription has more than the limit of {limit} triple patterns "
                "(max_patterns)"
            )
            raise SubscriptionLimitExceeded(msg, line=tok.line, column=tok.column)
        self.pattern_count += 1
        self.block.append(pattern)

    def triples_same_subject(self) -> None:
        # "[ :p :o ]" and a non-empty "( ... )" may stand alone; "[]" and "()" may not.
        if self.tok.kind != "OP":  # a variable, an IRI or a literal (the common case)
            self.property_list(self.term(position="subject"))
            return
        if self.tok.is_op("[") and not self.peek().is_op("]"):
            subject = self.blank_node_property_list()
            if self.tok.is_op(".") or self.tok.is_op("}"):
                return
        else:
            collection = self.tok.is_op("(") and not self.peek().is_op(")")
            subject = self.term(position="subject")
            if collection and (self.tok.is_op(".") or self.tok.is_op("}")):
                return
        self.property_list(subject)

    def property_list(self, subject: PatternTerm) -> None:
        while True:
            verb = self.verb()
            while True:
                tok = self.tok
                obj = self.blank_node_property_list() if tok.is_op("[") else self.term("object")
                self.add_triple(subject, verb, obj, tok)
                if not self.tok.is_op(","):
                    break
                self.advance()
            if self.tok.text != ";" or self.tok.kind != "OP":
                return
            while self.tok.is_op(";"):
                self.advance()
            if self.tok.is_op(".") or self.tok.is_op("}") or self.tok.is_op("]"):
                return
            if self.tok.is_keyword(*_ELEMENTS) or self.tok.is_op("{"):
                return

    def add_triple(self, s: PatternTerm, verb: Var | alg.Path, o: PatternTerm, tok: Token) -> None:
        """A triple pattern; a path of links and inverse links in sequence becomes triple
        patterns joined by fresh blank variables (SPARQL 1.1 section 18.2.2.4)."""
        if isinstance(verb, Var):
            self.emit(TriplePattern(s, verb, o), tok)
            return
        if verb[0] == "link":  # one IRI (the common case)
            self.emit(TriplePattern(s, verb[1], o), tok)
            return
        steps = _simple_steps(verb)
        if steps is None:
            self.constructs.setdefault("property path")
            self.emit(alg.PathPattern(s, verb, o), tok)
            return
        if len(steps) > 1 or steps[0][1]:
            self.constructs.setdefault("property path")
        ends = [s, *(self.fresh_blank() for _ in steps[1:]), o]
        for k, (iri, inverse) in enumerate(steps):
            a, b = ends[k], ends[k + 1]
            self.emit(TriplePattern(b, iri, a) if inverse else TriplePattern(a, iri, b), tok)

    def verb(self) -> Var | alg.Path:
        tok = self.tok
        if tok.kind == "VAR":
            self.advance()
            self.constructs.setdefault("variable predicate")
            return Var(tok.text[1:])
        if tok.kind in ("IRIREF", "PNAME", "OP") or (tok.kind == "NAME" and tok.text == "a"):
            nxt = self.peek()
            if tok.kind != "OP" and (nxt.kind != "OP" or nxt.text not in _PATH_OPS):
                return ("link", self.path_iri())  # one IRI: what path() reads, sooner
            if tok.kind == "OP" and tok.text not in ("^", "!", "("):
                raise self.error(f"expected a predicate but found {tok.describe()}")
            return self.path()
        raise self.error(f"expected a predicate but found {tok.describe()}")

    def blank_node_property_list(self) -> PatternTerm:
        self.expect_op("[")
        self.enter()
        node = self.fresh_blank()
        if not self.tok.is_op("]"):
            self.property_list(node)
        self.expect_op("]")
        self.depth -= 1
        return node

    # -- property paths --------------------------------------------------------------------

    def path(self) -> alg.Path:
        """``seq | seq | ...``."""
        return self.path_list("|", self.path_sequence, "alt")

    def path_sequence(self) -> alg.Path:
        """``element / element / ...``."""
        return self.path_list("/", self.path_element, "seq")

    def path_list(self, op: str, item: Callable[[], alg.Path], tag: str) -> alg.Path:
        """One ``item``, or several separated by ``op`` as a ``(tag, items)`` path."""
        items = [item()]
        while self.tok.is_op(op):
            self.advance()
            items.append(item())
        return items[0] if len(items) == 1 else (tag, tuple(items))

    def path_element(self) -> alg.Path:
        inverse = self.tok.is_op("^")
        if inverse:
            self.advance()
        path = self.path_primary()
        tok = self.tok
        if tok.kind == "OP" and tok.text in _MODIFIERS:
            self.advance()
            path = (_MODIFIERS[tok.text], path)
        return ("inv", path) if inverse else path

    def path_primary(self) -> alg.Path:
        tok = self.tok
        if tok.is_op("("):
            self.advance()
            self.enter()
            path = self.path()
            self.expect_op(")")
            self.depth -= 1
            return path
        if tok.is_op("!"):
            self.advance()
            return self.negated_set()
        return ("link", self.path_iri())

    def path_iri(self) -> str:
        tok = self.tok
        if tok.kind == "NAME" and tok.text == "a":
            self.advance()
            return RDF_TYPE
        if tok.kind in ("IRIREF", "PNAME"):
            return self.iri(self.advance())
        raise self.error(f"expected a property path but found {tok.describe()}")

    def negated_set(self) -> alg.Path:
        """``!iri``, ``!^iri`` or ``!( iri | ^iri | ... )``."""
        forward: list[str] = []
        inverse: list[str] = []
        bracketed = self.tok.is_op("(")
        if bracketed:
            self.advance()
        while not (bracketed and self.tok.is_op(")")):
            if self.tok.is_op("^"):
                self.advance()
                inverse.append(self.path_iri())
            else:
                forward.append(self.path_iri())
            if not bracketed or not self.tok.is_op("|"):
                break
            self.advance()
        if bracketed:
            self.expect_op(")")
        return ("nps", tuple(sorted(set(forward))), tuple(sorted(set(inverse))))


def _simple_steps(path: alg.Path) -> list[tuple[str, bool]] | None:
    """A path of links and inverse links in sequence as ``(iri, inverse)`` steps, or
    ``None`` when it needs path evaluation."""
    items = path[1] if path[0] == "seq" else (path,)
    steps = []
    for item in items:
        if item[0] == "link":
            steps.append((item[1], False))
        elif item[0] == "inv" and item[1][0] == "link":
            steps.append((item[1][1], True))
        else:
            return None
    return steps
