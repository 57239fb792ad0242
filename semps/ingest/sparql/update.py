"""SPARQL 1.1 Update on the default graph: the operations semps runs on its knowledge graph.

Parsed by the subscription parser's grammar (prologue, terms, triples, group graph patterns
with everything a WHERE clause may hold), into :class:`Update`: a sequence of
:class:`Operation` s separated by ``;``:

- ``INSERT DATA { triples }`` and ``DELETE DATA { triples }`` (no variables; no blank nodes
  in DELETE DATA);
- ``DELETE WHERE { triples }`` (the pattern is its own template);
- ``DELETE { template } INSERT { template } WHERE { pattern }`` (either template alone);
- ``CLEAR DEFAULT`` / ``CLEAR ALL`` (and ``DROP`` of those: the default graph is never
  dropped, only emptied), ``SILENT`` or not.

Refused with :class:`~semps.errors.UnsupportedUpdateError` (its ``construct`` says which):
``LOAD`` and ``SERVICE`` (semps never fetches remote data), ``GRAPH``, ``WITH``, ``USING``,
``CREATE``, ``ADD``, ``MOVE``, ``COPY`` and ``CLEAR``/``DROP`` of a named graph (the
knowledge graph is one default graph). Syntax errors are
:class:`~semps.errors.UpdateSyntaxError` with the line and column, like a subscription's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal as TypingLiteral

from semps.errors import (
    GraphLimitExceeded,
    SubscriptionLimitExceeded,
    SubscriptionSyntaxError,
    UnsupportedQueryError,
    UnsupportedUpdateError,
    UpdateSyntaxError,
)
from semps.ingest.sparql._lexer import Token, tokenize
from semps.ingest.sparql.algebra import BGP, Node, Path, PathPattern
from semps.ingest.sparql.model import PatternTerm, TriplePattern, Var
from semps.ingest.sparql.parser import _Parser
from semps.limits import DEFAULT_LIMITS, Limits

Kind = TypingLiteral["INSERT DATA", "DELETE DATA", "DELETE WHERE", "MODIFY", "CLEAR"]

_REMOTE = {"LOAD": "LOAD", "SERVICE": "SERVICE"}
_NAMED = {
    "GRAPH": "GRAPH (named graphs)",
    "WITH": "WITH (named graphs)",
    "USING": "USING (named graphs)",
    "CREATE": "CREATE (named graphs)",
    "ADD": "ADD (named graphs)",
    "MOVE": "MOVE (named graphs)",
    "COPY": "COPY (named graphs)",
}


@dataclass(frozen=True, slots=True)
class Operation:
    """One update operation.

    Attributes:
        kind: which operation (``MODIFY`` is ``DELETE``/``INSERT ... WHERE``).
        delete / insert: the triples (``DATA``) or templates (``WHERE``) deleted and
            inserted; a template's variables take each WHERE solution's values, its blank
            nodes (variables named ``_...``) are fresh for each solution.
        where: the pattern whose solutions instantiate the templates (``None`` for
            ``DATA`` and ``CLEAR``).
    """

    kind: Kind
    delete: tuple[TriplePattern, ...] = ()
    insert: tuple[TriplePattern, ...] = ()
    where: Node | None = None


@dataclass(frozen=True, slots=True)
class Update:
    """A parsed update request: its operations, run in order, all or nothing."""

    operations: tuple[Operation, ...]


@contextmanager
def _as_update_errors() -> Iterator[None]:
    """The shared grammar's errors, as an update's."""
    try:
        yield
    except SubscriptionSyntaxError as exc:
        raise UpdateSyntaxError(exc.detail, line=exc.line, column=exc.column) from None
    except UnsupportedQueryError as exc:
        detail = exc.detail.replace("in subscriptions", "in updates")
        if exc.construct == "SERVICE":
            detail = "SERVICE (semps never fetches remote data) is not supported in updates"
        raise UnsupportedUpdateError(
            detail, construct=exc.construct, line=exc.line, column=exc.column
        ) from None
    except SubscriptionLimitExceeded as exc:
        detail = exc.detail.replace("the subscription", "the update")
        raise GraphLimitExceeded(detail, line=exc.line, column=exc.column) from None
    except RecursionError:
        msg = "the update nests too deep for the parser (max_query_depth)"
        raise GraphLimitExceeded(msg) from None


def parse_update(text: str, *, base: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Update:
    """Parse a SPARQL 1.1 Update request (see the module docstring).

    ``limits``: ``max_update_bytes`` bounds the text, ``max_update_triples`` the triples of
    its ``DATA`` blocks and templates, ``max_patterns`` and ``max_query_depth`` each WHERE
    clause (as a subscription's).

    Raises:
        UpdateSyntaxError: the text is not valid (message starts ``line:col:``).
        UnsupportedUpdateError: valid SPARQL Update semps does not run.
        GraphLimitExceeded: the text passes one of ``limits``.

    Example:
        >>> u = parse_update("PREFIX ex: <http://ex/> INSERT DATA { ex:a ex:p 1 }")
        >>> u.operations[0].kind, u.operations[0].insert[0].p
        ('INSERT DATA', 'http://ex/p')
    """
    if not isinstance(text, str):
        msg = f"an update must be text, not {type(text).__name__}"
        raise UpdateSyntaxError(msg, line=1, column=1)
    size = len(text.encode("utf-8", "replace"))
    if size > limits.max_update_bytes:
        msg = (
            f"the update is {size} bytes, over the limit of {limits.max_update_bytes} bytes "
            "(max_update_bytes)"
        )
        raise GraphLimitExceeded(msg)
    with _as_update_errors():
        return _UpdateParser(tokenize(text), base, limits).update()


class _UpdateParser(_Parser):
    """The subscription parser, reading an update request."""

    def __init__(self, tokens: list[Token], base: str | None, limits: Limits) -> None:
        super().__init__(tokens, base, limits)
        self.template_triples = 0
        self.in_template = False
        #: What the template being read refuses: variables (DATA), blank nodes (DELETE).
        self.no_variables = False
        self.no_blanks = ""

    def update(self) -> Update:
        operations: list[Operation] = []
        while True:
            self.prologue()
            if self.tok.kind == "EOF":
                break
            operations.append(self.operation())
            if not self.tok.is_op(";"):
                break
            self.advance()
        if self.tok.kind != "EOF":
            raise self.error(
                f"expected ';' or the end of the update but found {self.tok.describe()}"
            )
        if not operations:
            raise self.error("expected an update operation but found end of input")
        return Update(tuple(operations))

    def refuse(self, construct: str) -> UnsupportedQueryError:
        msg = f"{construct} is not supported in updates of the knowledge graph"
        tok = self.tok
        return UnsupportedQueryError(msg, construct=construct, line=tok.line, column=tok.column)

    def operation(self) -> Operation:
        tok = self.tok
        word = tok.text.upper() if tok.kind == "NAME" else ""
        if word in _REMOTE:
            raise self.refuse(f"{_REMOTE[word]} (semps never fetches remote data)")
        if word in _NAMED:
            raise self.refuse(_NAMED[word])
        if word in ("CLEAR", "DROP"):
            return self.clear()
        if word == "INSERT":
            self.advance()
            if self.tok.is_keyword("DATA"):
                self.advance()
                return Operation("INSERT DATA", insert=self.data(blanks=True))
            insert = self.template(blanks=True, what="an INSERT template")
            return self.modify(delete=(), insert=insert)
        if word == "DELETE":
            self.advance()
            if self.tok.is_keyword("DATA"):
                self.advance()
                return Operation("DELETE DATA", delete=self.data(blanks=False))
            if self.tok.is_keyword("WHERE"):
                self.advance()
                patterns = self.template(blanks=False, what="DELETE WHERE")
                return Operation("DELETE WHERE", delete=patterns, where=BGP(patterns))
            delete = self.template(blanks=False, what="a DELETE template")
            insert = ()
            if self.tok.is_keyword("INSERT"):
                self.advance()
                insert = self.template(blanks=True, what="an INSERT template")
            return self.modify(delete=delete, insert=insert)
        raise self.error(f"expected INSERT, DELETE, CLEAR or DROP but found {tok.describe()}")

    def clear(self) -> Operation:
        self.advance()
        if self.tok.is_keyword("SILENT"):
            self.advance()
        if self.tok.is_keyword("DEFAULT", "ALL"):
            self.advance()
            return Operation("CLEAR")
        if self.tok.is_keyword("GRAPH", "NAMED"):
            raise self.refuse("CLEAR or DROP of a named graph")
        raise self.error(f"expected DEFAULT or ALL but found {self.tok.describe()}")

    def modify(
        self, delete: tuple[TriplePattern, ...], insert: tuple[TriplePattern, ...]
    ) -> Operation:
        if self.tok.is_keyword("USING", "WITH"):
            raise self.refuse(_NAMED[self.tok.text.upper()])
        if not self.tok.is_keyword("WHERE"):
            raise self.error(f"expected WHERE but found {self.tok.describe()}")
        self.advance()
        self.bnode_labels, self.bnode_scope = {}, {}  # the pattern's labels are its own
        where = self.group_graph_pattern(nested=False)
        return Operation("MODIFY", delete=delete, insert=insert, where=where)

    def data(self, blanks: bool) -> tuple[TriplePattern, ...]:
        """``{ ground triples }`` (blank nodes allowed when ``blanks``)."""
        self.no_variables = True
        try:
            return self.template(blanks=blanks, what="DATA")
        finally:
            self.no_variables = False

    def term(self, position: str) -> PatternTerm:
        tok = self.tok
        if self.in_template:
            if tok.kind == "VAR" and self.no_variables:
                raise self.error(f"a variable {tok.text} in DATA (only ground triples)")
            if self.no_blanks and (tok.kind == "BNODE" or tok.is_op("[")):
                raise self.error(f"a blank node in {self.no_blanks} (not allowed there)")
        return super().term(position)

    def blank_node_property_list(self) -> PatternTerm:
        if self.in_template and self.no_blanks:
            raise self.error(f"a blank node in {self.no_blanks} (not allowed there)")
        return super().blank_node_property_list()

    def template(self, blanks: bool, what: str) -> tuple[TriplePattern, ...]:
        """``{ triples }``: a block of triples (no paths, no groups, no FILTER)."""
        self.no_blanks = "" if blanks else what
        try:
            return self._template(blanks, what)
        finally:
            self.no_blanks = ""

    def _template(self, blanks: bool, what: str) -> tuple[TriplePattern, ...]:
        start = self.expect_op("{")
        if self.tok.is_keyword("GRAPH"):
            raise self.refuse(_NAMED["GRAPH"])
        self.bgp_serial += 1
        outer, self.block = self.block, []
        self.in_template = True
        try:
            while not self.tok.is_op("}"):
                if self.tok.kind == "EOF":
                    raise self.error("expected '}' but found end of input")
                if self.tok.is_keyword("GRAPH"):
                    raise self.refuse(_NAMED["GRAPH"])
                self.triples_same_subject()
                if self.tok.is_op("."):
                    self.advance()
                elif not self.tok.is_op("}"):
                    raise self.error(f"expected '.' or '}}' but found {self.tok.describe()}")
        finally:
            self.in_template = False
        self.advance()
        block, self.block = self.block, outer
        out: list[TriplePattern] = []
        for pattern in block:
            assert type(pattern) is TriplePattern  # (verb() refuses paths in a template)
            if not blanks and any(
                type(t) is Var and t.name.startswith("_") for t in (pattern.s, pattern.o)
            ):
                raise self.error(f"a blank node in {what} (not allowed there)", start)
            out.append(pattern)
        return tuple(out)

    def verb(self) -> Var | Path:
        tok = self.tok
        found = super().verb()
        if self.in_template and not isinstance(found, Var) and found[0] != "link":
            msg = "a property path in an update template (only IRIs and variables)"
            raise self.error(msg, tok)
        return found

    def emit(self, pattern: TriplePattern | PathPattern, tok: Token) -> None:
        if not self.in_template:
            super().emit(pattern, tok)
            return
        self.template_triples += 1
        if self.template_triples > self.limits.max_update_triples:
            # "the subscription" reads "the update" once _as_update_errors translates it
            what = "triples in its DATA blocks and templates (max_update_triples)"
            raise self.too_many(self.limits.max_update_triples, what, tok)
        self.block.append(pattern)
