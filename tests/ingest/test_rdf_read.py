"""Reading RDF documents into the event model."""

from __future__ import annotations

import tracemalloc

import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.documents import read_triples
from semps.errors import (
    DocumentTooLarge,
    HostileInputError,
    RDFSyntaxError,
    UnsupportedMediaType,
)
from semps.ingest.rdf import read_event
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://example.org/"
HEAD = (
    '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
    ' xmlns:ex="http://example.org/">\n'
)


def rdfxml(body: str) -> bytes:
    return (HEAD + body + "\n</rdf:RDF>").encode()


def test_typed_node_abbreviation_and_several_types() -> None:
    doc = rdfxml(
        '<ex:Auction rdf:about="http://example.org/a1">'
        '<rdf:type rdf:resource="http://example.org/Sale"/></ex:Auction>'
    )
    assert read_event(doc, event_id="e").triples == (
        (EX + "a1", RDF_TYPE, EX + "Auction"),
        (EX + "a1", RDF_TYPE, EX + "Sale"),
    )


def test_blank_nodes_by_node_id_and_anonymous() -> None:
    doc = rdfxml(
        '<rdf:Description rdf:nodeID="n1"><ex:knows rdf:nodeID="n2"/>'
        "<ex:owns><rdf:Description><ex:name>x</ex:name></rdf:Description></ex:owns>"
        "</rdf:Description>"
    )
    by_predicate = {p: (s, o) for s, p, o in read_event(doc, event_id="e").triples}
    n1, n2 = by_predicate[EX + "knows"]
    owner, owned = by_predicate[EX + "owns"]
    named, _ = by_predicate[EX + "name"]
    assert all(str(n).startswith("_:") for n in (n1, n2, owned))
    assert owner == n1 and named == owned and len({n1, n2, owned}) == 3


def test_literals_plain_typed_and_language_tagged() -> None:
    doc = rdfxml(
        '<rdf:Description rdf:about="http://example.org/x">'
        '<ex:d rdf:datatype="http://www.w3.org/2001/XMLSchema#date">2008-02-29</ex:d>'
        '<ex:l xml:lang="EN-gb">colour</ex:l><ex:p>plain</ex:p></rdf:Description>'
    )
    objects = [o for _, _, o in read_event(doc, event_id="e").triples]
    assert objects == [
        Literal("2008-02-29", XSD + "date"),
        Literal("colour", lang="en-gb"),
        Literal("plain"),
    ]


def test_relative_about_resolves_against_the_event_base() -> None:
    doc = rdfxml('<rdf:Description rdf:about=""><ex:p>v</ex:p></rdf:Description>')
    assert read_event(doc, event_id="d0").triples[0][0] == "urn:semps:event:d0/"
    given_base = read_event(doc, event_id="d0", base="http://u.edu/doc").triples
    assert given_base[0][0] == "http://u.edu/doc"


@pytest.mark.parametrize(
    ("media_type", "text"),
    [
        ("text/turtle", '<http://example.org/a> <http://example.org/p> "v" .'),
        (
            "application/n-triples; charset=utf-8",
            '<http://example.org/a> <http://example.org/p> "v" .',
        ),
        ("application/ld+json", '{"@id": "http://example.org/a", "http://example.org/p": "v"}'),
    ],
)
def test_other_syntaxes_by_media_type(media_type: str, text: str) -> None:
    triples = read_triples(text.encode(), media_type=media_type)
    assert triples == ((EX + "a", EX + "p", Literal("v")),)


def test_syntax_is_chosen_by_file_suffix() -> None:
    data = b'<http://example.org/a> <http://example.org/p> "v" .'
    assert read_triples(data, filename="x.ttl") == read_triples(data, filename="x.nt")


def test_unknown_media_type_is_refused() -> None:
    with pytest.raises(UnsupportedMediaType, match="unsupported media type 'text/csv'"):
        read_triples(b"a,b", media_type="text/csv")
    with pytest.raises(UnsupportedMediaType, match="no RDF reader for file suffix '.csv'"):
        read_triples(b"a,b", filename="x.csv")


def test_malformed_xml_reports_line_and_column() -> None:
    with pytest.raises(RDFSyntaxError) as info:
        read_event(rdfxml('<rdf:Description rdf:about="x">\n  <ex:p>v</ex:q>'), event_id="e")
    assert str(info.value) == "4:12: malformed XML: mismatched tag"
    assert (info.value.line, info.value.column) == (4, 12)


def test_malformed_turtle_reports_line_and_column() -> None:
    with pytest.raises(RDFSyntaxError) as info:
        read_triples(
            b"<http://a> <http://b> <http://c> .\n<http://a> <http://b> .", filename="x.ttl"
        )
    assert info.value.line == 2
    assert "2:" in str(info.value)


#: Documents whose parser message carried its own position, in each of pyoxigraph's forms
#: ("at line L between columns", "at line L column C", "between line L column C and ...").
POSITIONED = [
    ("text/turtle", b"@prefix ex: <http://ex/> .\nex:a ex:b ex:c ;; ] .", (2, 19)),
    ("text/turtle", b"@prefix ex: <http://ex/> .\nex:a ex:b 3 \n", (3, 1)),
    ("text/turtle", b'@prefix ex: <http://ex/> .\nex:a ex:b "x\n', (2, 11)),
    ("application/n-triples", b"<http://a> <http://b> <http://c>\n", (2, 1)),
    ("application/ld+json", b'{"@id": "http://a", "http://b": [}', (1, 34)),
]


