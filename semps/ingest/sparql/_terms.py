"""RDF terms in a query: variables, IRIs (prefixed names resolved, relative IRIs against
the base), blank nodes and literals (strings with their escapes, numbers, booleans)."""

from __future__ import annotations

import re
import sys
from urllib.parse import urljoin

from semps.ingest.sparql._cursor import Cursor
from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql.model import PatternTerm, Var
from semps.terms import XSD, Literal

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
#: An absolute IRI starts with its scheme.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:").match
_LOCAL_ESCAPE = re.compile(r"\\(.)").sub
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
#: The numeric token kinds, each with the datatype of the literals it reads as.
NUMERIC_TOKENS = {
    k: sys.intern(XSD + t)
    for k, t in [("INTEGER", "integer"), ("DECIMAL", "decimal"), ("DOUBLE", "double")]
}


class TermParser(Cursor):
    """The terms of :class:`~semps.ingest.sparql.parser._Parser`."""

    base: str | None
    prefixes: dict[str, str]
    blank: int
    bnode_labels: dict[str, str]
    #: A blank node label belongs to one basic graph pattern (SPARQL 1.1 section 4.1.4):
    #: the serial of the pattern each label was first used in, by label.
    bnode_scope: dict[str, int]
    bgp_serial: int

    # -- provided by the triples' grammar (:mod:`._triples`) -------------------------------

    def collection(self) -> PatternTerm:
        raise NotImplementedError

    # -- terms -----------------------------------------------------------------------------

    def fresh_blank(self) -> Var:
        self.blank += 1
        return Var(f"_#{self.blank}")  # '#' is in no blank node label: no clash with _:b1

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
        if tok.kind in NUMERIC_TOKENS:
            self.advance()
            return Literal(sign + tok.text, NUMERIC_TOKENS[tok.kind])
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


def _resolve(base: str, reference: str) -> str:
    """RFC 3986 resolution (``urljoin`` drops an empty fragment: ``<#>`` against
    ``http://ex/x/`` must be ``http://ex/x/#``)."""
    if reference.startswith("#"):
        return base.partition("#")[0] + reference
    if reference == "":
        return base.partition("#")[0]
    return urljoin(base, reference)


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
