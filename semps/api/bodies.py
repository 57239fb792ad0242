"""Request bodies on the HTTP API: read bounded, and their media type checked (415)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterable
from typing import Any
from urllib.parse import parse_qs

from fastapi import Request
from pydantic import BaseModel, ValidationError

from semps.errors import DocumentTooLarge, SempsError, UnsupportedMediaType

__all__ = [
    "FORM",
    "JSON",
    "form_field",
    "form_fields",
    "form_schema",
    "json_content",
    "request_body",
    "text_content",
    "text_or_form",
    "read_bounded",
    "json_body",
    "media_type",
    "read_body",
    "require_media_type",
    "validation_message",
]

JSON = "application/json"
#: An HTML form's body (the SPARQL 1.1 Protocol's ``query=`` and ``update=``).
FORM = "application/x-www-form-urlencoded"


def request_body(content: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    """The ``openapi_extra`` of an operation that reads its body itself (FastAPI does not
    see one), in any of ``content``'s media types (media type -> OpenAPI content)."""
    return {"requestBody": {"required": required, "content": content}}


def text_content(media_types: Iterable[str]) -> dict[str, Any]:
    """The OpenAPI content of a text body in any of ``media_types``."""
    return {m: {"schema": {"type": "string"}} for m in media_types}


def json_content(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI content of a JSON body that ``model`` describes."""
    return {JSON: {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}


def form_schema(field: str) -> dict[str, Any]:
    """The OpenAPI content of a form body with one required text ``field``."""
    properties = {field: {"type": "string"}}
    return {"schema": {"type": "object", "properties": properties, "required": [field]}}


def text_or_form(media_type: str, field: str) -> dict[str, Any]:
    """The OpenAPI content of a text sent as the body (``media_type``) or as a form's
    ``field`` (the SPARQL 1.1 Protocol's two ways of sending a query or an update)."""
    return {**text_content([media_type]), FORM: form_schema(field)}


def form_fields(body: bytes, error: type[SempsError] = SempsError) -> dict[str, list[str]]:
    """A form body's fields (each name's values, in order).

    Raises:
        error: the body is not UTF-8 (400).
    """
    try:
        return parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError as exc:
        msg = f"the form is not UTF-8 text: {exc}"
        raise error(msg) from None


def form_field(
    fields: dict[str, list[str]], name: str, error: type[SempsError] = SempsError
) -> str:
    """The one value of a form's field ``name``.

    Raises:
        error: the form has none, or more than one (400).

    Example:
        >>> form_field(form_fields(b"query=ASK%20%7B%7D"), "query")
        'ASK {}'
    """
    texts = fields.get(name, [])
    if len(texts) != 1:
        msg = f"expected one form field {name}=..., found {len(texts)}"
        raise error(msg)
    return texts[0]


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI ``openapi_extra`` of an operation whose required body is a JSON ``model``
    (routes read their bodies themselves, so FastAPI does not see one)."""
    return request_body(json_content(model))


def media_type(request: Request) -> str | None:
    """The request's media type, lower case and without parameters (``None``: not sent).

    Example:
        >>> from starlette.requests import Request
        >>> scope = {"type": "http", "headers": [(b"content-type", b"Text/Turtle; charset=x")]}
        >>> media_type(Request(scope))
        'text/turtle'
    """
    value = request.headers.get("content-type")
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def require_media_type(request: Request, allowed: Collection[str], hint: str = "") -> str | None:
    """The request's media type if it is one of ``allowed`` (or none was sent).

    Raises:
        UnsupportedMediaType: another media type (415), with ``hint`` appended.
    """
    found = media_type(request)
    if found is not None and found not in allowed:
        msg = f"unsupported media type {found!r} here (use {', '.join(sorted(allowed))})"
        raise UnsupportedMediaType(msg + (f"; {hint}" if hint else ""))
    return found


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``limit`` bytes."""
    return await read_bounded(request.headers.get("content-length"), request.stream(), limit)


def validation_message(exc: ValidationError) -> str:
    """The first few problems pydantic found, on one line."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


async def read_bounded(declared: str | None, chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """A request body, refused as soon as it passes ``limit`` bytes (a declared
    Content-Length over the limit before anything is read).

    Raises:
        DocumentTooLarge: the body is larger than ``limit``.
    """
    if declared is not None and declared.isdigit() and int(declared) > limit:
        msg = f"body of {declared} bytes exceeds the limit of {limit} bytes"
        raise DocumentTooLarge(msg)
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            msg = f"body exceeds the limit of {limit} bytes"
            raise DocumentTooLarge(msg)
        parts.append(chunk)
    return b"".join(parts)