@pytest.mark.parametrize(("media_type", "data", "where"), POSITIONED)
def test_a_syntax_error_states_its_position_once(
    media_type: str, data: bytes, where: tuple[int, int]
) -> None:
    with pytest.raises(RDFSyntaxError) as info:
        read_triples(data, media_type=media_type)
    line, column = where
    assert (info.value.line, info.value.column) == where
    message = str(info.value)
    assert message.startswith(f"{line}:{column}: ")
    assert "line" not in message and "column" not in message, message


def test_size_bound() -> None:
    with pytest.raises(DocumentTooLarge, match="document of 101 bytes exceeds the limit of 100"):
        read_triples(b" " * 101, media_type="text/turtle", max_bytes=100)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex/">
<rdf:Description rdf:about="http://ex/a"><ex:p>&lol9;</ex:p></rdf:Description></rdf:RDF>
"""


def test_billion_laughs_is_refused_before_parsing() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(HostileInputError) as info:
            read_event(BILLION_LAUGHS, event_id="e")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == "4:2: entity 'lol1' refers to other entities or markup"
    assert peak < 10_000_000


def test_quadratic_blowup_is_refused() -> None:
    value = "x" * 50_000
    refs = "&a;" * 100
    doc = (
        f'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "{value}">]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex/">'
        f'<rdf:Description rdf:about="http://ex/a"><ex:p>{refs}</ex:p></rdf:Description></rdf:RDF>'
    ).encode()
    with pytest.raises(HostileInputError, match="entity expansion exceeds 1048576 characters"):
        read_event(doc, event_id="e")


@pytest.mark.parametrize(
    ("decl", "message"),
    [
        ('<!ENTITY x SYSTEM "file:///etc/passwd">', "external entity 'x' refused (SYSTEM)"),
        ('<!ENTITY x PUBLIC "-//x" "http://evil/x">', "external entity 'x' refused (PUBLIC)"),
        ('<!ENTITY % p SYSTEM "http://evil/p">', "parameter entity 'p' refused"),
    ],
)
def test_external_and_parameter_entities_are_refused(decl: str, message: str) -> None:
    doc = f'<?xml version="1.0"?>\n<!DOCTYPE r [{decl}]>\n<r>&x;</r>'.encode()
    with pytest.raises(HostileInputError) as info:
        read_event(doc, event_id="e")
    assert str(info.value) == f"2:14: {message}"


def test_namespace_abbreviation_entities_are_fine() -> None:
    doc = b"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [<!ENTITY ex "http://example.org/">]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="&ex;">
<rdf:Description rdf:about="&ex;a"><ex:p rdf:resource="&ex;b"/></rdf:Description></rdf:RDF>"""
    assert read_event(doc, event_id="e").triples == ((EX + "a", EX + "p", EX + "b"),)


# --- round trip against rdflib's own reading (the oracle) -------------------------------

iris = st.sampled_from([EX + n for n in ("a", "b", "c", "p", "q")])
literals = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8).map(
        rdflib.Literal
    ),
    st.integers(-1000, 1000).map(rdflib.Literal),
    st.sampled_from(["en", "fr-be"]).map(lambda lang: rdflib.Literal("w", lang=lang)),
)
bnodes = st.sampled_from(["b1", "b2"]).map(rdflib.BNode)
triples = st.tuples(
    st.one_of(iris.map(rdflib.URIRef), bnodes),
    iris.map(rdflib.URIRef),
    st.one_of(iris.map(rdflib.URIRef), bnodes, literals),
)


def _canonical(triples_: tuple) -> set:
    """Blank node labels differ between readers: map them to their position of first use."""
    out = set()
    for s, p, o in triples_:
        o_key = o if isinstance(o, Literal) else str(o)
        out.add(
            (str(s).startswith("_:") or str(s), p, o_key if not str(o).startswith("_:") else True)
        )
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(triples, min_size=1, max_size=8), st.sampled_from(["xml", "turtle", "nt"]))
def test_round_trip_agrees_with_rdflib(graph_triples: list, fmt: str) -> None:
    graph = rdflib.Graph()
    for t in graph_triples:
        graph.add(t)
    data = graph.serialize(format=fmt, encoding="utf-8")
    media = {"xml": "application/rdf+xml", "turtle": "text/turtle", "nt": "application/n-triples"}
    ours = read_triples(data, media_type=media[fmt])
    theirs = rdflib.Graph().parse(data=data, format=fmt)
    assert len(ours) == len(theirs)
    expected = set()
    for s, p, o in theirs:
        if isinstance(o, rdflib.Literal):
            dt = str(o.datatype) if o.datatype else None
            o_key = Literal(str(o), dt, o.language)
        else:
            o_key = str(o)
        s_key = "_:" + str(s) if isinstance(s, rdflib.BNode) else str(s)
        o_final = "_:" + str(o) if isinstance(o, rdflib.BNode) else o_key
        expected.add((s_key, str(p), o_final))
    assert _canonical(ours) == _canonical(tuple(expected))
