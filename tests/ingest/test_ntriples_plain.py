"""The plain N-Triples reader reads exactly what pyoxigraph reads, or declines.

Oracle: pyoxigraph's own N-Triples parser (with the same term conversion). Whatever
document the plain reader accepts, pyoxigraph accepts too and gives the same triples in the
same order; a document pyoxigraph refuses, the plain reader declines (and ``read_triples``
then explains the error through pyoxigraph)."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semps.documents import read_triples
from semps.documents._ntriples import read_plain, read_plain_rows
from semps.errors import RDFSyntaxError
from semps.terms import RDF, XSD, Literal, n3


def oxigraph(data: bytes) -> tuple | None:
    """pyoxigraph's triples (no duplicates, document order), or ``None`` if it refuses."""
    try:
        quads = list(ox.parse(data, format=ox.RdfFormat.N_TRIPLES))
    except (SyntaxError, ValueError):
        return None

    def term(t: object) -> object:
        if isinstance(t, ox.NamedNode):
            return t.value
        if isinstance(t, ox.BlankNode):
            return "_:" + t.value
        assert isinstance(t, ox.Literal)
        return Literal(t.value, t.datatype.value, t.language)

    return tuple(dict.fromkeys((term(q.subject), term(q.predicate), term(q.object)) for q in quads))


# Pieces that make IRIs valid, invalid, or valid but outside the plain grammar.
IRI_PIECES = [
    "http://ex/",
    "urn:",
    "a:",
    "HTTP://EX/",
    "1a:",
    "foo",
    "",
    "a",
    "/",
    "//",
    "?",
    "#",
    "%41",
    "%zz",
    "%",
    ":",
    ":80",
    ":x",
    "@",
    "[::1]",
    "é",
    " ",
    "<",
    ">",
    '"',
    "{",
    "|",
    "^",
    "`",
    "\\",
    ".",
    "..",
    "./",
    "~",
    "!$&'()*+,;=",
    "-",
    "_",
    "\t",
    "\x00",
]
BLANK_PIECES = ["b", "B1", "_", "-", "1", ".", "é", "a.b", ":", " "]
LEXICAL_PIECES = ["", "x", "a b", "é", "\\n", '\\"', '"', "\t", "\x01", "'", " . ", "<a:b>"]
LANGUAGES = ["en", "EN-gb", "de-Latn-CH", "abcdefghi", "e", "en-", "x-private", "en--ltr", "1"]
DATATYPES = [
    XSD + "integer",
    XSD + "string",
    RDF + "langString",
    RDF + "dirLangString",
    "http://ex/t",
    "not an iri",
]

