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

__all__ = ["Rows", "read_plain", "read_plain_rows"]

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

#: Kinds of term, and those each position may take.
_IRI_KIND, _BLANK_KIND, _LITERAL_KIND = 0, 1, 2
_SUBJECT_KINDS = (_IRI_KIND, _BLANK_KIND)
_PREDICATE_KINDS = (_IRI_KIND,)
_OBJECT_KINDS = (_IRI_KIND, _BLANK_KIND, _LITERAL_KIND)
#: Terms kept at most (then the caches start again), and the longest kept.
_MAX_TERMS = 20_000
_MAX_TERM_CHARS = 256
#: Terms already checked, by the positions they may take: a subject (an IRI or a blank
#: node), a predicate (an IRI), an object (any). A line whose three texts are all known
#: costs three look-ups and no check.
_subjects: dict[str, Term] = {}
_predicates: dict[str, Term] = {}
_objects: dict[str, Term] = {}


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
    s_get, p_get, o_get = _subjects.get, _predicates.get, _objects.get
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
        s, p, o = s_get(s_text), p_get(p_text), o_get(o_text)
        if s is None or p is None or o is None:
            terms = _checked(s_text, p_text, o_text)
            if terms is None:
                return None
            s, p, o = terms
        out[(s, p, o)] = None  # type: ignore[index]
    return tuple(out)


#: Triples as three columns of indices into a table of terms (subjects, predicates, objects).
Rows = tuple[list[int], list[int], list[int]]


def read_plain_rows(data: bytes, ids: dict[Term, int], blank_prefix: str) -> Rows | None:
    """The triples of a plain N-Triples document as indices into ``ids`` (term -> index,
    grown with the terms first seen here), blank nodes ``_:x`` named ``blank_prefix + x``;
    ``None`` when the document is not plain. Lines repeat as the document does.

    A bulk load's reader: each distinct text is checked once for the whole document (no
    bounded cache), and no tuple is made per triple.

    Example:
        >>> ids = {}
        >>> read_plain_rows(b'<http://ex/a> <http://ex/p> _:b .\\n', ids, "_:d.")
        ([0], [1], [2])
        >>> list(ids)
        ['http://ex/a', 'http://ex/p', '_:d.b']
    """
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    checked: dict[str, tuple[int, int]] = {}  # text -> (kind, index), any position
    seen: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
    s_get, p_get, o_get = (cache.get for cache in seen)
    s_seen, p_seen, o_seen = seen
    out: Rows = ([], [], [])
    s_add, p_add, o_add = (column.append for column in out)
    for line in text.split("\n"):
        parts = line.split(" ")
        if len(parts) == 4 and parts[3] == ".":
            s_text, p_text, o_text, _ = parts
        else:
            if line.endswith("\r"):
                line = line[:-1]
            if not line.endswith(" ."):
                if line:
                    return None
                continue
            s_text, _, rest = line[:-2].partition(" ")
            p_text, _, o_text = rest.partition(" ")
        s = s_get(s_text)
        if s is None:
            s = _indexed(s_text, _SUBJECT_KINDS, s_seen, checked, ids, blank_prefix)
        p = p_get(p_text)
        if p is None:
            p = _indexed(p_text, _PREDICATE_KINDS, p_seen, checked, ids, blank_prefix)
        o = o_get(o_text)
        if o is None:
            o = _indexed(o_text, _OBJECT_KINDS, o_seen, checked, ids, blank_prefix)
        if s < 0 or p < 0 or o < 0:
            return None
        s_add(s)
        p_add(p)
        o_add(o)
    return out


def _indexed(
    text: str,
    kinds: tuple[int, ...],
    seen: dict[str, int],
    checked: dict[str, tuple[int, int]],
    ids: dict[Term, int],
    blank_prefix: str,
) -> int:
    """A text's index in a position (kept in ``seen``), checked once whatever the
    position (as :func:`_checked` does); ``-1`` if it is not plain or not of ``kinds``."""
    found = checked.get(text)
    if found is None:
        term = _term(text)
        if term is None:
            return -1
        value = blank_prefix + text[2:] if term[0] == _BLANK_KIND else term[1]
        found = checked[text] = (term[0], ids.setdefault(value, len(ids)))
    if found[0] not in kinds:
        return -1
    seen[text] = found[1]
    return found[1]


def _checked(s_text: str, p_text: str, o_text: str) -> Triple | None:
    """A line's terms, those not cached yet checked against the plain grammar and their
    positions and kept in the cache of their position; ``None`` if the line is not plain."""
    terms: list[Term] = []
    for cache, text, kinds in (
        (_subjects, s_text, _SUBJECT_KINDS),
        (_predicates, p_text, _PREDICATE_KINDS),
        (_objects, o_text, _OBJECT_KINDS),
    ):
        term = cache.get(text)
        if term is None:
            found = _term(text)
            if found is None or found[0] not in kinds:
                return None
            term = found[1]
            if len(text) <= _MAX_TERM_CHARS:
                if len(cache) >= _MAX_TERMS:
                    cache.clear()
                cache[text] = term
        terms.append(term)
    return (terms[0], terms[1], terms[2])  # type: ignore[return-value]


def _term(text: str) -> tuple[int, Term] | None:
    """A term checked against the plain grammar, with its kind; ``None`` if not plain."""
    found = _TERM.fullmatch(text)
    if found is None:
        return None
    iri, blank, lexical, datatype, language = found.groups()
    if iri is not None:
        return (_IRI_KIND, iri)
    if blank is not None:
        return (_BLANK_KIND, blank)
    if datatype in _NEEDS_LANGUAGE:
        return None
    return (_LITERAL_KIND, Literal(lexical, datatype, language))
