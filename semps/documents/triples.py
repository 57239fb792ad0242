"""Read RDF documents (RDF/XML first; Turtle, N-Triples, JSON-LD) into triples.

The fast path is pyoxigraph's Rust parsers (hundreds of thousands of triples a second);
rdflib reads the documents pyoxigraph gets wrong (XML literals, which must be canonicalised)
and explains RDF/XML errors with a position. Every document is screened for hostile DTDs
and bounded in size before a parser sees it, and a document either becomes all its triples
or raises an :class:`~semps.errors.IngestError`. Events (:mod:`semps.ingest.rdf`) and
ontologies (:mod:`semps.ontology.load`) both read documents through here.
"""

from __future__ import annotations

import logging
import re
import xml.parsers.expat
import xml.sax
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePath
from typing import Any, TypedDict, Unpack

import pyoxigraph as ox

from semps._types import Term, Triple
from semps.documents._depth import screen_depth
from semps.documents._ntriples import Rows, read_plain, read_plain_rows
from semps.documents._screen import screen_xml
from semps.errors import (
    DocumentTooLarge,
    IngestError,
    RDFSyntaxError,
    SempsError,
    UnsupportedMediaType,
)
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import Literal

__all__ = [
    "DEFAULT_MAX_BYTES",
    "SUPPORTED_MEDIA_TYPES",
    "ReadOptions",
    "Rows",
    "errors_as",
    "media_type_for",
    "read_rows",
    "read_triples",
]

#: Documents larger than this are refused (LUBM department documents are ~600 KB).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

RDF_XML = "application/rdf+xml"
TURTLE = "text/turtle"
N_TRIPLES = "application/n-triples"
JSON_LD = "application/ld+json"

#: Media type -> pyoxigraph format. Aliases map onto the canonical four.
SUPPORTED_MEDIA_TYPES: dict[str, ox.RdfFormat] = {
    RDF_XML: ox.RdfFormat.RDF_XML,
    "application/xml": ox.RdfFormat.RDF_XML,
    "text/xml": ox.RdfFormat.RDF_XML,
    TURTLE: ox.RdfFormat.TURTLE,
    "application/x-turtle": ox.RdfFormat.TURTLE,
    N_TRIPLES: ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES,
    JSON_LD: ox.RdfFormat.JSON_LD,
}

_SUFFIXES = {
    ".rdf": RDF_XML,
    ".owl": RDF_XML,
    ".xml": RDF_XML,
    ".ttl": TURTLE,
    ".nt": N_TRIPLES,
    ".jsonld": JSON_LD,
    ".json-ld": JSON_LD,
}

#: How :func:`screen_depth` reads each format's nesting (N-Triples has none).
_NESTING = {
    ox.RdfFormat.RDF_XML: "xml",
    ox.RdfFormat.TURTLE: "turtle",
    ox.RdfFormat.JSON_LD: "json",
}

_XML_LITERAL = re.compile(rb"parseType\s*=\s*[\"']Literal[\"']")


def media_type_for(filename: str) -> str:
    """The media type semps reads a file as, from its suffix.

    Example:
        >>> media_type_for("u0-d00.rdf"), media_type_for("g.ttl")
        ('application/rdf+xml', 'text/turtle')
    """
    suffix = PurePath(filename).suffix.lower()
    try:
        return _SUFFIXES[suffix]
    except KeyError:
        known = ", ".join(sorted(_SUFFIXES))
        msg = f"no RDF reader for file suffix {suffix or '(none)'!r} (known: {known})"
        raise UnsupportedMediaType(msg) from None


def _format_for(media_type: str | None, filename: str | None) -> tuple[str, ox.RdfFormat]:
    if media_type is None:
        media_type = media_type_for(filename) if filename else RDF_XML
    canonical = media_type.split(";", 1)[0].strip().lower()
    fmt = SUPPORTED_MEDIA_TYPES.get(canonical)
    if fmt is None:
        known = ", ".join(sorted(SUPPORTED_MEDIA_TYPES))
        msg = f"unsupported media type {canonical!r} (supported: {known})"
        raise UnsupportedMediaType(msg)
    return canonical, fmt


class ReadOptions(TypedDict, total=False):
    """How :func:`read_triples` reads a document (its keyword arguments but ``base``), for
    readers built on it to pass along."""

    media_type: str | None
    filename: str | None
    max_bytes: int
    limits: Limits


