"""Every document is hostile: nesting deeper than ``max_document_depth`` (XML elements,
Turtle ``[``/``(``, JSON-LD ``{``/``[``) is refused before a parser sees the bytes, with the
line and column where the document gets too deep; ontologies pass the same screen."""

from __future__ import annotations

import xml.parsers.expat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import WORKLOADS

from semps.documents import read_triples
from semps.documents._depth import _xml_depths, screen_depth
from semps.errors import EventLimitExceeded, OntologyError, RDFSyntaxError
from semps.ingest.rdf import read_event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology import load_expansion

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
HEAD = f'<rdf:RDF xmlns:rdf="{RDF_NS}" xmlns:ex="http://ex/">\n<rdf:Description>'
TAIL = "</rdf:Description>\n</rdf:RDF>"
TOO_DEEP = "the document nests deeper than the limit of {} levels (max_document_depth)"


def nested_xml(levels: int, open_tag: str = '<ex:p rdf:parseType="Resource">') -> bytes:
    """RDF/XML whose deepest element is at depth ``levels + 2``."""
    return (HEAD + open_tag * levels + "</ex:p>" * levels + TAIL).encode()


def nested_turtle(levels: int) -> bytes:
    return (
        "<http://ex/a> <http://ex/p> " + "[ <http://ex/p> " * levels + "1" + " ]" * levels + " ."
    ).encode()


def nested_json(levels: int) -> bytes:
    body = '{"http://ex/p": ' * levels + "1" + "}" * levels
    return ('{"@id": "http://ex/a", "http://ex/p": ' + body + "}").encode()


def refusal(call: object) -> EventLimitExceeded:
    with pytest.raises(EventLimitExceeded) as info:
        call()  # type: ignore[operator]
    return info.value


# --- RDF/XML --------------------------------------------------------------------------------


def test_xml_at_the_limit_is_read_one_level_deeper_is_refused_where_it_gets_too_deep() -> None:
    limits = Limits(max_document_depth=10)
    assert len(read_event(nested_xml(8), event_id="e", limits=limits).triples) == 8
    error = refusal(lambda: read_event(nested_xml(9), event_id="e", limits=limits))
    assert str(error) == "2:" + str(len("<rdf:Description>") + 8 * 31 + 1) + ": " + TOO_DEEP.format(
        10
    )


def test_a_megabyte_of_nested_rdf_xml_is_refused_by_the_default_limit() -> None:
    data = nested_xml(40_000)
    assert len(data) > 1_000_000
    error = refusal(lambda: read_event(data, event_id="e"))
    assert error.detail == TOO_DEEP.format(128)
    assert (error.line, error.column) == (2, len("<rdf:Description>") + 126 * 31 + 1)


def test_nested_xml_literals_are_refused_before_rdflib_reads_them() -> None:
    literal = '<ex:p rdf:parseType="Literal">' + "<a>" * 50_000 + "</a>" * 50_000 + "</ex:p>"
    error = refusal(lambda: read_event((HEAD + literal + TAIL).encode(), event_id="e"))
    assert error.detail == TOO_DEEP.format(128)


def test_empty_elements_comments_cdata_and_instructions_do_not_nest() -> None:
    inner = (
        '<ex:q rdf:resource="http://ex/b"/>'
        "<!-- <a><a><a><a> --><?pi <a><a><a><a> ?>"
        '<ex:r rdf:parseType="Literal"><![CDATA[<a><a><a><a>]]></ex:r>'
    )
    data = ('<?xml version="1.0"?>\n' + HEAD + inner * 50 + TAIL).encode()
    screen_depth(data, "xml", 3)
    with pytest.raises(EventLimitExceeded):
        screen_depth(data, "xml", 2)


@pytest.mark.parametrize(
    "attribute",
    [
        """ex:x="a/>b" """,  # a quoted "/>": the tag is not empty
        """ex:x="it's" ex:y='say "hi"'""",  # both quote kinds
        """ex:x="a>b" """,  # a quoted ">"
    ],
)
def test_attributes_cannot_hide_nesting(attribute: str) -> None:
    data = nested_xml(200, f'<ex:p rdf:parseType="Resource" {attribute}>')
    error = refusal(lambda: screen_depth(data, "xml", 128))
    assert error.detail == TOO_DEEP.format(128)
    assert error.line == 2


def xml_depth(data: bytes) -> int:
    depth = deepest = 0

    def start(name: str, attrs: object) -> None:
        nonlocal depth, deepest
        depth += 1
        deepest = max(deepest, depth)

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1

    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.Parse(data, True)
    return deepest


PIECES = [
    "text",
    "a > b",
    'it\'s "quoted"',
    "<!-- <x> -->",
    "<![CDATA[ <x><x> ]]>",
    "<?pi <x> ?>",
    '<e a="1/>"/>',
    "<e a='x' b='y'/>",
    '<e a="it\'s"/>',
    '<e a="&gt;" />',
]


