"""The HTTP API's routers, one module per area; each exposes a factory taking the
application's :class:`~semps.api.context.Context` and returning an ``APIRouter``. Publishing
is answered by plain ASGI (:class:`PublishRoute`); its router only documents it."""

from __future__ import annotations

from semps.api.routes.deadletters import deadletters_router
from semps.api.routes.events import PublishRoute, events_router
from semps.api.routes.explain import explain_router
from semps.api.routes.graph import graph_router
from semps.api.routes.health import health_router
from semps.api.routes.notifications import notifications_router
from semps.api.routes.ontology import ontology_router
from semps.api.routes.query import query_router
from semps.api.routes.sepa import sepa_router
from semps.api.routes.solid import solid_router
from semps.api.routes.streams import streams_router
from semps.api.routes.subscribe import SubscribeRoute
from semps.api.routes.subscriptions import subscriptions_router
from semps.api.routes.tokens import tokens_router

__all__ = [
    "PublishRoute",
    "SubscribeRoute",
    "deadletters_router",
    "events_router",
    "explain_router",
    "graph_router",
    "health_router",
    "notifications_router",
    "ontology_router",
    "query_router",
    "sepa_router",
    "solid_router",
    "streams_router",
    "subscriptions_router",
    "tokens_router",
]
