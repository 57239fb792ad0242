"""RDF documents in and out of the knowledge graph: Turtle, N-Triples, RDF/XML, JSON-LD.

Reading (:class:`~semps.graph.batch.BatchReader`) goes through :mod:`semps.documents` (the
screen, the limits and the errors events have) with the larger size bound
:data:`MAX_GRAPH_BYTES`, and gives each document's blank nodes fresh names
(:func:`fresh_prefix`; RDF merge: two documents' ``_:b1`` are two nodes, and no event can
name a graph's blank node). Writing serialises with pyoxigraph.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable

import pyoxigraph as ox

from semps._types import Term, Triple
from semps.documents import SUPPORTED_MEDIA_TYPES
from semps.errors import UnsupportedMediaType
from semps.terms import Literal

#: A graph document may be large (a campus): up to 1 GiB of RDF.
MAX_GRAPH_BYTES = 1 << 30

_SAFE_LABEL = re.compile(r"[^A-Za-z0-9_-]")


def fresh_prefix() -> str:
    """A new blank node name prefix (``_:g`` and 16 hex digits, then a dot)."""
    return f"_:g{secrets.token_hex(8)}."


def renamed(triples: Iterable[Triple], prefix: str) -> list[Triple]:
    """The triples with every blank node ``_:x`` named ``prefix + x``."""
    out: list[Triple] = []
    for s, p, o in triples:
        if s.startswith("_:"):
            s = prefix + s[2:]
        if type(o) is str and o.startswith("_:"):
            o = prefix + o[2:]
        out.append((s, p, o))
    return out


#: Export media types -> pyoxigraph formats (the four semps reads).
EXPORT_TYPES: dict[str, ox.RdfFormat] = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}

_SHORT = {
    "turtle": "text/turtle",
    "ttl": "text/turtle",
    "ntriples": "application/n-triples",
    "nt": "application/n-triples",
    "rdfxml": "application/rdf+xml",
    "xml": "application/rdf+xml",
    "jsonld": "application/ld+json",
}


def export_type(name: str) -> str:
    """The media type of an export format named by media type or short name (``turtle``,
    ``nt``, ``rdfxml``, ``jsonld``).

    Raises:
        UnsupportedMediaType: neither.
    """
    canonical = name.split(";", 1)[0].strip().lower()
    canonical = _SHORT.get(canonical, canonical)
    fmt = SUPPORTED_MEDIA_TYPES.get(canonical)
    if fmt is None:
        known = ", ".join(sorted(EXPORT_TYPES))
        msg = f"cannot export the graph as {name!r} (known: {known})"
        raise UnsupportedMediaType(msg)
    return next(m for m, f in EXPORT_TYPES.items() if f == fmt)


def _node(term: Term) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(term, Literal):
        if term[2]:
            return ox.Literal(term[0], language=term[2])
        return ox.Literal(term[0], datatype=ox.NamedNode(term[1]))
    if term.startswith("_:"):
        return ox.BlankNode(_SAFE_LABEL.sub("_", term[2:]) or "b")
    return ox.NamedNode(term)


def serialize(triples: Iterable[Triple], media_type: str = "text/turtle") -> bytes:
    """The triples as a document of ``media_type`` (or a short name: :func:`export_type`).

    Example:
        >>> serialize([("http://ex/a", "http://ex/p", Literal("1"))], "nt")
        b'<http://ex/a> <http://ex/p> "1" .\\n'
    """
    fmt = EXPORT_TYPES[export_type(media_type)]
    quads = (ox.Triple(_node(s), ox.NamedNode(p), _node(o)) for s, p, o in triples)  # type: ignore[arg-type]
    return ox.serialize(quads, format=fmt) or b""