@st.composite
def xml_documents(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        if depth < 6 and draw(st.booleans()):
            attrs = draw(st.sampled_from(["", ' a="1"', " a='>'", ' a="/>"', " a='\"' b=\"'\""]))
            parts.append(f"<e{attrs}>{draw(xml_documents(depth + 1))}</e>")
        else:
            parts.append(draw(st.sampled_from(PIECES)))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(xml_documents())
def test_the_screened_xml_depth_is_expats(body: str) -> None:
    data = f"<?xml version='1.0'?><root>{body}</root>".encode()
    expected = xml_depth(data)
    found = _xml_depths(data)
    if found is not None:  # the vectorised reading is sure of every tag
        assert int(found[1].max()) == expected
    screen_depth(data, "xml", expected)
    with pytest.raises(EventLimitExceeded):
        screen_depth(data, "xml", expected - 1)


# --- Turtle, JSON-LD ------------------------------------------------------------------------


def test_turtle_at_the_limit_is_read_one_level_deeper_is_refused() -> None:
    limits = Limits(max_document_depth=10)
    assert len(read_triples(nested_turtle(10), media_type="text/turtle", limits=limits)) == 11
    error = refusal(
        lambda: read_triples(nested_turtle(11), media_type="text/turtle", limits=limits)
    )
    column = len("<http://ex/a> <http://ex/p> ") + 10 * len("[ <http://ex/p> ") + 1
    assert str(error) == f"1:{column}: " + TOO_DEEP.format(10)


def test_turtle_brackets_in_strings_iris_and_comments_do_not_nest() -> None:
    data = (
        b"@prefix ex: <http://ex/> .\n"
        b'# [[[[[[ ((((((\n<http://ex/a[[[[> ex:p "[[[[((((", \'((((\', """[[[[\n((((""", '
        b"'''[[[[''', \"esc \\\" [[[[\" ; ex:q ( ( 1 ) ) .\n"
    )
    screen_depth(data, "turtle", 2)
    error = refusal(lambda: screen_depth(data, "turtle", 1))
    assert (error.line, error.column) == (4, data.split(b"\n")[3].index(b"( 1") + 1)


def test_json_ld_at_the_limit_is_read_one_level_deeper_is_refused() -> None:
    limits = Limits(max_document_depth=12)
    read_triples(nested_json(11), media_type="application/ld+json", limits=limits)
    error = refusal(
        lambda: read_triples(nested_json(12), media_type="application/ld+json", limits=limits)
    )
    column = len('{"@id": "http://ex/a", "http://ex/p": ') + 11 * len('{"http://ex/p": ') + 1
    assert str(error) == f"1:{column}: " + TOO_DEEP.format(12)


def test_json_brackets_in_strings_do_not_nest() -> None:
    data = b'{"@id": "http://ex/a", "http://ex/p": ["[[[{{{\\"[[[", "}}}]]]"]}'
    screen_depth(data, "json", 2)
    with pytest.raises(EventLimitExceeded):
        screen_depth(data, "json", 1)


def test_n_triples_have_no_nesting_to_screen() -> None:
    data = b'<http://ex/a> <http://ex/p> "' + b"[" * 1000 + b'" .\n'
    assert len(read_triples(data, media_type="application/n-triples")) == 1


# --- ontologies -----------------------------------------------------------------------------


def test_the_ontology_loader_uses_the_same_screen() -> None:
    sub = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>"
    data = (
        f"<http://ex/C> {sub} " + f"[ {sub} " * 30_000 + "<http://ex/D>" + " ]" * 30_000 + " ."
    ).encode()
    with pytest.raises(OntologyError) as info:
        load_expansion(data, media_type="text/turtle")
    column = len(f"<http://ex/C> {sub} ") + 128 * len(f"[ {sub} ") + 1
    assert str(info.value) == (
        f"cannot parse ontology document: 1:{column}: " + TOO_DEEP.format(128)
    )


# --- what real documents need ---------------------------------------------------------------


@pytest.mark.parametrize("case", ["lubm-u0", "brick-a", "synthetic-s7", "w3c-rdf-xml"])
def test_the_shared_workloads_pass_the_default_screen(case: str) -> None:
    folder = WORKLOADS / case
    if not folder.exists():
        pytest.skip(f"no {folder}")
    syntax = {".rdf": "xml", ".owl": "xml", ".ttl": "turtle"}
    files = [p for p in Path(folder).rglob("*") if p.suffix in syntax]
    assert files
    for path in files:
        screen_depth(path.read_bytes(), syntax[path.suffix], DEFAULT_LIMITS.max_document_depth)


def test_markup_opened_inside_an_attribute_cannot_hide_nesting() -> None:
    """pyoxigraph reads ``ex:a="<!--"`` as a literal, so a screen that took it for a comment
    would miss the nesting up to ``ex:b="-->"``: such documents are read exactly (expat),
    which refuses ``<`` in an attribute value."""
    hidden = '<ex:p rdf:parseType="Resource">' * 1000 + "</ex:p>" * 1000
    body = f'<rdf:Description ex:a="<!--"/>{hidden}<rdf:Description ex:b="-->"/>'
    data = (HEAD + body + TAIL).encode()
    with pytest.raises(RDFSyntaxError) as info:
        read_event(data, event_id="e")
    assert str(info.value) == "2:41: malformed XML: not well-formed (invalid token)"


def test_a_doctype_is_read_exactly() -> None:
    dtd = '<!DOCTYPE rdf:RDF [<!ENTITY ex "http://ex/">]>\n'
    data = (dtd + HEAD + '<ex:p rdf:parseType="Resource">' * 200 + "</ex:p>" * 200 + TAIL).encode()
    error = refusal(lambda: read_event(data, event_id="e"))
    assert error.detail == TOO_DEEP.format(128)
    assert error.line == 3
    shallow = (dtd + HEAD + '<ex:p rdf:resource="&ex;b"/>' + TAIL).encode()
    assert read_event(shallow, event_id="e").triples[0][2] == "http://ex/b"
