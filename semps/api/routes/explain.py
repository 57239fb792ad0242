"""``GET /events/{id}`` (a published event: its document and triples, after inference with
``?closed=true``) and ``POST /subscriptions/{id}/explain`` (why a subscription matches an
event, or why not: a posted event, or ``?event=ID`` for a stored one).

Who may read an event: an admin, any; a publisher, the events it published; a subscriber,
the events that notified one of its subscriptions. Any other event, like one not (or no
longer) stored, is a 404 ``no event 'ID'``: the answer does not tell an event that exists
from one that does not. Explaining needs the subscription's owner (or an admin), and, for a
stored event, the right to read it.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool

from semps._types import Triple
from semps.api.bodies import read_body, request_body, require_media_type, text_content
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.routes.events import EVENT_MEDIA_TYPES
from semps.broker.broker import Broker
from semps.broker.contracts import StoredEvent
from semps.broker.tokens import Principal
from semps.broker.worker import read_published
from semps.errors import NotFound, SempsError
from semps.event import Event
from semps.graph.view import GraphView
from semps.ingest.json_event import is_json_media_type
from semps.matcher.base import MatchContext
from semps.matcher.explanation import prefixes_of, render_text, to_json
from semps.matcher.registry import create_matcher
from semps.ontology.closure import close
from semps.terms import n3

__all__ = ["explain_router", "readable_event"]

_EVENT_BODY = request_body(text_content(EVENT_MEDIA_TYPES), required=False)


def readable_event(broker: Broker, event_id: str, who: Principal) -> StoredEvent:
    """The stored event if ``who`` may read it (see the module docstring).

    Raises:
        NotFound: no such event stored, or not the caller's to read.
    """
    found = broker.store.event_document(event_id)
    if who.role == "admin":
        return found
    if who.role == "publisher" and found.publisher == who.subject:
        return found
    if who.role == "subscriber":
        for sub_id in found.notified:
            try:
                broker.visible(sub_id, who)
            except NotFound:
                continue
            return found
    msg = f"no event {event_id!r}"
    raise NotFound(msg)


def _parse(broker: Broker, event_id: str, media_type: str, body: bytes) -> Event:
    if is_json_media_type(media_type):
        msg = "a JSON event has no triples to show or explain (send RDF)"
        raise SempsError(msg)
    return read_published(broker.limits, event_id, media_type, body)


def _triples(triples: Any) -> list[list[str]]:
    return [[n3(s), n3(p), n3(o)] for s, p, o in triples]


def explain_router(ctx: Context) -> APIRouter:
    """The event view and explanation routes."""
    router = APIRouter(tags=["events"])
    broker = ctx.broker
    Reader = Annotated[Principal, Depends(ctx.auth.require("subscriber", "publisher"))]  # noqa: N806
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806

    def event_view(event_id: str, closed: bool, who: Principal) -> dict[str, object]:
        found = readable_event(broker, event_id, who)
        if is_json_media_type(found.media_type):  # attribute values: no triples
            event = Event(event_id, ())
        else:
            event = _parse(broker, event_id, found.media_type, found.body)
        triples: Any = event.triples
        if closed:
            triples = close(broker.ontology.expansion(), event.triples, limits=broker.limits)
        return {
            "id": event_id,
            "media_type": found.media_type,
            "received": found.received,
            "publisher": found.publisher,
            "closed": closed,
            "inferred": len(triples) - len(event.triples),
            "document": found.body.decode("utf-8", "replace"),
            "triples": _triples(triples),
        }

    @router.get("/events/{event_id}", responses=responses(400, 401, 403, 404, 422))
    async def get_event(
        event_id: str,
        who: Reader,
        closed: bool = Query(False, description="the event after inference (the ontology's)"),
    ) -> dict[str, object]:
        """A published event: its document as published and its triples (N-Triples terms;
        with ``closed=true``, closed under the current ontology, ``inferred`` counting
        what inference added)."""
        return await run_in_threadpool(event_view, event_id, closed, who)

    axioms: dict[int, tuple[Triple, ...]] = {}  # the ontology's triples, by its version

    def ontology_triples() -> tuple[Triple, ...]:
        version = broker.ontology.version
        found = axioms.get(version)
        if found is None:
            found = tuple(broker.ontology.triples())
            axioms.clear()
            axioms[version] = found
        return found

    def explanation(
        sub_id: str, who: Principal, event: Event, graph: GraphView | None
    ) -> dict[str, object]:
        sub = broker.visible(sub_id, who)
        matcher = create_matcher(sub.kind)
        try:
            expansion = broker.ontology.expansion()
            context = MatchContext(event, expansion, limits=broker.limits, graph=graph)
            found = matcher.explain(sub, context, ontology_triples())
        finally:
            matcher.close()
        return {**to_json(found), "text": render_text(found, prefixes_of(sub.text))}

    @router.post(
        "/subscriptions/{sub_id}/explain",
        openapi_extra=_EVENT_BODY,
        responses=responses(400, 401, 403, 404, 413, 415, 422),
    )
    async def explain(
        sub_id: str,
        request: Request,
        who: Subscriber,
        event: str | None = Query(None, description="a stored event's id (else: the body)"),
    ) -> dict[str, object]:
        """Why the subscription matches an event, or why not: the event posted as the body
        (its media type as for ``POST /events``), or the stored event ``event``."""
        if event is not None:
            stored = await run_in_threadpool(readable_event, broker, event, who)
            parsed = await run_in_threadpool(_parse, broker, event, stored.media_type, stored.body)
        else:
            kind = require_media_type(request, EVENT_MEDIA_TYPES) or "application/rdf+xml"
            body = await read_body(request, ctx.max_body)
            if not body:
                msg = "send the event as the body, or name a stored one with ?event=ID"
                raise SempsError(msg)
            parsed = await run_in_threadpool(_parse, broker, "posted", kind, body)
        broker.visible(sub_id, who)  # (a 404 before the graph's turn is waited for)
        return await broker.graphs.reading(
            lambda view: explanation(sub_id, who, parsed, view), who=who.subject
        )

    return router
