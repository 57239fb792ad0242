"""The web console's routes: its static pages (public) and a few JSON helpers (token needed).

The pages are plain HTML, CSS and JavaScript modules shipped in ``static/`` (no CDN, no build
step) and served under a strict Content-Security-Policy: scripts and styles from the console
itself only, no inline script, no framing. Everything else the console does goes through the
ordinary HTTP API with the bearer token the user pastes; the helpers here only add what the
API does not give a browser directly:

- ``GET /console/api/whoami``: who the token belongs to and its role (the console offers
  only what the role may do).
- ``GET /console/api/ontology-summary``: the ontology's version, sizes and namespaces (with
  a prefix suggested for each).
- ``GET /console/api/ontology-tree?tree=classes|properties&parent=IRI&offset=&limit=``: one
  page of a level of a tree (the roots without ``parent``); ``focus=IRI`` picks the page
  that holds it.
- ``GET /console/api/ontology-search?tree=...&q=TEXT&limit=``: entities whose IRI or label
  holds ``TEXT``, each with its path from a root.
- ``GET /console/api/ontology-axioms?q=TEXT&offset=&limit=``: one page of the named axioms.
- ``POST /console/api/check?kind=...``: runs the matcher's own parser over a subscription
  text without registering it; answers ``{"ok": true}`` or the error with its line and column.

Suspending and resuming go through the API's own ``POST /subscriptions/{id}/suspend`` and
``/resume`` (admin). The ontology helpers read a view built once per ontology version
(:class:`~semps.api.console.tree.ViewCache`); each request then does work in proportion to
its page (a search: one scan of the names), at most :data:`MAX_PAGE` items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from semps.api.auth import Auth
from semps.api.bodies import read_bounded
from semps.api.console.tree import OntologyView, TreeName, ViewCache
from semps.broker.broker import Broker
from semps.broker.tokens import Principal
from semps.errors import NotFound, SubscriptionError
from semps.matcher.registry import get_matcher_class
from semps.matcher.values import Subscription

__all__ = ["CONTENT_SECURITY_POLICY", "MAX_PAGE", "STATIC", "console_router"]

#: The console's files, shipped as package data.
STATIC = Path(__file__).with_name("static")
#: Only the console's own scripts, styles and API; no inline script, no framing, no plugins.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
#: The most items one ontology helper answers (a page of a level, of hits, of axioms).
MAX_PAGE = 500
#: The longest IRI or search text the ontology helpers take.
MAX_TEXT = 2048
_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


def _static_files() -> dict[str, Path]:
    """The servable files by name: a fixed set read once, so no request names a path."""
    return {p.name: p for p in STATIC.iterdir() if p.suffix in _MEDIA_TYPES and p.is_file()}


def _page(path: Path) -> Response:
    return Response(path.read_bytes(), media_type=_MEDIA_TYPES[path.suffix], headers=_HEADERS)


def _broker(request: Request) -> Broker:
    broker: Broker = request.app.state.broker
    return broker


def _who(request: Request, authorization: str | None, *roles: str) -> Principal:
    """The caller behind the ``Authorization`` header, checked as the API checks it."""
    auth: Auth = request.app.state.context.auth
    return auth.check(authorization, *roles, client=request.client.host if request.client else None)


def check_subscription(text: str, kind: str, broker: Broker) -> dict[str, object]:
    """Parse ``text`` with a fresh matcher of ``kind`` under the broker's limits (what
    registering it would run first) and report the outcome without registering anything."""
    matcher = get_matcher_class(kind)()  # PluginNotFound: unknown kind (400 unknown_kind)
    matcher.limits = broker.limits
    try:
        broker.limits.check_query_size(text)
        matcher.add(Subscription("console-check", kind, text, "console"))
    except SubscriptionError as exc:
        found: dict[str, object] = {"ok": False, "error": type(exc).__name__}
        found["detail"] = str(exc)
        found["line"] = getattr(exc, "line", None)
        found["column"] = getattr(exc, "column", None)
        return found
    finally:
        close = getattr(matcher, "close", None)
        if close is not None:
            close()
    return {"ok": True}


def console_router() -> APIRouter:
    """The console's routes, to be included in the application (``/console/...``)."""
    router = APIRouter(prefix="/console", include_in_schema=False)
    files = _static_files()

    @router.get("")
    def console_root() -> RedirectResponse:
        return RedirectResponse("/console/", status_code=308)

    @router.get("/")
    def console_index() -> Response:
        return _page(files["index.html"])

    @router.get("/static/{name}")
    def console_static(name: str) -> Response:
        path = files.get(name)
        if path is None:
            msg = f"no console file {name!r}"
            raise NotFound(msg)
        return _page(path)

    @router.get("/api/whoami")
    def whoami(request: Request, authorization: str | None = Header(None)) -> dict[str, str]:
        who = _who(request, authorization)
        return {"subject": who.subject, "role": who.role}

    views = ViewCache()

    async def view(request: Request, authorization: str | None) -> OntologyView:
        _who(request, authorization)
        store = _broker(request).ontology
        return await run_in_threadpool(views.get, store)

    @router.get("/api/ontology-summary")
    async def summary(
        request: Request, authorization: str | None = Header(None)
    ) -> dict[str, object]:
        return (await view(request, authorization)).summary()

    @router.get("/api/ontology-tree")
    async def tree(
        request: Request,
        tree: Annotated[TreeName, Query()] = "classes",
        parent: str | None = Query(None, max_length=MAX_TEXT),
        focus: str | None = Query(None, max_length=MAX_TEXT),
        offset: int = Query(0, ge=0),
        limit: int = Query(200, ge=1, le=MAX_PAGE),
        authorization: str | None = Header(None),
    ) -> dict[str, object]:
        return (await view(request, authorization)).level(tree, parent, offset, limit, focus)

    @router.get("/api/ontology-search")
    async def search(
        request: Request,
        q: str = Query(..., min_length=1, max_length=MAX_TEXT),
        tree: Annotated[TreeName, Query()] = "classes",
        limit: int = Query(50, ge=1, le=MAX_PAGE),
        authorization: str | None = Header(None),
    ) -> dict[str, object]:
        found = await view(request, authorization)
        return await run_in_threadpool(found.search, tree, q, limit)

    @router.get("/api/ontology-axioms")
    async def axioms(
        request: Request,
        q: str = Query("", max_length=MAX_TEXT),
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=1, le=MAX_PAGE),
        authorization: str | None = Header(None),
    ) -> dict[str, object]:
        found = await view(request, authorization)
        return await run_in_threadpool(found.axiom_page, q, offset, limit)

    @router.post("/api/check")
    async def check(
        request: Request,
        kind: str = Query("semantic", max_length=64),
        authorization: str | None = Header(None),
    ) -> dict[str, object]:
        broker = _broker(request)
        _who(request, authorization, "subscriber")
        limit = broker.limits.max_query_bytes * 4 + 1  # a character is at most 4 bytes
        body = await read_bounded(request.headers.get("content-length"), request.stream(), limit)
        text = body.decode("utf-8", "replace")
        return await run_in_threadpool(check_subscription, text, kind, broker)

    return router
