"""``/docs``: Swagger UI served from the package's own assets (works offline).

The assets come from the ``fastapi-offline`` distribution (Swagger UI's ``swagger-ui-bundle.js``
and ``swagger-ui.css``); they are served under ``/docs/assets/`` and the page names no other
host. ``/docs`` and ``/openapi.json`` are public: they describe the API, they hold no data.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from semps.errors import NotFound

__all__ = ["ASSETS", "docs_router"]

#: The Swagger UI files served under ``/docs/assets/``, and their media types.
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}


def docs_router(openapi_url: str = "/openapi.json", title: str = "semps") -> APIRouter:
    """The routes of ``/docs`` and its assets (public, not in the OpenAPI document)."""
    router = APIRouter(include_in_schema=False)
    static = resources.files("fastapi_offline") / "static"

    @router.get("/docs")
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon.png",
        )

    @router.get("/docs/assets/{name}")
    def asset(name: str) -> FileResponse:
        if name not in ASSETS:
            msg = f"no documentation asset {name!r}"
            raise NotFound(msg)
        with resources.as_file(static / name) as path:
            return FileResponse(path, media_type=ASSETS[name])

    return router
