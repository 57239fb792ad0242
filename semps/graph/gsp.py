"""The SPARQL 1.1 Graph Store Protocol's operations on the default graph, as the HTTP layer
calls them (``/graph``; only the default graph exists).

Each editing operation *plans* the change (nothing applied: a refused one leaves no trace);
the service commits it with the notifications it causes (:meth:`~semps.graph.graph.
KnowledgeGraph.apply` inside its transaction) and answers once both are durable.

========  =====================================  ===============================
method    meaning                                function
========  =====================================  ===============================
GET       the asserted triples, as a document     :func:`get`
PUT       replace them with a document's          :func:`load` (``replace=True``)
POST      merge a document's triples in           :func:`load`
DELETE    remove every triple                     :func:`delete`
========  =====================================  ===============================

A SPARQL Update (``POST /graph`` with ``application/sparql-update``) is
:meth:`~semps.graph.graph.KnowledgeGraph.plan_update`.
"""

from __future__ import annotations

from semps.graph.change import GraphChange
from semps.graph.formats import export_type
from semps.graph.graph import KnowledgeGraph, Tick

#: What GET answers when the client accepts anything.
DEFAULT_TYPE = "text/turtle"


def get(graph: KnowledgeGraph, accept: str | None = None) -> tuple[bytes, str]:
    """The graph's asserted triples as ``(document, media type)``; ``accept`` names the
    media type (or a short name), Turtle by default.

    Raises:
        UnsupportedMediaType: a type semps does not write (a 406 in HTTP).
    """
    media_type = export_type(accept) if accept and accept != "*/*" else DEFAULT_TYPE
    return graph.export(media_type), media_type


def load(
    graph: KnowledgeGraph,
    body: bytes,
    content_type: str,
    *,
    replace: bool = False,
    base: str | None = None,
    tick: Tick | None = None,
) -> GraphChange:
    """The change that merges the document's triples into the graph (``POST``), or that
    replaces the graph's triples with them (``replace``: ``PUT``).

    Raises:
        IngestError: the document does not parse (``line:col``), is too large or hostile.
        GraphError: it holds an axiom or ``owl:sameAs``; GraphLimitExceeded: past a limit.
    """
    return graph.plan_load(body, media_type=content_type, base=base, replace=replace, tick=tick)


def delete(graph: KnowledgeGraph) -> GraphChange:
    """The change that removes every triple."""
    return graph.plan_clear()