iris = st.lists(st.sampled_from(IRI_PIECES), min_size=1, max_size=5).map(
    lambda parts: "<" + "".join(parts) + ">"
)
plain_iris = st.sampled_from(["http://ex/a", "urn:x:y", "a:b/c?d#e", "http://u@h:8/p"]).map(
    lambda iri: f"<{iri}>"
)
blanks = st.lists(st.sampled_from(BLANK_PIECES), min_size=1, max_size=3).map(
    lambda parts: "_:" + "".join(parts)
)
literals = st.builds(
    lambda lexical, suffix: f'"{lexical}"{suffix}',
    st.lists(st.sampled_from(LEXICAL_PIECES), max_size=3).map("".join),
    st.one_of(
        st.just(""),
        st.sampled_from(DATATYPES).map(lambda d: f"^^<{d}>"),
        st.sampled_from(LANGUAGES).map(lambda lang: f"@{lang}"),
    ),
)
subjects = st.one_of(plain_iris, iris, blanks, literals)
objects = st.one_of(plain_iris, iris, blanks, literals)
separators = st.sampled_from([" ", " ", " ", "  ", "\t", ""])
ends = st.sampled_from([" .", " .", " .", ".", " . ", " .\r", " . # c"])
lines = st.one_of(
    st.builds(
        lambda s, a, p, b, o, end: f"{s}{a}{p}{b}{o}{end}",
        subjects,
        separators,
        st.one_of(plain_iris, iris, blanks),
        separators,
        objects,
        ends,
    ),
    st.sampled_from(["", "# a comment", " ", "\r"]),
)
documents = st.lists(lines, max_size=6).map("\n".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_whatever_the_plain_reader_accepts_pyoxigraph_reads_the_same(doc: str) -> None:
    data = doc.encode()
    plain = read_plain(data)
    if plain is not None:
        assert plain == oxigraph(data)
    assert as_triples(data) == plain


def as_triples(data: bytes, prefix: str = "_:") -> tuple | None:
    """The bulk reader's rows (``read_plain_rows``) as triples, repeats dropped."""
    ids: dict = {}
    rows = read_plain_rows(data, ids, prefix)
    if rows is None:
        return None
    terms = list(ids)
    return tuple(
        dict.fromkeys((terms[s], terms[p], terms[o]) for s, p, o in zip(*rows, strict=True))
    )


plain_terms = st.sampled_from(["http://ex/a", "urn:x", "a:b?c#d", "http://h:1/%20"])
plain_objects = st.one_of(
    plain_terms,
    st.sampled_from(["_:b0", "_:node-1"]),
    st.builds(
        Literal,
        st.text(st.characters(blacklist_categories=["Cc", "Cs"]), max_size=8).filter(
            lambda t: '"' not in t and "\\" not in t
        ),
        st.sampled_from([None, XSD + "integer", "http://ex/t"]),
    ),
    st.builds(Literal, st.just("chat"), st.none(), st.sampled_from(["fr", "en-GB", "zh-Hans-CN"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(plain_terms, plain_terms, plain_objects), max_size=12))
def test_plain_documents_are_read_without_pyoxigraph_and_alike(triples: list) -> None:
    doc = "".join(f"{n3(s)} {n3(p)} {n3(o)} .\n" for s, p, o in triples).encode()
    plain = read_plain(doc)
    assert plain is not None
    assert plain == oxigraph(doc) == tuple(dict.fromkeys(triples)) == as_triples(doc)


def test_a_document_the_plain_reader_declines_is_read_or_explained_by_pyoxigraph() -> None:
    escaped = b'<http://ex/a> <http://ex/p> "tab\\there" .\n'
    assert read_plain(escaped) is None
    assert read_triples(escaped, media_type="application/n-triples") == (
        ("http://ex/a", "http://ex/p", Literal("tab\there")),
    )
    broken = b"<http://ex/a> <http://ex/p> <http://ex:port/> .\n"
    assert read_plain(broken) is None
    with pytest.raises(RDFSyntaxError, match="^1:29: Invalid character"):
        read_triples(broken, media_type="application/n-triples")


def test_repeated_lines_are_one_triple_in_first_seen_order() -> None:
    doc = b"<a:s> <a:p> <a:o> .\n<a:s> <a:p> _:b .\r\n\n<a:s> <a:p> <a:o> .\n"
    assert read_triples(doc, media_type="application/n-triples") == (
        ("a:s", "a:p", "a:o"),
        ("a:s", "a:p", "_:b"),
    )


@pytest.mark.parametrize(
    "misplaced",
    [
        b'"x" <a:p> <a:o> .',  # a literal, known as an object, as a subject
        b'<a:s> "x" <a:o> .',  # ... as a predicate
        b"<a:s> _:b <a:o> .",  # a blank node, known as a subject and an object, as a predicate
    ],
)
def test_a_term_known_in_one_position_is_checked_again_in_another(misplaced: bytes) -> None:
    """The reader remembers terms by the positions they may take: a term read before as
    an object or a subject is no predicate (nor a literal a subject) for that."""
    known = b'<a:s> <a:p> "x" .\n_:b <a:p> _:b .\n'
    assert read_plain(known) is not None
    assert read_plain(known + misplaced) is None
    assert oxigraph(known + misplaced) is None
    assert as_triples(known) is not None
    assert as_triples(known + misplaced) is None


def test_the_bulk_reader_names_blank_nodes_with_its_prefix() -> None:
    doc = b"_:b <a:p> _:c .\n<a:s> <a:p> _:b .\n"
    assert as_triples(doc, "_:d1.") == (("_:d1.b", "a:p", "_:d1.c"), ("a:s", "a:p", "_:d1.b"))
