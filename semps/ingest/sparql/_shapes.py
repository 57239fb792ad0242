"""Parsing by shape: subscriptions that differ only in their constants parse alike.

Subscriptions are often one template with different constants (``?x <p1> ?y`` and
``?x <p2> ?y``): the same tokens but for some IRIs, numbers and strings. A query's *shape*
is its tokens' texts with those constants replaced by their kind. The second time a shape
comes, its tokens are parsed once more with *probes* in the constants' places (values no
query of the shape holds otherwise); where each probe lands in the parsed query is the
shape's :class:`Template`, kept only if putting that text's own constants back in the
probes' places gives exactly what parsing it gave. Every later text of the shape is built
from the template and its constants (TriplePatterns, FILTER expressions rebuilt from their
AST, the Query), without parsing: about half the cost of a parse.

Only constants whose value the parser never looks at are slots, so that every text of a
shape goes down the same path of the parser:

- an IRI in ``<...>``: not a function's name (before ``(``), a datatype (after ``^^``), a
  prefix's IRI (after its name) or in a query with ``BASE``; it must be absolute (checked
  per text, as the parser does; a relative one is parsed, and refused, as before);
- an unsigned number (no ``+``/``-`` before it: a sign becomes part of the literal);
- a string without escapes in ``"..."`` or ``'...'``, not before a
  language tag or a datatype, in a query that calls neither REGEX nor REPLACE (their
  constant patterns are checked at parse time).

Only basic graph patterns with FILTERs (no algebra) get templates; texts parsed with a
``base`` never use them. Bounded: at most :data:`MAX_TOKENS` tokens and
:data:`MAX_SHAPE_CHARS` characters besides the constants a shape, :data:`MAX_SHAPES`
shapes and :data:`MAX_EXPRESSIONS` FILTER expressions (with constants of at most
:data:`MAX_MEMO_CHARS` characters) remembered (forgotten all at once when full), one set of limits
at a time (limits bound a shape's patterns and depth, equal for all its texts).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from semps.ingest.sparql._lexer import Token
from semps.ingest.sparql.filters import Expression
from semps.ingest.sparql.model import Query, TriplePattern
from semps.limits import Limits
from semps.terms import XSD, Literal

#: Tokens longer than this many make no template (a shape is kept with its texts).
MAX_TOKENS = 160
#: Shapes remembered (seen once, with a template, or found to have none).
MAX_SHAPES = 2048
#: Characters of a shape's own tokens (not its constants') past which it is not kept, and
#: of a FILTER's constants past which its expression is not kept.
MAX_SHAPE_CHARS = 2048
MAX_MEMO_CHARS = 256

_NUMBERS = {"INTEGER": XSD + "integer", "DECIMAL": XSD + "decimal", "DOUBLE": XSD + "double"}
_SLOT_KINDS = frozenset(("IRIREF", "STRING", *_NUMBERS))
#: A token's text in a shape for a constant of each kind (no token's text starts with NUL).
_MARKS = {kind: f"\x00{kind}" for kind in _SLOT_KINDS}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:").match
_SEEN_ONCE: Any = object()
_NO_TEMPLATE: Any = object()


class _Unbindable(Exception):
    """A constant the template cannot take as the parser would (parse the text)."""


class Template:
    """A shape's parsed query with probes in its constants' places, and where they are."""

    __slots__ = ("filters", "kinds", "patterns", "query")

    def __init__(self, query: Query, kinds: list[str], probes: list[Any]) -> None:
        at = {probe: k for k, probe in enumerate(probes)}
        self.query = query
        self.kinds = kinds
        #: Per pattern: the pattern itself when it holds no probe, else per position the
        #: slot (an int) or the term.
        self.patterns: list[Any] = []
        for tp in query.patterns:
            terms = (tp.s, tp.p, tp.o)
            spots = [_slot(at, term) for term in terms]
            if all(j is None for j in spots):
                self.patterns.append(tp)
            else:
                self.patterns.append(
                    tuple(t if j is None else j for t, j in zip(terms, spots, strict=True))
                )
        #: Per filter: the expression itself when its AST holds no probe, else the
        #: expression with the probes and the slots its AST holds (in order).
        self.filters: list[Any] = []
        for f in query.filters:
            used = _slots_in(f.ast, at)  # type: ignore[attr-defined]
            self.filters.append((f, at, tuple(used)) if used else f)

    def bind(self, texts: list[str]) -> Query:
        """The query of the shape with these constants (the slot tokens' texts).

        Raises:
            _Unbindable: a constant the parser would treat otherwise (relative IRI, ...).
        """
        values = [_value(kind, text) for kind, text in zip(self.kinds, texts, strict=True)]
        patterns = []
        for p in self.patterns:
            if type(p) is not TriplePattern:
                s, pred, o = p
                p = TriplePattern(
                    values[s] if type(s) is int else s,
                    values[pred] if type(pred) is int else pred,
                    values[o] if type(o) is int else o,
                )
            patterns.append(p)
        filters: list[Any] = []
        for spec in self.filters:
            if type(spec) is Expression:
                f = spec
            else:
                probed, at, used = spec
                f = _expression(probed, at, used, values)
                if f in filters:  # one object per FILTER, as the parser makes them
                    f = Expression(f.ast)
            filters.append(f)
        q = self.query
        return Query(
            q.form, q.projection, q.distinct, tuple(patterns), tuple(filters), None, q.constructs
        )


#: FILTER expressions by the template's expression and its slots' values: the same
#: FILTER in many subscriptions is compiled once (expressions are immutable). Bounded:
#: cleared when full.
_EXPRESSIONS: dict[tuple[Expression, tuple[Any, ...]], Expression] = {}
MAX_EXPRESSIONS = 8192


def _expression(
    probed: Expression, at: dict[Any, int], used: tuple[int, ...], values: list[Any]
) -> Expression:
    constants = tuple([values[j] for j in used])
    size = sum(len(c[0]) if type(c) is Literal else len(c) for c in constants)
    if size > MAX_MEMO_CHARS:  # long constants: not kept (each entry stays small)
        return Expression(_substituted(probed.ast, at, values))
    key = (probed, constants)
    found = _EXPRESSIONS.get(key)
    if found is None:
        if len(_EXPRESSIONS) >= MAX_EXPRESSIONS:
            _EXPRESSIONS.clear()
        found = _EXPRESSIONS[key] = Expression(_substituted(probed.ast, at, values))
    return found


def _slot(at: dict[Any, int], term: object) -> int | None:
    return at.get(term) if type(term) is str or type(term) is Literal else None


def _slots_in(node: object, at: dict[Any, int]) -> list[int]:
    """The slots of the probes among the AST's leaves (lists and tuples are nodes; a
    Literal is a leaf), each once, in order."""
    found: dict[int, None] = {}
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is tuple or type(item) is list:
            stack.extend(item)
        elif (type(item) is str or type(item) is Literal) and item in at:
            found[at[item]] = None
    return sorted(found)


def _substituted(node: Any, at: dict[Any, int], values: list[Any]) -> Any:
    """The AST with each probe leaf replaced by its slot's value; lists and tuples rebuilt
    as they were (an explicit stack: no recursion however deep the AST)."""
    stack: list[tuple[Any, Any, list[Any]]] = [(node, iter(node), [])]
    while True:
        container, items, out = stack[-1]
        for item in items:
            if type(item) is tuple or type(item) is list:
                stack.append((item, iter(item), []))
                break
            if type(item) is str or type(item) is Literal:
                k = at.get(item)
                if k is not None:
                    item = values[k]
            out.append(item)
        else:
            stack.pop()
            built = tuple(out) if type(container) is tuple else out
            if not stack:
                return built
            stack[-1][2].append(built)


def _value(kind: str, text: str) -> Any:
    """What the parser makes of a slot token (see the module doc for when it may)."""
    if kind == "IRIREF":
        iri = text[1:-1]
        if not _SCHEME(iri):
            raise _Unbindable(text)
        return sys.intern(iri)
    if kind == "STRING":
        return Literal(text[1:-1])
    return Literal(text, _NUMBERS[kind])


def shape_of(tokens: list[Token]) -> tuple[tuple[str, ...], list[int]] | None:
    """The tokens' shape and the positions of its slots, or ``None`` for none to keep."""
    if len(tokens) > MAX_TOKENS:
        return None
    texts: list[str] = []
    slots: list[int] = []
    strings = True
    prev_kind = prev_text = ""
    chars = 0
    for i, (kind, text, _, _) in enumerate(tokens):
        if kind in _SLOT_KINDS and (
            (kind == "IRIREF" and prev_kind != "PNAME" and prev_text != "^^")
            or (kind == "STRING" and "\\" not in text)
            or (kind in _NUMBERS and not (prev_kind == "OP" and prev_text in ("+", "-")))
        ):
            texts.append(_MARKS[kind])
            slots.append(i)
        else:
            texts.append(text)
            chars += len(text)
            if (
                slots
                and slots[-1] == i - 1
                and (
                    (prev_kind == "IRIREF" and text == "(" and kind == "OP")
                    or (prev_kind == "STRING" and (kind == "LANGTAG" or text == "^^"))
                )
            ):  # a function's name, a string with a language tag or a datatype
                texts[i - 1] = prev_text
                chars += len(prev_text)
                slots.pop()
            elif kind == "NAME" and len(text) in (4, 5, 7):
                word = text.upper()
                if word == "BASE":
                    return None
                if word == "REGEX" or word == "REPLACE":
                    strings = False
        prev_kind, prev_text = kind, text
    if chars > MAX_SHAPE_CHARS:
        return None
    if not strings:  # REGEX and REPLACE check their constant patterns when parsed
        for i in [i for i in slots if tokens[i].kind == "STRING"]:
            texts[i] = tokens[i].text
        slots = [i for i in slots if tokens[i].kind != "STRING"]
    return tuple(texts), slots


