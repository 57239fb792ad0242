"""``POST /subscriptions`` in its common form, answered by plain ASGI.

One registration a request is the other hot path beside publishing: with many clients
registering at once, FastAPI's per-request machinery (dependency solving, query and header
models, middleware layers, the response model) cost more of the server's CPU than the
registration itself (about 65% of the main process's). :class:`SubscribeRoute` answers
``POST /subscriptions`` itself when its query holds at most ``kind`` and ``name``, each
once: the bearer check (role ``subscriber``), the kind's body media type, the body bounded
while it is read, 201 ``{"id"}``, and errors in the one JSON error shape, as the route in
:mod:`.subscriptions` answers them. Every other request, and one with any other parameter
(``callback``, ``retain_count``, ``retain_age``, or an unknown one), goes on to the
application, whose route stays the one the OpenAPI document describes.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from semps.api.auth import bearer_token
from semps.api.bodies import read_bounded
from semps.api.routes.events import (
    AsgiRoute,
    Disconnected,
    Receive,
    Scope,
    Send,
    body_chunks,
    header_text,
    respond,
)
from semps.api.routes.subscriptions import check_body_type, register_text

__all__ = ["SubscribeRoute"]

#: The query parameters this handler answers for; any other goes to the application.
_PARAMETERS = frozenset({"kind", "name"})


class SubscribeRoute(AsgiRoute):
    """The handler of ``POST /subscriptions`` without webhook or retention parameters:
    ASGI middleware that answers it and passes every other request on (see the module
    docstring)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = _simple_query(scope)
        if query is None:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        kind, name = query.get("kind", "semantic"), query.get("name")
        try:
            token = bearer_token(header_text(headers.get(b"authorization")))
            client = scope.get("client")
            who = self.broker.authorize(token, "subscriber", client=client[0] if client else None)
            content_type = header_text(headers.get(b"content-type"))
            found = content_type.split(";", 1)[0].strip().lower() or None if content_type else None
            check_body_type(found, kind)
            declared = header_text(headers.get(b"content-length"))
            body = await read_bounded(declared, body_chunks(receive), self.max_body)
            text = body.decode("utf-8", "replace")
            sub = await register_text(self.broker, text, kind, who.subject, name)
        except Disconnected:  # the client went away: nobody to answer, nothing registered
            return
        except Exception as exc:  # ours: its status; anything else: the one 500 shape
            status, doc, extra = self.errors(exc)
            await respond(send, status, doc, extra)
            return
        await respond(send, 201, {"id": sub.id}, {})


def _simple_query(scope: Scope) -> dict[str, str] | None:
    """The query of a ``POST /subscriptions`` this handler answers, one value a name;
    ``None``: not such a request."""
    if (
        scope["type"] != "http"
        or scope["method"] != "POST"
        or scope.get("path") != "/subscriptions"
    ):
        return None
    raw = scope.get("query_string", b"").decode("latin-1")
    try:
        parsed = parse_qs(raw, keep_blank_values=True, strict_parsing=bool(raw))
    except ValueError:
        return None
    if not _PARAMETERS.issuperset(parsed) or any(len(v) != 1 for v in parsed.values()):
        return None
    return {k: v[0] for k, v in parsed.items()}
