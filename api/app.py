"""The HTTP API over one :class:`~semps.broker.broker.Broker` (FastAPI).

Every endpoint but ``/health`` needs ``Authorization: Bearer <token>``. Errors are JSON
``{"error": ..., "detail": ...}`` with a 4xx status chosen from the exception type; a 5xx is
always a bug.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, Query, Request, WebSocket
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from semps.api.fastpath import PublishFastPath, read_bounded
from semps.api.streams import DEFAULT_MAX_STREAMS, Streams, close_reason, parse_position
from semps.broker.broker import Broker
from semps.broker.callbacks import CallbackPolicy
from semps.broker.fanout import Fanout
from semps.errors import (
    AuthError,
    DocumentTooLarge,
    EventLimitExceeded,
    HostileInputError,
    IngestError,
    NotFound,
    OntologyError,
    PermissionDenied,
    PluginNotFound,
    SempsError,
    SubscriptionLimitExceeded,
    SubscriptionSyntaxError,
    TooManyRequests,
    UnsafeCallback,
    UnsupportedMediaType,
    UnsupportedQueryError,
)
from semps.limits import Limits
from semps.matcher.base import Subscription


def _body_doc(*media_types: str) -> dict[str, object]:
    """OpenAPI for a raw request body (the routes read it themselves, bounded)."""
    schema = {"type": "string"}
    content = {m: {"schema": schema} for m in media_types}
    return {"requestBody": {"required": True, "content": content}}


# text/plain is N-Triples for events, and plain query text for subscriptions.
RDF_BODY = _body_doc(
    "application/rdf+xml",
    "text/turtle",
    "application/n-triples",
    "application/ld+json",
    "text/plain",
)
QUERY_BODY = _body_doc("application/sparql-query", "text/plain")

#: JSON events (content values, symmetric regions) and JSON subscriptions (content, symmetric).
_JSON_EVENT = {
    "type": "object",
    "properties": {
        "values": {"type": "object", "additionalProperties": {"type": ["number", "string"]}},
        "region": {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": "number"},
                "minItems": 2,
                "maxItems": 2,
            },
        },
        "time": {"type": "number"},
    },
}
_JSON_SUBSCRIPTION = {
    "type": "object",
    "properties": {
        "constraints": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "attr": {"type": "string"},
                    "op": {"type": "string", "enum": [">=", "<=", "=", "between"]},
                    "value": {"type": ["number", "string"]},
                    "low": {"type": "number"},
                    "high": {"type": "number"},
                },
            },
        },
        "region": _JSON_EVENT["properties"]["region"],  # type: ignore[index]
    },
}
EVENT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            **RDF_BODY["requestBody"]["content"],  # type: ignore[index]
            "application/json": {"schema": _JSON_EVENT},
        },
    }
}
SUBSCRIPTION_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            **QUERY_BODY["requestBody"]["content"],  # type: ignore[index]
            "application/json": {"schema": _JSON_SUBSCRIPTION},
        },
    }
}
JSON_AXIOM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string"},
                        "subject": {"type": "string"},
                        "object": {"type": "string"},
                    },
                }
            }
        },
    }
}

JSON_ENTITY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "iri": {"type": "string"},
                        "parents": {"type": "array", "items": {"type": "string"}},
                        "kind": {"type": "string", "enum": ["object", "datatype"]},
                    },
                }
            }
        },
    }
}

BATCH_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "events": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "media_type": {"type": "string"},
                                    "body": {"type": "string"},
                                },
                            },
                        }
                    },
                }
            }
        },
    }
}

#: Exception type -> (HTTP status, error name), most specific first.
STATUS: list[tuple[type[Exception], int, str]] = [
    (PermissionDenied, 403, "forbidden"),
    (AuthError, 401, "unauthorized"),
    (NotFound, 404, "not_found"),
    (DocumentTooLarge, 413, "too_large"),
    (UnsupportedMediaType, 415, "unsupported_media_type"),
    (EventLimitExceeded, 422, "limit_exceeded"),
    (SubscriptionLimitExceeded, 422, "limit_exceeded"),
    (HostileInputError, 400, "hostile_input"),
    (IngestError, 400, "bad_event"),
    (SubscriptionSyntaxError, 400, "syntax_error"),
    (UnsupportedQueryError, 422, "unsupported_query"),
    (PluginNotFound, 400, "unknown_kind"),
    (OntologyError, 400, "bad_ontology"),
    (UnsafeCallback, 400, "unsafe_callback"),
    (TooManyRequests, 429, "too_many_requests"),
    (SempsError, 400, "bad_request"),
]

DEFAULT_MAX_BODY = 16 * 1024 * 1024


def _error_body(exc: Exception) -> dict[str, object]:
    for kind, _status, name in STATUS:
        if isinstance(exc, kind):
            body: dict[str, object] = {"error": name, "detail": str(exc)}
            line = getattr(exc, "line", None)
            if line is not None:
                body["line"], body["column"] = line, getattr(exc, "column", None)
            construct = getattr(exc, "construct", None)
            if construct:
                body["construct"] = construct
            return body
    raise exc


def _error_parts(exc: Exception) -> tuple[int, dict[str, object], dict[str, str]]:
    """(status, JSON body, extra headers) of an error response."""
    status = next(s for kind, s, _ in STATUS if isinstance(exc, kind))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    return status, _error_body(exc), headers


def _error(exc: Exception) -> JSONResponse:
    status, body, headers = _error_parts(exc)
    return JSONResponse(body, status_code=status, headers=headers or None)


def _batch(body: bytes) -> list[tuple[str, bytes]]:
    try:
        doc = json.loads(body)
        items = [
            (str(e.get("media_type") or "application/rdf+xml"), str(e["body"]).encode())
            for e in doc["events"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        msg = 'expected JSON {"events": [{"media_type": ..., "body": "..."}, ...]}'
        raise IngestError(msg) from exc
    return items


async def _body(request: Request, limit: int) -> bytes:
    """Read the body, refusing it as soon as it passes ``limit`` bytes."""
    return await read_bounded(request.headers.get("content-length"), request.stream(), limit)


def create_app(
    data_dir: Path,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    webhook_attempts: int = 5,
    webhook_backoff: float = 0.5,
    webhook_allow: Sequence[str] = (),
    max_streams: int = DEFAULT_MAX_STREAMS,
    limits: Limits | None = None,
    workers: int = 2,
    webhook_options: dict[str, Any] | None = None,
    fast_publish: bool = True,
) -> FastAPI:
    """The FastAPI application over a broker on ``data_dir``.

    ``max_body`` bounds every request body (413 past it); ``limits`` the work a request may
    cause (:class:`~semps.limits.Limits`); ``workers`` is the number of matching processes.
    """
    limits = limits or Limits(max_event_bytes=max_body)
    policy = CallbackPolicy(webhook_allow)  # a bad --webhook-allow fails before the broker starts
    broker = Broker(
        data_dir,
        limits=limits,
        workers=workers,
        webhook_attempts=webhook_attempts,
        webhook_backoff=webhook_backoff,
        webhook_options=webhook_options,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        broker.close()

    app = FastAPI(
        title="semps", description="Semantic RDF publish/subscribe broker", lifespan=lifespan
    )
    app.state.broker = broker
    # The SSRF guard is the dispatcher's before it starts.
    broker.webhooks.policy = policy
    broker.webhooks.start()
    fanout = Fanout()  # committed notifications -> live streams, from memory
    app.state.fanout = fanout

    def sent(count: int) -> None:
        broker.metrics.notifications_out += count

    streams = Streams(broker.store, fanout, max_streams=max_streams, sent=sent)
    broker.listeners.append(fanout.publish)
    app.add_exception_handler(SempsError, lambda request, exc: _error(exc))
    if fast_publish:  # POST /events without the framework's per-request cost
        app.add_middleware(PublishFastPath, broker=broker, max_body=max_body, errors=_error_parts)

    @app.get("/health")
    def health() -> dict[str, object]:
        return {"status": "ok", "subscriptions": len(broker)}

    @app.post("/subscriptions", status_code=201, openapi_extra=SUBSCRIPTION_BODY)
    async def subscribe(
        request: Request,
        kind: str = Query("semantic"),
        name: str | None = Query(None),
        callback: str | None = Query(None, description="webhook URL (http or https)"),
        authorization: str | None = Header(None),
    ) -> dict[str, str]:
        who = broker.authenticate(authorization, "subscriber")
        text = (await _body(request, max_body)).decode("utf-8", "replace")
        if callback is not None:
            policy.check_url(callback)  # UnsafeCallback (400) before anything is registered
        sub = await run_in_threadpool(
            broker.subscribe, text, kind=kind, owner=who.subject, name=name
        )
        if callback is None:
            return {"id": sub.id}
        return {"id": sub.id, "secret": broker.store.set_webhook(sub.id, callback)}

    @app.get("/subscriptions")
    def list_subscriptions(authorization: str | None = Header(None)) -> list[dict[str, object]]:
        who = broker.authenticate(authorization, "subscriber")
        owner = None if who.role == "admin" else who.subject
        return [_sub_json(s, broker) for s in broker.subscriptions(owner)]

    @app.get("/subscriptions/{sub_id}")
    def get_subscription(
        sub_id: str, authorization: str | None = Header(None)
    ) -> dict[str, object]:
        sub = broker.visible(sub_id, broker.authenticate(authorization, "subscriber"))
        return _sub_json(sub, broker)

    @app.post("/subscriptions/{sub_id}/resume")
    async def resume_subscription(
        sub_id: str, authorization: str | None = Header(None)
    ) -> dict[str, object]:
        """Put a suspended subscription back into matching (admin)."""
        broker.authenticate(authorization, "admin")
        sub = await run_in_threadpool(broker.resume, sub_id)
        return _sub_json(sub, broker)

    @app.put("/subscriptions/{sub_id}", openapi_extra=SUBSCRIPTION_BODY)
    async def replace_subscription(
        sub_id: str,
        request: Request,
        kind: str = Query("semantic"),
        name: str | None = Query(None),
        authorization: str | None = Header(None),
    ) -> dict[str, str]:
        who = broker.authenticate(authorization, "subscriber")
        old = broker.visible(sub_id, who)
        text = (await _body(request, max_body)).decode("utf-8", "replace")
        await run_in_threadpool(
            broker.subscribe,
            text,
            kind=kind,
            owner=old.owner or who.subject,
            name=name,
            sub_id=sub_id,
        )
        return {"id": sub_id}

    @app.delete("/subscriptions/{sub_id}", status_code=204)
    def delete_subscription(sub_id: str, authorization: str | None = Header(None)) -> Response:
        broker.visible(sub_id, broker.authenticate(authorization, "subscriber"))
        broker.unsubscribe(sub_id)
        return Response(status_code=204)

    @app.post("/events", status_code=202, openapi_extra=EVENT_BODY)
    async def publish(
        request: Request,
        content_type: str | None = Header(None),
        authorization: str | None = Header(None),
    ) -> dict[str, object]:
        broker.authenticate(authorization, "publisher")
        data = await _body(request, max_body)
        event_id, matched = await broker.publish(data, content_type or "application/rdf+xml")
        return {"id": event_id, "matched": matched}

    @app.post("/events/batch", status_code=202, openapi_extra=BATCH_BODY)
    async def publish_batch(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, list[dict[str, object]]]:
        """Many events in one request: ``{"events": [{"media_type": ..., "body": ...}]}``.
        Each is ingested on its own: a bad one gets its error, the others are published."""
        broker.authenticate(authorization, "publisher")
        items = _batch(await _body(request, max_body))
        results: list[dict[str, object]] = []
        for outcome in await broker.publish_many(items):
            if isinstance(outcome, SempsError):
                results.append(_error_body(outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                results.append({"id": outcome[0], "matched": outcome[1]})
        return {"events": results}

    @app.get("/subscriptions/{sub_id}/notifications")
    async def stream(
        sub_id: str,
        last_event_id: str | None = Header(None),
        after: str | None = Query(None, description="resume after this id (ASCII digits)"),
        once: bool = Query(False, description="send what is stored, then close"),
        authorization: str | None = Header(None),
    ) -> StreamingResponse:
        who = broker.authenticate(authorization, "subscriber")
        broker.visible(sub_id, who)
        start = parse_position(after, "after")
        if last_event_id:
            start = parse_position(last_event_id, "Last-Event-ID")
        return streams.sse(sub_id, start, once, streams.lease(who.subject))

    @app.get("/ontology")
    def get_ontology(
        accept: str | None = Header(None), authorization: str | None = Header(None)
    ) -> Response:
        broker.authenticate(authorization)
        turtle = accept is not None and "turtle" in accept
        body = broker.ontology.export("turtle" if turtle else "rdfxml")
        return Response(body, media_type="text/turtle" if turtle else "application/rdf+xml")

    @app.put("/ontology", openapi_extra=RDF_BODY)
    async def replace_ontology(
        request: Request,
        content_type: str | None = Header(None),
        authorization: str | None = Header(None),
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        data = await _body(request, max_body)
        await run_in_threadpool(broker.ontology.load, data, format=content_type, replace=True)
        return {"version": broker.ontology.version}

    @app.post("/ontology", openapi_extra=RDF_BODY)
    async def merge_ontology(
        request: Request,
        content_type: str | None = Header(None),
        authorization: str | None = Header(None),
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        data = await _body(request, max_body)
        await run_in_threadpool(broker.ontology.load, data, format=content_type)
        return {"version": broker.ontology.version}

    @app.post("/ontology/axioms", openapi_extra=JSON_AXIOM)
    async def add_axiom(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        kind, subject, obj = _axiom(await _body(request, 65536))
        await run_in_threadpool(broker.ontology.add_axiom, kind, subject, obj)
        return {"version": broker.ontology.version}

    @app.delete("/ontology/axioms", openapi_extra=JSON_AXIOM)
    async def remove_axiom(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        kind, subject, obj = _axiom(await _body(request, 65536))
        await run_in_threadpool(broker.ontology.remove_axiom, kind, subject, obj)
        return {"version": broker.ontology.version}

    @app.post("/ontology/classes", openapi_extra=JSON_ENTITY)
    async def add_class(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        iri, parents, _ = _entity(await _body(request, 65536))
        await run_in_threadpool(broker.ontology.add_class, iri, parents)
        return {"version": broker.ontology.version}

    @app.post("/ontology/properties", openapi_extra=JSON_ENTITY)
    async def add_property(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        iri, parents, kind = _entity(await _body(request, 65536))
        await run_in_threadpool(broker.ontology.add_property, iri, kind, parents)  # type: ignore[arg-type]
        return {"version": broker.ontology.version}

    @app.delete("/ontology/entities")
    async def remove_entity(
        iri: str = Query(..., description="a class or property IRI"),
        authorization: str | None = Header(None),
    ) -> dict[str, int]:
        broker.authenticate(authorization, "admin")
        await run_in_threadpool(broker.ontology.remove_class, iri)
        return {"version": broker.ontology.version}

    @app.get("/deadletters")
    def dead_letters(authorization: str | None = Header(None)) -> list[dict[str, object]]:
        broker.authenticate(authorization, "admin")
        return [dict(vars_of(d)) for d in broker.store.dead_letters()]

    @app.post("/deadletters/{letter_id}/replay")
    async def replay(letter_id: int, authorization: str | None = Header(None)) -> dict[str, object]:
        broker.authenticate(authorization, "admin")
        letters = {d.id: d for d in broker.store.dead_letters()}
        if letter_id not in letters:
            msg = f"no dead letter {letter_id}"
            raise NotFound(msg)
        error = await run_in_threadpool(broker.webhooks.replay, letters[letter_id])
        return {"delivered": error is None, "error": error}

    @app.websocket("/subscriptions/{sub_id}/ws")
    async def websocket(ws: WebSocket, sub_id: str, after: str = "", token: str = "") -> None:
        header = ws.headers.get("authorization") or (f"Bearer {token}" if token else None)
        try:
            who = broker.authenticate(header, "subscriber")
            broker.visible(sub_id, who)
        except SempsError as exc:
            await ws.close(code=4403, reason=close_reason(exc))
            return
        await ws.accept()  # accepted first, so the client sees the close codes below
        try:
            start = parse_position(after, "after")
            lease = streams.lease(who.subject)
        except SempsError as exc:
            code = 4429 if isinstance(exc, TooManyRequests) else 4400
            await ws.close(code=code, reason=close_reason(exc))
            return
        await streams.websocket(ws, sub_id, start, lease)

    @app.get("/metrics", response_class=PlainTextResponse)
    def metrics(authorization: str | None = Header(None)) -> str:
        broker.authenticate(authorization)
        return broker.metrics.prometheus(
            subscriptions=len(broker),
            queue_depth=broker.pipeline.depth,
            worker_respawns=broker.pipeline.respawns,
            webhook_backlog=broker.store.webhook_backlog(),
            dead_letters=len(broker.store.dead_letters()),
        )

    return app


def vars_of(obj: object) -> dict[str, object]:
    """A dataclass with slots as a dict."""
    return {k: getattr(obj, k) for k in obj.__slots__}  # type: ignore[attr-defined]


def _entity(body: bytes) -> tuple[str, list[str], str]:
    try:
        doc = json.loads(body)
        parents = [str(p) for p in doc.get("parents", [])]
        return str(doc["iri"]), parents, str(doc.get("kind", "object"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        msg = 'expected JSON {"iri": IRI, "parents": [IRI, ...], "kind": "object"|"datatype"}'
        raise OntologyError(msg) from exc


def _sub_json(sub: Subscription, broker: Broker) -> dict[str, object]:
    body: dict[str, object] = {k: getattr(sub, k) for k in ("id", "kind", "text", "owner", "name")}
    body["status"], reason = broker.status(sub.id)
    if reason is not None:
        body["reason"] = reason
    return body


def _axiom(body: bytes) -> tuple[str, str, str]:
    try:
        doc = json.loads(body)
        return str(doc["kind"]), str(doc["subject"]), str(doc["object"])
    except (ValueError, KeyError, TypeError) as exc:
        msg = 'expected JSON {"kind": ..., "subject": IRI, "object": IRI}'
        raise OntologyError(msg) from exc
