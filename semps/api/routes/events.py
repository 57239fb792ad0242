"""``POST /events`` and ``POST /events/batch``: publish, answered by one plain-ASGI handler.

Publishing is the hot path: at a thousand events a second, FastAPI's per-request machinery
(dependency solving, header models, middleware layers, response models) cost about as much
CPU as reading and matching the event. :class:`PublishRoute` therefore answers both
requests itself, ahead of the framework: the bearer check, the batch's media type, the body
bounded while it is read, 202 ``{"id", "matched"}`` or ``{"events": [...]}``, and errors in
the one JSON error shape; every other request goes on to the application.
:func:`events_router` only *describes* the two operations for the OpenAPI document (its
routes are never mounted, so nothing else can answer them).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends
from pydantic import ValidationError

from semps.api.auth import bearer_token
from semps.api.bodies import (
    JSON,
    json_body,
    json_content,
    read_bounded,
    request_body,
    text_content,
)
from semps.api.context import Context
from semps.api.errors import error_body, responses
from semps.api.models import BatchIn, BatchOut, JsonEvent, Published
from semps.broker import commit
from semps.broker.broker import Broker
from semps.broker.graphs import SPARQL_UPDATE
from semps.errors import IngestError, SempsError, UnsupportedMediaType

__all__ = [
    "EVENT_MEDIA_TYPES",
    "AsgiRoute",
    "Disconnected",
    "PublishRoute",
    "batch_results",
    "body_chunks",
    "check_batch_media_type",
    "events_router",
    "header_text",
    "parse_batch",
    "respond",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: An error -> (status, JSON body, extra headers).
ErrorMapper = Callable[[Exception], tuple[int, dict[str, object], dict[str, str]]]

#: What ``POST /events`` reads (text/plain is N-Triples), besides JSON events.
EVENT_MEDIA_TYPES = (
    "application/rdf+xml",
    "text/turtle",
    "application/n-triples",
    "application/ld+json",
    "text/plain",
)
_EVENT_BODY = {
    "parameters": [
        {
            "name": "retain",
            "in": "query",
            "required": False,
            "schema": {"type": "boolean", "default": False},
            "description": "keep the event's triples in the knowledge graph: the event is a "
            "change of the graph, notified with the solutions it adds and removes",
        }
    ],
    **request_body(
        {**text_content([*EVENT_MEDIA_TYPES, SPARQL_UPDATE]), **json_content(JsonEvent)}
    ),
}
_BATCH_BODY = json_body(BatchIn)


class AsgiRoute(ABC):
    """ASGI middleware in front of the application that answers some requests itself (the
    hot ones, without FastAPI's per-request work) and passes every other on to ``app``."""

    def __init__(self, app: ASGIApp, broker: Broker, max_body: int, errors: ErrorMapper):
        self.app = app
        self.broker = broker
        self.max_body = max_body
        self.errors = errors

    @abstractmethod
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request, or pass it on to ``app``."""


class PublishRoute(AsgiRoute):
    """The ``POST /events`` and ``POST /events/batch`` handler: ASGI middleware that
    answers them and passes every other request to the application (see the module
    docstring)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or scope["method"] != "POST" or path not in _PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        try:
            token = bearer_token(header_text(headers.get(b"authorization")))
            client = scope.get("client")
            who = self.broker.authorize(token, "publisher", client=client[0] if client else None)
            content_type = header_text(headers.get(b"content-type"))
            if path == "/events/batch":
                check_batch_media_type(content_type)
            body = await self._body(headers.get(b"content-length"), receive)
            if body is None:  # the client went away: nobody to answer, nothing published
                return
            if path == "/events/batch":
                documents, keep = parse_batch(body)
                outcomes = await self.broker.publish_many(documents, keep, publisher=who.subject)
                answer: dict[str, object] = {"events": batch_results(outcomes)}
            else:
                retain = retained(scope.get("query_string", b""))
                published = await self.broker.publish(
                    body,
                    content_type or "application/rdf+xml",
                    retain=retain,
                    publisher=who.subject,
                )
                answer = _published(published)
        except Exception as exc:  # ours: its status; anything else: the one 500 shape
            status, doc, extra = self.errors(exc)
            await respond(send, status, doc, extra)
            return
        await respond(send, 202, answer, {})

    async def _body(self, declared: bytes | None, receive: Receive) -> bytes | None:
        try:
            return await read_bounded(header_text(declared), body_chunks(receive), self.max_body)
        except Disconnected:
            return None


#: The requests this middleware answers.
_PATHS = ("/events", "/events/batch")


def check_batch_media_type(content_type: str | None) -> None:
    """A batch is JSON (or sent without a media type).

    Raises:
        UnsupportedMediaType: another media type (415).
    """
    found = (content_type or "").split(";", 1)[0].strip().lower()
    if found and found != JSON:
        msg = f"unsupported media type {found!r} here (use {JSON})"
        raise UnsupportedMediaType(msg)


def parse_batch(body: bytes) -> tuple[list[tuple[str, bytes]], list[bool]]:
    """A batch's events as (media type, document) pairs, and whether each is retained.

    Raises:
        IngestError: not ``{"events": [{"media_type": ..., "body": "..."}, ...]}`` (400).
    """
    try:
        batch = BatchIn.model_validate_json(body)
    except ValidationError as exc:
        msg = 'expected JSON {"events": [{"media_type": ..., "body": "..."}, ...]}'
        raise IngestError(msg) from exc
    documents = [(e.media_type or "application/rdf+xml", e.body.encode()) for e in batch.events]
    return documents, [e.retain for e in batch.events]


def retained(query: bytes) -> bool:
    """Whether the query string says ``retain=true`` (``retain=false`` or none: no).

    Raises:
        IngestError: another value, or another parameter (400).

    Example:
        >>> retained(b"retain=true"), retained(b"")
        (True, False)
    """
    if not query:
        return False
    found = parse_qs(query.decode("latin-1"), keep_blank_values=True)
    unknown = sorted(set(found) - {"retain"})
    values = found.get("retain", [])
    if unknown or len(values) > 1 or (values and values[0] not in ("true", "false")):
        msg = "POST /events takes one query parameter, retain=true or retain=false"
        raise IngestError(msg)
    return values == ["true"]


def _published(outcome: commit.Published) -> dict[str, object]:
    """An event's answer: ``{"id", "matched"}``, and ``"graph_version"`` when it changed
    the knowledge graph."""
    answer: dict[str, object] = {"id": outcome[0], "matched": outcome[1]}
    if len(outcome) > 2:
        answer["graph_version"] = outcome[2]
    return answer


def batch_results(outcomes: Sequence[commit.Outcome]) -> list[dict[str, object]]:
    """Each event's outcome as the batch answer lists it: ``{"id", "matched"}`` or its
    error's body (fields that are ``None`` left out).

    Raises:
        BaseException: an outcome that is not one of our errors (a 500).
    """
    results: list[dict[str, object]] = []
    for outcome in outcomes:
        if isinstance(outcome, SempsError):
            results.append({k: v for k, v in error_body(outcome).items() if v is not None})
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            results.append(_published(outcome))
    return results


class Disconnected(Exception):
    """The client went away before sending the whole body."""


async def body_chunks(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


def header_text(value: bytes | None) -> str | None:
    return value.decode("latin-1") if value is not None else None


async def respond(send: Send, status: int, doc: dict[str, object], extra: dict[str, str]) -> None:
    body = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.lower().encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def events_router(ctx: Context) -> APIRouter:
    """The two publishing operations as the OpenAPI document describes them. Documentation
    only: the application does not mount these routes (:class:`PublishRoute` answers)."""
    router = APIRouter(tags=["events"], dependencies=[Depends(ctx.auth.require("publisher"))])
    for path, name, answer, body, summary in _OPERATIONS:
        router.add_api_route(
            path,
            _described(answer, summary),
            name=name,
            methods=["POST"],
            status_code=202,
            openapi_extra=body,
            response_model_exclude_none=True,
            responses=responses(400, 401, 403, 413, 415, 422, 429, 503, 507),
        )
    return router


#: (path, name, answer model, request body, description) of each publishing operation.
_OPERATIONS = (
    (
        "/events",
        "publish",
        Published,
        _EVENT_BODY,
        "Publish one event; answered once it and its notifications are committed. With\n"
        "retain=true (or a SPARQL Update as the body) the event changes the knowledge graph.",
    ),
    (
        "/events/batch",
        "publish_batch",
        BatchOut,
        _BATCH_BODY,
        "Many events in one request, each ingested on its own: a bad one gets its error,\n"
        "the others are published.",
    ),
)


def _described(answer: type[Any], summary: str) -> Callable[[], Awaitable[Any]]:
    """An endpoint that only describes an operation (its answer model and summary)."""

    async def publish() -> Any:
        raise NotImplementedError  # never mounted: PublishRoute answers

    publish.__annotations__["return"] = answer
    publish.__doc__ = summary
    return publish
