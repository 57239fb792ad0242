"""``/health`` (public) and ``/metrics`` (Prometheus text).

``/metrics`` takes any valid bearer token, or the operator's separate metrics token
(``semps serve --metrics-token``), which may read ``/metrics`` and nothing else, so a
Prometheus scraper need not hold a real token.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials

from semps.api.auth import bearer_scheme
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.metrics import render
from semps.api.models import Health

__all__ = ["health_router"]


def health_router(ctx: Context) -> APIRouter:
    """``/health`` and ``/metrics``."""
    router = APIRouter(tags=["service"])
    broker = ctx.broker

    @router.get("/health")
    def health() -> Health:
        """Whether the service is up (no token needed)."""
        return Health(status="ok", subscriptions=len(broker))

    @router.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={200: {"content": {"text/plain": {}}}, **responses(401)},
    )
    def metrics(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
    ) -> str:
        """Counters, gauges and the publish-latency histogram, as Prometheus text."""
        token = credentials.credentials if credentials is not None else None
        if not (token and ctx.metrics_token and hmac.compare_digest(token, ctx.metrics_token)):
            ctx.auth.check(f"Bearer {token}" if token else None)
        return render(
            broker.metrics,
            ctx.errors,
            {
                "subscriptions": len(broker),
                "queue_depth": broker.pipeline.depth,
                "worker_respawns": broker.pipeline.respawns,
                "webhook_backlog": broker.store.webhook_backlog(),
                "dead_letters": len(broker.store.dead_letters()),
                "open_streams": ctx.streams.total_open(),
            },
        )

    return router
