"""The HTTP API over one :class:`~semps.broker.broker.Broker` (FastAPI).

:func:`create_app` wires the broker, the routers (:mod:`semps.api.routes`, one per area), the
error handlers (every 4xx/5xx is ``{"error", "detail"}``: :mod:`semps.api.errors`), the
plain-ASGI publishing handler (:class:`~semps.api.routes.events.PublishRoute`) and the
offline ``/docs``. Every endpoint but ``/health``, ``/docs`` and
``/openapi.json`` needs ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.routing import BaseRoute

from semps.api.auth import Auth
from semps.api.console import console_router
from semps.api.context import Context
from semps.api.docs import docs_router
from semps.api.errors import error_parts, install_error_handlers, responses
from semps.api.metrics import StatusCounter
from semps.api.models import BODY_MODELS
from semps.api.multiplex import Multiplexer
from semps.api.routes import (
    PublishRoute,
    SubscribeRoute,
    deadletters_router,
    events_router,
    explain_router,
    graph_router,
    health_router,
    notifications_router,
    ontology_router,
    query_router,
    sepa_router,
    solid_router,
    streams_router,
    subscriptions_router,
    tokens_router,
)
from semps.api.solid_channels import WebhookChannels
from semps.api.streams import DEFAULT_MAX_STREAMS, Streams
from semps.broker.at_rest import SecretBox
from semps.broker.broker import Broker
from semps.broker.callbacks import CallbackPolicy
from semps.broker.contracts import Store
from semps.broker.fanout import Fanout
from semps.limits import Limits

__all__ = ["DEFAULT_MAX_BODY", "create_app"]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
_DESCRIPTION = "Semantic RDF publish/subscribe broker"


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
    metrics_token: str | None = None,
    store: Store | None = None,
) -> FastAPI:
    """The FastAPI application over a broker on ``data_dir``.

    ``max_body`` bounds every request body (413 past it); ``limits`` the work a request may
    cause (:class:`~semps.limits.Limits`); ``workers`` is the number of matching processes;
    ``metrics_token`` may read ``/metrics`` and nothing else; ``store`` replaces the SQLite
    store (tests pass a :class:`~semps.broker.memory.MemoryStore`).
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
        store=store,
    )
    broker.webhooks.policy = policy  # the SSRF guard is the dispatcher's before it starts
    broker.webhooks.start()
    fanout = Fanout()  # committed notifications -> live streams, from memory
    broker.channels.append(fanout)

    def sent(count: int) -> None:
        broker.metrics.notifications_out += count

    streams = Streams(broker.store, fanout, max_streams=max_streams, sent=sent)
    ctx = Context(broker, Auth(broker), streams, policy, max_body, metrics_token)
    key = SecretBox.from_dir(broker.data_dir).derive("stream cursors")
    mux = Multiplexer(streams, key, max_subscriptions=limits.max_stream_subscriptions)
    ctx.cursor_key = SecretBox.from_dir(broker.data_dir).derive("list cursors")
    solid_key = SecretBox.from_dir(broker.data_dir).derive("solid channels")
    hooks = WebhookChannels(ctx, mux, solid_key, broker.data_dir / "solid-webhooks.json")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await hooks.restore()  # the Solid webhook channels of the last run go on
        yield
        await hooks.close()
        broker.close()

    app = FastAPI(
        title="semps",
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served from the package's own assets by docs_router
        redoc_url=None,
    )
    app.state.broker = broker
    app.state.fanout = fanout
    app.state.context = ctx
    app.state.multiplexer = mux
    install_error_handlers(app)
    for router in (
        health_router,
        subscriptions_router,
        streams_router,
        ontology_router,
        graph_router,
        query_router,
        deadletters_router,
        tokens_router,
        explain_router,
    ):
        app.include_router(router(ctx))
    app.include_router(notifications_router(ctx, mux))  # many subscriptions, one stream
    app.include_router(sepa_router(ctx, mux))  # SEPA's SPARQL 1.1 Subscribe protocol
    app.include_router(solid_router(ctx, mux, hooks))  # the Solid Notifications Protocol
    app.include_router(docs_router())
    app.include_router(console_router())  # the web console, /console/
    # POST /events and /events/batch, answered without the framework's per-request cost
    app.add_middleware(PublishRoute, broker=broker, max_body=max_body, errors=error_parts)
    # POST /subscriptions without webhook or retention parameters, likewise
    app.add_middleware(SubscribeRoute, broker=broker, max_body=max_body, errors=error_parts)
    app.add_middleware(StatusCounter, counts=ctx.errors)  # outermost: sees every response
    documented = events_router(ctx).routes  # described in the OpenAPI document, not mounted
    app.openapi = lambda: _openapi(app, documented)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI, documented: Sequence[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI document: the application's routes and the ``documented`` ones answered
    ahead of it, with the schemas of the bodies the routes read themselves."""
    if app.openapi_schema is None:
        routes = [*app.routes, *documented]
        doc = get_openapi(
            title=app.title, version=app.version, description=_DESCRIPTION, routes=routes
        )
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        for model in BODY_MODELS:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(schema.pop("$defs", {}))
            schemas.setdefault(model.__name__, schema)
        _validation_errors_in_our_shape(doc)
        app.openapi_schema = doc
    return app.openapi_schema


def _validation_errors_in_our_shape(doc: dict[str, Any]) -> None:
    """The framework documents its 422 with its own model; ours has the one error shape."""
    for item in doc.get("paths", {}).values():
        for operation in item.values():
            response = operation.get("responses", {}).get("422")
            if response is not None:
                operation["responses"]["422"] = responses(422)[422]
    for name in ("HTTPValidationError", "ValidationError"):
        doc["components"]["schemas"].pop(name, None)
