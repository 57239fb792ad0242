"""``/graph``: the knowledge graph over HTTP, as the SPARQL 1.1 Graph Store Protocol has it
for the default graph, plus SPARQL 1.1 Update.

=======  ===========================================  ========================
method   what                                         who
=======  ===========================================  ========================
GET      the asserted triples (``Accept``: Turtle,     every role
         N-Triples, RDF/XML, JSON-LD)
PUT      replace them with a document's                publisher, admin
POST     merge a document in; or run a SPARQL Update   publisher, admin
         (``application/sparql-update``, or the form
         field ``update=``)
DELETE   remove every triple                           publisher, admin
=======  ===========================================  ========================

``GET /graph/resources`` pages through the graph's subjects (searched by IRI or label) and
``GET /graph/resource`` gives one term's triples, asserted and inferred told apart: bounded
reads for a browser (the console), every role.

``?default`` (the protocol's name for the default graph) may be given or not; ``?graph=IRI``
names a graph semps does not keep (404). Every edit is answered once it and the
notifications it causes are committed (:class:`~semps.broker.graphs.GraphDesk`), with the
graph's new version and what changed. ``GET /graph/info`` gives the sizes.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response

from semps.api.bodies import (
    FORM,
    form_field,
    form_fields,
    media_type,
    read_body,
    request_body,
    require_media_type,
    text_content,
    text_or_form,
)
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.models import GraphEdit, GraphInfo
from semps.broker.graphs import SPARQL_UPDATE, Applied, update_text
from semps.broker.tokens import Principal
from semps.documents import SUPPORTED_MEDIA_TYPES
from semps.errors import GraphError, NotAcceptable, NotFound, UnsupportedUpdateError
from semps.graph.browse import MAX_PAGE
from semps.graph.formats import EXPORT_TYPES

__all__ = ["graph_router", "negotiate"]

#: What ``GET /graph`` answers when the caller accepts anything.
DEFAULT_EXPORT = "text/turtle"
#: What a document sent without ``Content-Type`` is read as.
DEFAULT_DOCUMENT = "text/turtle"

_RDF = text_content(SUPPORTED_MEDIA_TYPES)
_PUT_BODY = request_body(_RDF)
_POST_BODY = request_body({**_RDF, **text_or_form(SPARQL_UPDATE, "update")})
_EDIT_ERRORS = responses(400, 401, 403, 404, 413, 415, 422)
#: The longest IRI or search text the browsing routes take.
MAX_TEXT = 2048
#: Accept ranges that leave the choice to the server, and what each gets.
_WIDE = {"*/*": DEFAULT_EXPORT, "text/*": DEFAULT_EXPORT, "application/*": "application/n-triples"}


def negotiate(accept: str | None) -> str:
    """The export media type an ``Accept`` header prefers: its ranges by quality, then in
    order; Turtle when it accepts anything (or says nothing).

    Raises:
        NotAcceptable: it accepts none of Turtle, N-Triples, RDF/XML and JSON-LD (406).

    Example:
        >>> negotiate("application/ld+json;q=0.5, application/n-triples")
        'application/n-triples'
    """
    if not accept or not accept.strip():
        return DEFAULT_EXPORT
    ranked = []
    for order, part in enumerate(accept.split(",")):
        fields = part.split(";")
        quality = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        ranked.append((-quality, order, fields[0].strip().lower()))
    for negative_quality, _, found in sorted(ranked):
        if negative_quality >= 0:
            break
        if found in EXPORT_TYPES:
            return found
        if found in _WIDE:
            return _WIDE[found]
    known = ", ".join(sorted(EXPORT_TYPES))
    msg = f"cannot write the graph as any of {accept.strip()[:200]!r} (available: {known})"
    raise NotAcceptable(msg)


def _default_only(graph: str | None) -> None:
    """Refuse a named graph: semps keeps one, the default graph.

    Raises:
        NotFound: ``?graph=`` names one (404).
    """
    if graph is not None:
        msg = (
            f"no graph {graph[:200]!r}: semps keeps one graph, the default graph "
            "(?default, or no parameter)"
        )
        raise NotFound(msg)


def update_of_form(body: bytes) -> str:
    """The ``update`` field of a form-encoded SPARQL Update request.

    Raises:
        GraphError: not UTF-8, or not exactly one ``update`` (400);
        UnsupportedUpdateError: ``using-graph-uri`` or ``using-named-graph-uri`` (422).
    """
    fields = form_fields(body, GraphError)
    for name in ("using-graph-uri", "using-named-graph-uri"):
        if name in fields:
            msg = f"{name} is not supported: semps keeps only the default graph"
            raise UnsupportedUpdateError(msg, construct="USING")
    return form_field(fields, "update", GraphError)


def _edited(applied: Applied) -> GraphEdit:
    return GraphEdit.model_validate(applied.summary())


def graph_router(ctx: Context) -> APIRouter:
    """The knowledge graph's routes."""
    router = APIRouter(tags=["graph"])
    desk = ctx.broker.graphs
    caller = ctx.auth.require()
    reader = [Depends(caller)]
    writer = [Depends(ctx.auth.require("publisher"))]
    named = Query(None, description="a named graph: none exists (404)")
    default = Query(None, description="the default graph (the only one)")

    @router.get(
        "/graph",
        dependencies=reader,
        response_class=Response,
        responses={200: {"content": {m: {} for m in EXPORT_TYPES}}, **responses(401, 404, 406)},
    )
    async def get_graph(
        who: Annotated[Principal, Depends(caller)],
        accept: str | None = Header(None),
        closure: bool = Query(False, description="every triple, the inferred ones too"),
        graph: str | None = named,
        default: str | None = default,
    ) -> Response:
        """The graph's asserted triples, in the media type ``Accept`` prefers (read from a
        snapshot: edits go on meanwhile; counted as one of the caller's queries in flight,
        ``max_queries_in_flight``)."""
        _default_only(graph)
        chosen = negotiate(accept)
        body = await desk.export(chosen, closure=closure, who=who.subject)
        return Response(body, media_type=chosen, headers={"Vary": "Accept"})

    # HEAD as GET (the Graph Store Protocol's), one operation in the OpenAPI document: a
    # route with both methods gives two operations of one id (a warning, a 500 there).
    router.add_api_route(
        "/graph",
        get_graph,
        methods=["HEAD"],
        dependencies=reader,
        response_class=Response,
        include_in_schema=False,
    )

    @router.get("/graph/info", dependencies=reader, responses=responses(401))
    async def graph_info() -> GraphInfo:
        """The graph's version and sizes."""
        return GraphInfo.model_validate(await desk.info())

    @router.get("/graph/resources", dependencies=reader, responses=responses(401, 422))
    async def graph_resources(
        q: str = Query("", max_length=MAX_TEXT, description="part of an IRI or a label"),
        after: str | None = Query(None, max_length=MAX_TEXT, description="`next` of a page"),
        limit: int = Query(100, ge=1, le=MAX_PAGE),
    ) -> dict[str, object]:
        """One page of the graph's subjects in IRI order (those whose IRI or label holds
        ``q``, case aside): ``{"version", "items": [{"iri", "label", "triples",
        "asserted"}], "total", "next"}``."""
        return await desk.resources(q, after, limit)

    @router.get("/graph/resource", dependencies=reader, responses=responses(401, 404, 422))
    async def graph_resource(
        iri: str = Query(..., min_length=1, max_length=MAX_TEXT, description="IRI or _:blank"),
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=1, le=MAX_PAGE),
    ) -> dict[str, object]:
        """A resource's triples, as subject (``outgoing``) and as object (``incoming``),
        each ``asserted`` or inferred, with their totals; 404 when the graph has none."""
        found = await desk.describe(iri, limit, offset)
        if not found["outgoing_total"] and not found["incoming_total"]:
            msg = f"the knowledge graph has no triple about {iri[:200]!r}"
            raise NotFound(msg)
        return found

    @router.put("/graph", dependencies=writer, openapi_extra=_PUT_BODY, responses=_EDIT_ERRORS)
    async def replace_graph(
        request: Request, graph: str | None = named, default: str | None = default
    ) -> GraphEdit:
        """Replace the graph's triples with a document's (answered once committed)."""
        _default_only(graph)
        declared = require_media_type(request, SUPPORTED_MEDIA_TYPES)
        data = await read_body(request, ctx.max_body)
        return _edited(await desk.load(data, declared or DEFAULT_DOCUMENT, replace=True))

    @router.post("/graph", dependencies=writer, openapi_extra=_POST_BODY, responses=_EDIT_ERRORS)
    async def post_graph(
        request: Request, graph: str | None = named, default: str | None = default
    ) -> GraphEdit:
        """Merge a document's triples in, or run a SPARQL 1.1 Update."""
        _default_only(graph)
        found = media_type(request)
        if found not in (SPARQL_UPDATE, FORM):
            require_media_type(request, (*SUPPORTED_MEDIA_TYPES, SPARQL_UPDATE, FORM))
        data = await read_body(request, ctx.max_body)
        if found == SPARQL_UPDATE:
            return _edited(await desk.update(update_text(data)))
        if found == FORM:
            return _edited(await desk.update(update_of_form(data)))
        return _edited(await desk.load(data, found or DEFAULT_DOCUMENT, replace=False))

    @router.delete("/graph", dependencies=writer, responses=responses(401, 403, 404))
    async def clear_graph(graph: str | None = named, default: str | None = default) -> GraphEdit:
        """Remove every triple."""
        _default_only(graph)
        return _edited(await desk.clear())

    return router
