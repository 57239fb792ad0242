"""``POST /events`` and ``POST /events/batch``: publish.

``POST /events`` is normally answered by the plain-ASGI fast path
(:mod:`semps.api.fastpath`) with exactly this route's contract; the route documents it and
serves it when the fast path is off.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError

from semps.api.bodies import JSON, json_body, read_body, require_media_type
from semps.api.context import Context
from semps.api.errors import error_body, responses
from semps.api.models import BatchIn, BatchOut, ErrorBody, JsonEvent, Published
from semps.errors import IngestError, SempsError

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
        require_media_type(request, (JSON,))
        items = _batch(await read_body(request, ctx.max_body))
        results: list[Published | ErrorBody] = []
        for outcome in await broker.publish_many(items):
            if isinstance(outcome, SempsError):
                results.append(ErrorBody.model_validate(error_body(outcome)))
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                results.append(Published(id=outcome[0], matched=outcome[1]))
        return BatchOut(events=results)

    return router


def _batch(body: bytes) -> list[tuple[str, bytes]]:
    try:
        batch = BatchIn.model_validate_json(body)
    except ValidationError as exc:
        msg = 'expected JSON {"events": [{"media_type": ..., "body": "..."}, ...]}'
        raise IngestError(msg) from exc
    return [(e.media_type or "application/rdf+xml", e.body.encode()) for e in batch.events]