class Shapes:
    """The shapes seen under one set of limits, and their templates."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.found: dict[tuple[str, ...], Any] = {}

    def parse(self, tokens: list[Token], parse: Callable[[list[Token]], Query]) -> Query:
        """``parse(tokens)``, or the same query built from the shape's template."""
        shape = shape_of(tokens)
        if shape is None:
            return parse(tokens)
        key, slots = shape
        found = self.found.get(key)
        if type(found) is Template:
            try:
                return found.bind([tokens[i].text for i in slots])
            except Exception:  # noqa: BLE001 - the parser says what is wrong, and where
                return parse(tokens)
        query = parse(tokens)
        if found is None:
            if len(self.found) >= MAX_SHAPES:
                self.found.clear()
            self.found[key] = _SEEN_ONCE
        elif found is _SEEN_ONCE:
            self.found[key] = _template(tokens, slots, query, parse)
        return query


def _template(
    tokens: list[Token], slots: list[int], query: Query, parse: Callable[[list[Token]], Query]
) -> Template | Any:
    """The shape's template, checked on this text (``query`` is its parse), or
    :data:`_NO_TEMPLATE`."""
    if query.algebra is not None:
        return _NO_TEMPLATE
    kinds = [tokens[i].kind for i in slots]
    probed = list(tokens)
    probes: list[Any] = []
    for k, i in enumerate(slots):
        tok = tokens[i]
        text = _probe_text(tok.kind, k)
        probed[i] = Token(tok.kind, text, tok.line, tok.column)
        probes.append(_value(tok.kind, text))
    try:
        template = Template(parse(probed), kinds, probes)
        again = template.bind([tokens[i].text for i in slots])
    except Exception:  # noqa: BLE001 - a shape the probes do not parse alike: no template
        return _NO_TEMPLATE
    if template.query.algebra is not None or again != query:
        return _NO_TEMPLATE
    return template


def _probe_text(kind: str, k: int) -> str:
    """A token of ``kind`` no subscription writes (the ``k``-th of the shape)."""
    return _PROBES[kind].format(k)


_PROBES = {
    "IRIREF": "<urn:x-semps-probe:{}>",
    "STRING": '"\x01probe {}"',
    "INTEGER": "7130000000000000000{}",
    "DECIMAL": "7130000000000000000.{}1",
    "DOUBLE": "7130000000000000000e{}",
}