def read_triples(
    data: bytes,
    *,
    media_type: str | None = None,
    filename: str | None = None,
    base: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Triple, ...]:
    """Parse ``data`` into triples (document order, no duplicates).

    The syntax comes from ``media_type``, else from ``filename``'s suffix, else RDF/XML.
    Before a parser sees them, the bytes are screened: DTD tricks, and nesting deeper than
    ``limits.max_document_depth`` (XML elements, Turtle ``[``/``(``, JSON-LD ``{``/``[``).

    Raises:
        DocumentTooLarge: ``data`` is longer than ``max_bytes``.
        UnsupportedMediaType: no reader for the media type or suffix.
        HostileInputError: the DTD declares external, parameter or nested entities.
        EventLimitExceeded: the document nests deeper than ``limits.max_document_depth``
            (message starts with the ``line:col:`` where it does).
        RDFSyntaxError: the document is malformed (message starts with ``line:col:``).

    Example:
        >>> read_triples(b'<http://ex/a> <http://ex/p> "1"^^<http://ex/t> .',
        ...              media_type="application/n-triples")
        (('http://ex/a', 'http://ex/p', Literal('1', 'http://ex/t')),)
    """
    _check_size(data, max_bytes)
    canonical, fmt = _format_for(media_type, filename)
    if fmt == ox.RdfFormat.N_TRIPLES:  # no nesting to screen; plain lines read without ox
        plain = read_plain(data)
        if plain is not None:
            return plain
    elif fmt == ox.RdfFormat.RDF_XML:
        screen_xml(data)
    screen_depth(data, _NESTING.get(fmt, ""), limits.max_document_depth)
    if fmt == ox.RdfFormat.RDF_XML and _XML_LITERAL.search(data):
        return _read_with_rdflib(data, base)
    try:
        return tuple(dict.fromkeys(_convert(ox.parse(data, format=fmt, base_iri=base))))
    except SyntaxError as exc:
        raise _syntax_error(exc, data, fmt, base) from exc
    except (ValueError, OSError) as exc:
        raise RDFSyntaxError(f"{canonical}: {exc}") from exc


def read_rows(
    data: bytes,
    ids: dict[Term, int],
    *,
    blank_prefix: str,
    base: str | None = None,
    **options: Unpack[ReadOptions],
) -> Rows:
    """:func:`read_triples`' triples as three columns of indices into ``ids`` (term ->
    index, grown with new terms), each blank node ``_:x`` named ``blank_prefix + x``
    (a bulk load's reader: plain N-Triples go from lines to indices with no tuple a
    triple). A triple may repeat. ``base`` and ``options`` as :func:`read_triples` takes
    them.

    Raises:
        The errors of :func:`read_triples`.

    Example:
        >>> ids = {}
        >>> read_rows(b'<http://ex/a> <http://ex/p> <http://ex/a> .', ids, blank_prefix="_:",
        ...           media_type="application/n-triples")
        ([0], [1], [0])
    """
    _check_size(data, options.get("max_bytes", DEFAULT_MAX_BYTES))
    fmt = _format_for(options.get("media_type"), options.get("filename"))[1]
    if fmt == ox.RdfFormat.N_TRIPLES:  # plain lines go to indices with no tuple a triple
        rows = read_plain_rows(data, ids, blank_prefix)
        if rows is not None:
            return rows
    out: Rows = ([], [], [])
    for triple in read_triples(data, base=base, **options):
        for column, term in zip(out, triple, strict=True):
            if type(term) is str and term.startswith("_:"):
                term = blank_prefix + term[2:]
            column.append(ids.setdefault(term, len(ids)))
    return out


def _check_size(data: bytes, max_bytes: int) -> None:
    if len(data) > max_bytes:
        msg = f"document of {len(data)} bytes exceeds the limit of {max_bytes} bytes"
        raise DocumentTooLarge(msg)


def _convert(quads: Iterator[ox.Triple | ox.Quad]) -> Iterator[Triple]:
    named, blank, literal = ox.NamedNode, ox.BlankNode, ox.Literal
    for t in quads:
        s: Any = t.subject
        o: Any = t.object
        subject = s.value if type(s) is named else "_:" + s.value
        kind = type(o)
        obj: Term
        if kind is named:
            obj = o.value
        elif kind is literal:
            obj = Literal(o.value, o.datatype.value, o.language)
        elif kind is blank:
            obj = "_:" + o.value
        else:
            msg = "RDF-star quoted triples are not supported"
            raise RDFSyntaxError(msg)
        yield (subject, t.predicate.value, obj)


