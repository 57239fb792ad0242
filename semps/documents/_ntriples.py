"""A fast reader for the plain N-Triples most events are: one triple a line, one space between
terms, ASCII IRIs, literals without escapes.

pyoxigraph spends most of an event's reading time making a Python object per term; events
repeat their IRIs (predicates, classes, datatypes, often nodes) from line to line and from
event to event. :func:`read_plain` splits each line on its spaces and looks each term up in
a bounded cache of terms already checked, so a term costs one dict lookup after its first
sight. A term is checked with a grammar that is a strict subset of what pyoxigraph accepts,
read exactly as pyoxigraph reads it (the tests hold the two readers to the same triples):

- IRIs: RFC 3987 over ASCII only (scheme, optional ``//`` authority with a registered name,
  path, query, fragment; ``%`` followed by two hex digits); pyoxigraph does not normalise
  them, neither does this;
- blank nodes: ``_:`` and ASCII letters, digits, ``_`` and ``-`` (not first);
- literals: no backslash, no control character; optional ``^^<datatype>`` (not the two
  ``rdf:`` datatypes that need a language) or ``@`` a language tag of the plainest BCP 47
  shape (language, optional script, optional region).

Anything else (a comment, a tab, two spaces, an escape, a non-ASCII IRI, a syntax error)
makes :func:`read_plain` return ``None`` and the caller hands the whole document to
pyoxigraph, which reads it or explains the error.
"""

from __future__ import annotations

import re

from semps._types import Term, Triple
from semps.terms import RDF, Literal

__all__ = ["read_plain"]

_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_REG_NAME = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*"
_USERINFO = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*"
_IRI = (
    r"[A-Za-z][A-Za-z0-9+.\-]*:"
    rf"(?://(?:{_USERINFO}@)?{_REG_NAME}(?::[0-9]*)?(?:/{_PCHAR}*)*"
    rf"|(?!//)(?:{_PCHAR}|/)*)"
    rf"(?:\?(?:{_PCHAR}|[/?])*)?"
    rf"(?:\#(?:{_PCHAR}|[/?])*)?"
)
_LANGUAGE = r"[a-zA-Z]{2,3}(?:-[a-zA-Z]{4})?(?:-(?:[a-zA-Z]{2}|[0-9]{3}))?"
_TERM = re.compile(
    rf"<({_IRI})>"
    r"|(_:[A-Za-z0-9_][A-Za-z0-9_\-]*)"
    rf'|"([^"\\\x00-\x1f\x7f]*)"(?:\^\^<({_IRI})>|@({_LANGUAGE}))?'
)
_NEEDS_LANGUAGE = frozenset({RDF + "langString", RDF + "dirLangString"})

#: Kinds of term, by position they may take.
_IRI_KIND, _BLANK_KIND, _LITERAL_KIND = 0, 1, 2
#: Terms kept at most (then the cache starts again), and the longest kept.
_MAX_TERMS = 20_000
_MAX_TERM_CHARS = 256
_terms: dict[str, tuple[int, Term]] = {}


def read_plain(data: bytes) -> tuple[Triple, ...] | None:
    """The triples of a plain N-Triples document (document order, no duplicates), or
    ``None`` when it is not plain (see the module docstring).

    Example:
        >>> read_plain(b'<http://ex/a> <http://ex/p> "1"^^<http://ex/t> .\\n')
        (('http://ex/a', 'http://ex/p', Literal('1', 'http://ex/t')),)
        >>> read_plain(b'<http://ex/a> <http://ex/p> "tab\\\\t" .') is None
        True
    """
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    out: dict[Triple, None] = {}
    get = _terms.get
    for line in text.split("\n"):
        parts = line.split(" ")
        if len(parts) == 4 and parts[3] == ".":  # the common line: no space in a literal
            s_text, p_text, o_text, _ = parts
        else:
            if line.endswith("\r"):
                line = line[:-1]
            if not line.endswith(" ."):
                if line:
                    return None
                continue  # an empty line
            s_text, _, rest = line[:-2].partition(" ")
            p_text, _, o_text = rest.partition(" ")
        s = get(s_text) or _term(s_text)
        p = get(p_text) or _term(p_text)
        o = get(o_text) or _term(o_text)
        if s is None or p is None or o is None or s[0] == _LITERAL_KIND or p[0] != _IRI_KIND:
            return None
        out[(s[1], p[1], o[1])] = None  # type: ignore[index]
    return tuple(out)


def _term(text: str) -> tuple[int, Term] | None:
    """A term checked against the plain grammar, kept in the cache; ``None`` if not plain."""
    found = _TERM.fullmatch(text)
    if found is None:
        return None
    iri, blank, lexical, datatype, language = found.groups()
    term: tuple[int, Term]
    if iri is not None:
        term = (_IRI_KIND, iri)
    elif blank is not None:
        term = (_BLANK_KIND, blank)
    elif datatype in _NEEDS_LANGUAGE:
        return None
    else:
        term = (_LITERAL_KIND, Literal(lexical, datatype, language))
    if len(text) <= _MAX_TERM_CHARS:
        if len(_terms) >= _MAX_TERMS:
            _terms.clear()
        _terms[text] = term
    return term
