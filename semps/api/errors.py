"""The one error shape of the HTTP API: ``{"error": code, "detail": message}``.

Every 4xx and 5xx the service sends has that JSON body: our own errors (a status chosen from
the exception type by :data:`STATUS`), the framework's (unknown route 404, wrong method 405
with ``Allow``, request validation 422) and any unexpected exception (a logged 500 whose body
names no internals: a 500 is always a bug). Syntax errors add ``line`` and ``column``,
unsupported SPARQL adds ``construct``.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from semps.api.models import ErrorBody
from semps.errors import WIRE, SempsError
from semps.sqlite_errors import is_full, storage_error

__all__ = [
    "STATUS",
    "error_body",
    "error_parts",
    "error_response",
    "install_error_handlers",
    "responses",
    "stream_responses",
]

log = logging.getLogger("semps.api")

#: Exception type -> (HTTP status, error code), most specific first (the one table in
#: :mod:`semps.errors`, shared with the client).
STATUS = WIRE

#: Error codes of the framework's own statuses (unknown route, wrong method, ...).
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    503: "unavailable",
    507: "insufficient_storage",
}

_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")

#: What each error status means, for the OpenAPI document.
_MEANING = {
    400: "malformed input (bad document, SPARQL syntax error, bad cursor, ...)",
    401: "missing or unknown bearer token",
    403: "the token's role may not do this",
    404: "no such resource",
    406: "no media type the Accept header allows can be written",
    413: "the body is larger than --max-body",
    415: "unsupported media type (Content-Type)",
    422: "invalid parameters, unsupported SPARQL construct or a limit exceeded",
    429: "too many open streams or queries in flight for this caller, or bad bearer tokens "
    "from this address (retry after Retry-After seconds, when given)",
    503: "the store could not be written (retry after Retry-After seconds)",
    507: "the disk is full: nothing was written (retry after Retry-After seconds)",
}

#: Seconds a client is asked to wait before retrying a 503 or 507.
RETRY_AFTER = 5


def error_body(exc: SempsError) -> dict[str, object]:
    """The JSON body of one of our errors."""
    name = next(code for kind, _, code in STATUS if isinstance(exc, kind))
    body: dict[str, object] = {"error": name, "detail": str(exc)}
    line = getattr(exc, "line", None)
    if line is not None:
        body["line"], body["column"] = line, getattr(exc, "column", None)
    construct = getattr(exc, "construct", None)
    if construct:
        body["construct"] = construct
    return body


def error_parts(exc: Exception) -> tuple[int, dict[str, object], dict[str, str]]:
    """(status, JSON body, extra headers) of the response to one of our errors.

    Example:
        >>> from semps.errors import NotFound
        >>> error_parts(NotFound("no subscription 's9'"))
        (404, {'error': 'not_found', 'detail': "no subscription 's9'"}, {})
    """
    if isinstance(exc, sqlite3.Error) or (isinstance(exc, OSError) and is_full(exc)):
        exc = storage_error(exc, "the store failed")  # a full disk is never a 400 or a 500
    if not isinstance(exc, SempsError):
        return 500, {"error": "internal_error", "detail": "internal server error"}, {}
    status = next(s for kind, s, _ in STATUS if isinstance(exc, kind))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if status in (503, 507):
        headers = {"Retry-After": str(RETRY_AFTER)}
    wait = getattr(exc, "retry_after", None)
    if status == 429 and wait:
        headers = {"Retry-After": str(wait)}
    return status, error_body(exc), headers


def error_response(exc: Exception) -> JSONResponse:
    """The response to one of our errors."""
    status, body, headers = error_parts(exc)
    return JSONResponse(body, status_code=status, headers=headers or None)


def _semps_error(request: Request, exc: Exception) -> Response:
    return error_response(exc)


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    code = HTTP_CODES.get(status, "internal_error" if status >= 500 else "bad_request")
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if status == 404 and detail == "Not Found":
        detail = f"no route {request.url.path}"
    headers = exc.headers
    if status == 405:
        allowed = _allowed(request)
        detail = f"{request.method} is not allowed on {request.url.path} (use {allowed})"
        headers = {**(headers or {}), "Allow": allowed}
    return JSONResponse({"error": code, "detail": detail}, status, headers=headers)


def _allowed(request: Request) -> str:
    """Every method some route answers on the request's path (the router names only the
    first route's)."""
    methods = set()
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
            methods.add(method)
    return ", ".join(sorted(methods))


def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    body = {"error": "invalid_request", "detail": "; ".join(parts) or "invalid request"}
    return JSONResponse(body, status_code=422)


def _unexpected(request: Request, exc: Exception) -> Response:
    status, body, headers = error_parts(exc)
    if status >= 500 and status not in (503, 507):
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    else:
        log.warning("%s %s: %s", request.method, request.url.path, body["detail"])
    return JSONResponse(body, status_code=status, headers=headers or None)


def install_error_handlers(app: FastAPI) -> None:
    """Give every error ``app`` can answer with the one shape."""
    app.add_exception_handler(SempsError, _semps_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of an operation that may fail with ``statuses``."""
    schema = {"$ref": f"#/components/schemas/{ErrorBody.__name__}"}
    content = {"application/json": {"schema": schema}}
    return {s: {"description": _MEANING[s], "content": content} for s in statuses}


def stream_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of a Server-Sent Events operation that may fail with
    ``statuses``."""
    return {200: {"content": {"text/event-stream": {}}}, **responses(*statuses)}
