"""``POST /events`` and ``POST /events/batch``: publish.

Both are normally answered by the plain-ASGI fast path (:mod:`semps.api.fastpath`) with
exactly these routes' contract; the routes document them and serve them when the fast path
is off (reading and answering a batch with the fast path's own functions).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from semps.api.bodies import JSON, json_body, read_body
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.fastpath import batch_results, check_batch_media_type, parse_batch
from semps.api.models import BatchIn, BatchOut, JsonEvent, Published

__all__ = ["EVENT_MEDIA_TYPES", "events_router"]

#: What ``POST /events`` reads (text/plain is N-Triples), besides JSON events.
EVENT_MEDIA_TYPES = (
    "application/rdf+xml",
    "text/turtle",
    "application/n-triples",
    "application/ld+json",
    "text/plain",
)
_EVENT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            **{m: {"schema": {"type": "string"}} for m in EVENT_MEDIA_TYPES},
            JSON: {"schema": {"$ref": f"#/components/schemas/{JsonEvent.__name__}"}},
        },
    }
}
_BATCH_BODY = json_body(BatchIn)


def events_router(ctx: Context) -> APIRouter:
    """The publishing routes."""
    router = APIRouter(tags=["events"], dependencies=[Depends(ctx.auth.require("publisher"))])
    broker = ctx.broker

    @router.post(
        "/events",
        status_code=202,
        openapi_extra=_EVENT_BODY,
        responses=responses(400, 401, 403, 413, 415, 422),
    )
    async def publish(request: Request) -> Published:
        """Publish one event; answered once it and its notifications are committed."""
        data = await read_body(request, ctx.max_body)
        declared = request.headers.get("content-type") or "application/rdf+xml"
        event_id, matched = await broker.publish(data, declared)
        return Published(id=event_id, matched=matched)

    @router.post(
        "/events/batch",
        status_code=202,
        openapi_extra=_BATCH_BODY,
        response_model_exclude_none=True,
        responses=responses(400, 401, 403, 413, 415, 422),
    )
    async def publish_batch(request: Request) -> BatchOut:
        """Many events in one request, each ingested on its own: a bad one gets its error,
        the others are published."""
        check_batch_media_type(request.headers.get("content-type"))
        items = parse_batch(await read_body(request, ctx.max_body))
        results = batch_results(await broker.publish_many(items))
        return BatchOut.model_validate({"events": results})

    return router