def _syntax_error(
    exc: SyntaxError, data: bytes, fmt: ox.RdfFormat, base: str | None
) -> IngestError:
    message = str(exc.msg or exc)
    if exc.lineno is not None:
        return RDFSyntaxError(_strip_position(message), line=exc.lineno, column=exc.offset)
    if fmt == ox.RdfFormat.RDF_XML:
        return _locate_xml_error(data, base, message)
    return RDFSyntaxError(message)


#: pyoxigraph's own statement of a position, which the error states once as ``line:col:``.
_OXIGRAPH_POSITION = re.compile(
    r"^Parser error (?:at line \d+ between columns \d+ and \d+"
    r"|at line \d+ column \d+|between line \d+ column \d+ and line \d+ column \d+): "
)


def _strip_position(message: str) -> str:
    """pyoxigraph's message without the position it prefixes in any of its three forms
    ("at line 2 between columns 3 and 7", "at line 2 column 3", "between line 2 column 3
    and line 3 column 1"): the error carries it once, as its ``line`` and ``column``."""
    return _OXIGRAPH_POSITION.sub("", message)


def _locate_xml_error(data: bytes, base: str | None, message: str) -> IngestError:
    """pyoxigraph's RDF/XML errors carry no position: ask expat, then rdflib, for one."""
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        detail = xml.parsers.expat.ErrorString(exc.code)
        return RDFSyntaxError(f"malformed XML: {detail}", line=exc.lineno, column=exc.offset + 1)
    try:
        _read_with_rdflib(data, base)
    except RDFSyntaxError as exc:
        return RDFSyntaxError(f"{message} ({exc.detail})", line=exc.line, column=exc.column)
    return RDFSyntaxError(message)


_RDFLIB_POSITION = re.compile(r":(\d+):(\d+): ")


def _read_with_rdflib(data: bytes, base: str | None) -> tuple[Triple, ...]:
    import rdflib
    from rdflib.exceptions import ParserError

    # rdflib logs a traceback for each ill-typed literal ("24:00:00", "abc"^^xsd:integer);
    # those are valid RDF terms (a FILTER finds them errors), ordinary input here.
    logging.getLogger("rdflib.term").setLevel(logging.ERROR)
    graph = rdflib.Graph()
    try:
        graph.parse(data=data, format="xml", publicID=base)
    except (ParserError, xml.sax.SAXParseException, ValueError) as exc:
        text = str(exc)
        found = _RDFLIB_POSITION.search(text)
        if found:
            detail = text[found.end() :]
            raise RDFSyntaxError(detail, line=int(found[1]), column=int(found[2]) + 1) from exc
        raise RDFSyntaxError(text) from exc
    return tuple(dict.fromkeys(_from_rdflib(t) for t in graph))


def _from_rdflib(triple: tuple[object, object, object]) -> Triple:
    import rdflib

    def term(node: object) -> Term:
        if isinstance(node, rdflib.BNode):
            return "_:" + str(node)
        if isinstance(node, rdflib.Literal):
            datatype = str(node.datatype) if node.datatype else None
            return Literal(str(node), datatype, node.language)
        return str(node)

    s, p, o = triple
    subject = term(s)
    assert isinstance(subject, str)
    return (subject, str(p), term(o))


@contextmanager
def errors_as(error: Callable[[str], SempsError], *, read: str, parse: str) -> Iterator[None]:
    """Reading a file and its document inside, whose failures become ``error`` (the
    reader's own class, raised from the original): a file that cannot be read says
    ``{read}: {the system's reason}``, a document refused :func:`read_triples`'s message
    after ``parse`` (which ends with its own separator).

    Example:
        >>> with errors_as(IngestError, read="events/e1.rdf", parse="events/e1.rdf:"):
        ...     open("/no/such/file", "rb")
        Traceback (most recent call last):
        ...
        semps.errors.IngestError: events/e1.rdf: No such file or directory
    """
    try:
        yield
    except OSError as exc:
        msg = f"{read}: {exc.strerror or exc}"
        raise error(msg) from exc
    except IngestError as exc:
        msg = f"{parse}{exc}"
        raise error(msg) from exc
