"""What the client sends: a subscription's text, an RDF document or JSON event, as bytes and
a media type.

A :class:`pathlib.Path` (any :class:`os.PathLike`) is a file, read here, whose suffix picks
the media type (``.rdf``/``.owl``/``.xml`` RDF/XML, ``.ttl`` Turtle, ``.nt`` N-Triples,
``.jsonld`` JSON-LD, ``.json`` a JSON event, ``.rq``/``.sparql`` a query); a ``str`` is the
text itself, never a file name; an rdflib :class:`~rdflib.Graph` is sent as N-Triples; a
``dict`` as JSON.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

from rdflib import Graph

from semps.documents import N_TRIPLES, RDF_XML, media_type_for
from semps.errors import ClientError, UnsupportedMediaType

__all__ = [
    "JSON",
    "SPARQL",
    "QuerySource",
    "RDFSource",
    "batch_item",
    "document",
    "kind_of",
    "media_type_hint",
    "query",
]

JSON = "application/json"
SPARQL = "application/sparql-query"

#: An event or ontology: RDF text or bytes, a file, an rdflib Graph, or (events) a JSON dict.
RDFSource: TypeAlias = bytes | str | os.PathLike[str] | Graph | Mapping[str, Any]
#: A subscription: its text, a file holding it, or (content, symmetric) its JSON as a dict.
QuerySource: TypeAlias = str | os.PathLike[str] | Mapping[str, Any]

_QUERY_SUFFIXES = {".rq", ".sparql", ".txt"}


def _read(path: os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        msg = f"cannot read {os.fspath(path)!r}: {exc.strerror or exc}"
        raise ClientError(msg) from exc


def document(source: RDFSource, media_type: str | None = None) -> tuple[bytes, str]:
    """(body, media type) for an event or ontology ``source``; ``media_type`` overrides the
    one the source implies (default RDF/XML for bytes and text, as the server's).

    Example:
        >>> document({"values": {"a1": 5}})
        (b'{"values": {"a1": 5}}', 'application/json')
    """
    if isinstance(source, Graph):
        return source.serialize(format="nt", encoding="utf-8"), media_type or N_TRIPLES
    if isinstance(source, Mapping):
        return json.dumps(source).encode(), media_type or JSON
    if isinstance(source, bytes):
        return source, media_type or RDF_XML
    if isinstance(source, str):
        return source.encode(), media_type or RDF_XML
    if isinstance(source, os.PathLike):
        name = os.fspath(source)
        if media_type is None:
            media_type = JSON if name.lower().endswith(".json") else media_type_for(name)
        return _read(source), media_type
    msg = f"cannot send a {type(source).__name__} as an RDF document or JSON event"
    raise UnsupportedMediaType(msg)


#: The start of an XML document (a declaration, a comment or DOCTYPE, or a tag with a
#: name, which an N-Triples IRI ``<http://...`` is not).
_XML_START = re.compile(rb"<(\?xml|!|[A-Za-z_][\w.-]*(:[A-Za-z_][\w.-]*)?[\s/>])")


def media_type_hint(source: RDFSource, media_type: str | None) -> str | None:
    """What to tell a caller whose text or bytes, sent as RDF/XML because no
    ``media_type`` was given, do not look like XML (``None`` when they do, or when a media
    type was given: the server's message is then the whole story).

    Example:
        >>> media_type_hint("@prefix ex: <http://ex/> . ex:a a ex:B .", None)[:56]
        'sent as application/rdf+xml, the default for text and by'
        >>> media_type_hint("<rdf:RDF/>", None) is None
        True
    """
    if media_type is not None or not isinstance(source, str | bytes):
        return None
    head = (source.encode() if isinstance(source, str) else source).lstrip()[:256]
    if _XML_START.match(head):
        return None
    if head.startswith((b"{", b"[")):
        guess = "media_type='application/ld+json' for JSON-LD, or a dict for a JSON event"
    elif head.startswith((b"<", b"_:")):
        guess = "media_type='application/n-triples' for N-Triples"
    else:
        guess = "media_type='text/turtle' for Turtle"
    return f"sent as {RDF_XML}, the default for text and bytes: pass {guess}"


def kind_of(source: QuerySource) -> str:
    """The matcher a subscription is for when the caller does not say: ``content`` for a
    dict of ``constraints``, ``symmetric`` for a dict with a ``region``, else ``semantic``.

    Example:
        >>> kind_of({"region": {"x": [0, 1]}}), kind_of("SELECT * WHERE { ?s ?p ?o }")
        ('symmetric', 'semantic')
    """
    if isinstance(source, Mapping):
        if "region" in source:
            return "symmetric"
        if "constraints" in source:
            return "content"
    return "semantic"


def query(source: QuerySource, kind: str, media_type: str | None = None) -> tuple[bytes, str]:
    """(body, media type) for a subscription: JSON for a dict or text that is a JSON object,
    else ``application/sparql-query`` (semantic) or ``text/plain`` (content's "for humans"
    form and other kinds).

    Example:
        >>> query("SELECT ?x WHERE { ?x a <urn:C> }", "semantic")[1]
        'application/sparql-query'
        >>> query({"constraints": []}, "content")
        (b'{"constraints": []}', 'application/json')
    """
    if isinstance(source, Mapping):
        return json.dumps(source).encode(), media_type or JSON
    if isinstance(source, os.PathLike):
        suffix = Path(source).suffix.lower()
        if suffix not in _QUERY_SUFFIXES | {".json"}:
            known = ", ".join(sorted(_QUERY_SUFFIXES | {".json"}))
            msg = f"no subscription reader for file suffix {suffix or '(none)'!r} (known: {known})"
            raise UnsupportedMediaType(msg)
        body = _read(source)
    elif isinstance(source, str):
        body = source.encode()
    else:
        msg = f"cannot send a {type(source).__name__} as a subscription"
        raise UnsupportedMediaType(msg)
    if media_type is None:
        if body.lstrip().startswith(b"{"):
            media_type = JSON
        else:
            media_type = SPARQL if kind == "semantic" else "text/plain"
    return body, media_type


def batch_item(source: RDFSource, media_type: str | None = None) -> dict[str, str]:
    """One item of ``POST /events/batch``: ``{"media_type": ..., "body": text}``."""
    body, kind = document(source, media_type)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"a batch carries documents as JSON text, and this one is not UTF-8: {exc}"
        raise UnsupportedMediaType(msg) from exc
    return {"media_type": kind, "body": text}
