"""The SPARQL 1.1 Protocol's query and update operations on the knowledge graph, at the
paths SEPA's clients use (a JSAP's ``sparql11protocol``: ``/query`` and ``/update``).

``GET /query?query=...``, ``POST /query`` with ``application/sparql-query`` (the query as
the body) or a form (``query=...``): the query's answers over the graph's closure
(:func:`~semps.graph.query.answer`) in the SPARQL 1.1 JSON results format
(``application/sparql-results+json``), for every role, as ``GET /graph``. The query is one a
subscription may be (SELECT or ASK; OPTIONAL, UNION, MINUS, FILTER, EXISTS, BIND, VALUES,
paths), held to the subscription limits (``--max-query-bytes``, ``--max-patterns``, ...) and
evaluated within ``--max-update-rows`` and ``--graph-timeout`` (422 past either). SERVICE,
FROM and the ``default-graph-uri``/``named-graph-uri`` parameters are refused (400): semps
answers over its one graph and never fetches remote data.

``POST /update`` is ``POST /graph``'s SPARQL Update (``application/sparql-update``, or a form
``update=...``), for publishers and admins.
"""

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response

from semps.api import sepa
from semps.api.bodies import (
    FORM,
    form_field,
    form_fields,
    read_body,
    request_body,
    require_media_type,
    text_or_form,
)
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.models import GraphEdit
from semps.api.routes.graph import update_of_form
from semps.broker.graphs import SPARQL_UPDATE, update_text
from semps.broker.tokens import Principal
from semps.errors import NotAcceptable, SempsError, UnsupportedQueryError
from semps.graph.query import Answers, answer
from semps.ingest.sparql.model import Query as ParsedQuery
from semps.ingest.sparql.parser import order_by_at, parse_query
from semps.limits import Limits

__all__ = ["RESULTS", "SPARQL_QUERY", "query_router"]

#: The media type of a query sent as the body (SPARQL 1.1 Protocol, 2.1.3).
SPARQL_QUERY = "application/sparql-query"
#: SPARQL 1.1 Query Results JSON Format.
RESULTS = "application/sparql-results+json"
#: Accept ranges the JSON results satisfy.
_ACCEPTED = {RESULTS, "application/json", "application/*", "*/*"}
#: Constructs that would read another dataset than the graph: refused with 400.
_REMOTE = {"SERVICE", "FROM"}

_QUERY_BODY = request_body(text_or_form(SPARQL_QUERY, "query"))
_UPDATE_BODY = request_body(text_or_form(SPARQL_UPDATE, "update"))
_ANSWERS = {200: {"content": {RESULTS: {}}}, **responses(400, 401, 406, 413, 415, 422)}


def accepts_results(accept: str | None) -> None:
    """Refuse an ``Accept`` header that takes no JSON results.

    Raises:
        NotAcceptable: none of its ranges is the JSON results, JSON or a wildcard (406).

    Example:
        >>> accepts_results("application/sparql-results+json;q=0.9, text/csv")
    """
    if not accept or not accept.strip():
        return
    ranges = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    if ranges & _ACCEPTED:
        return
    msg = f"the answers are written as {RESULTS} only, which {accept.strip()[:200]!r} refuses"
    raise NotAcceptable(msg)


def query_of_form(body: bytes) -> str:
    """The ``query`` field of a form-encoded query request.

    Raises:
        SempsError: not UTF-8, not exactly one ``query``, or a dataset parameter (400).
    """
    fields = form_fields(body)
    _no_dataset(fields.get("default-graph-uri"), fields.get("named-graph-uri"))
    return form_field(fields, "query")


def _no_dataset(*given: object) -> None:
    if any(given):
        msg = (
            "default-graph-uri and named-graph-uri are not supported: "
            "semps answers over its one graph, the default graph"
        )
        raise SempsError(msg)


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"a SPARQL query must be UTF-8 text: {exc}"
        raise SempsError(msg) from None


def parsed(text: str, limits: Limits) -> ParsedQuery:
    """A query's text parsed, held to the subscription limits.

    Raises:
        SubscriptionSyntaxError (400), SubscriptionLimitExceeded (422),
        UnsupportedQueryError (422; SERVICE and FROM: SempsError, 400).
    """
    limits.check_query_size(text)
    try:
        query = parse_query(text, limits=limits)
    except UnsupportedQueryError as exc:
        if exc.construct in _REMOTE:
            msg = f"{exc}: semps answers over its own knowledge graph and never fetches remote data"
            raise SempsError(msg) from None
        raise
    at = order_by_at(text)
    if at is not None:  # an answer sent unsorted to a query that asked for an order is wrong
        msg = "ORDER BY is not supported by /query: its answers come unordered"
        raise UnsupportedQueryError(msg, construct="ORDER BY", line=at[0], column=at[1])
    return query


def query_router(ctx: Context) -> APIRouter:
    """``/query`` and ``/update``."""
    router = APIRouter(tags=["graph"])
    desk = ctx.broker.graphs
    limits = ctx.broker.limits
    caller = ctx.auth.require()
    reader = [Depends(caller)]
    writer = [Depends(ctx.auth.require("publisher"))]
    refused = "refused (400): semps answers over its one graph"
    default = Query(None, alias="default-graph-uri", description=refused)
    named = Query(None, alias="named-graph-uri", description=refused)

    async def run(text: str, accept: str | None, who: Principal) -> Response:
        accepts_results(accept)
        query = parsed(text, limits)
        found: Answers = await desk.reading(
            lambda view: answer(view, query, limits=limits), who=who.subject
        )
        body = json.dumps(sepa.answer_results(found), separators=(",", ":"))
        return Response(body, media_type=RESULTS)

    @router.get("/query", dependencies=reader, response_class=Response, responses=_ANSWERS)
    async def get_query(
        who: Annotated[Principal, Depends(caller)],
        query: str = Query(..., description="a SPARQL 1.1 SELECT or ASK query"),
        default_graph_uri: list[str] | None = default,
        named_graph_uri: list[str] | None = named,
        accept: str | None = Header(None),
    ) -> Response:
        """The query's answers over the knowledge graph's closure (SPARQL 1.1 JSON results)."""
        _no_dataset(default_graph_uri, named_graph_uri)
        return await run(query, accept, who)

    @router.post(
        "/query",
        dependencies=reader,
        response_class=Response,
        responses=_ANSWERS,
        openapi_extra=_QUERY_BODY,
    )
    async def post_query(
        who: Annotated[Principal, Depends(caller)],
        request: Request,
        default_graph_uri: list[str] | None = default,
        named_graph_uri: list[str] | None = named,
        accept: str | None = Header(None),
    ) -> Response:
        """A query sent as ``application/sparql-query`` or as a form: its answers."""
        _no_dataset(default_graph_uri, named_graph_uri)
        found = require_media_type(request, (SPARQL_QUERY, FORM))
        data = await read_body(request, ctx.max_body)
        return await run(query_of_form(data) if found == FORM else _text(data), accept, who)

    @router.post(
        "/update",
        dependencies=writer,
        openapi_extra=_UPDATE_BODY,
        responses=responses(400, 401, 403, 413, 415, 422),
    )
    async def post_update(request: Request) -> GraphEdit:
        """A SPARQL 1.1 Update on the knowledge graph (as ``POST /graph`` takes it)."""
        found = require_media_type(request, (SPARQL_UPDATE, FORM))
        data = await read_body(request, ctx.max_body)
        text = update_of_form(data) if found == FORM else update_text(data)
        applied = await desk.update(text)
        return GraphEdit.model_validate(applied.summary())

    return router
