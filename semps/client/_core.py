"""The request-building and response-parsing core that :class:`~semps.client.Client` and
:class:`~semps.client.AsyncClient` share: a :class:`Call` says what to send and how to read
the answer; the clients only move bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from semps.client._errors import error_from
from semps.errors import (
    ClientError,
    DocumentTooLarge,
    EventLimitExceeded,
    IngestError,
    OntologyError,
    SempsError,
    UnsupportedMediaType,
)

__all__ = ["Call", "Page", "Reply", "finish", "page_of", "path_id"]

T = TypeVar("T")


@dataclass(frozen=True)
class Reply:
    """An HTTP answer as the core reads it."""

    status: int
    content: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body as JSON; :class:`ClientError` when it is not."""
        try:
            return json.loads(self.content)
        except ValueError as exc:
            shown = self.content[:200].decode("utf-8", "replace")
            msg = f"expected JSON from the server, got {shown!r}"
            raise ClientError(msg, status=self.status) from exc

    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer.

    Attributes:
        method, path, params, headers, content: the request.
        parse: the successful answer -> the value the client returns.
        topic: what the request is about (``"event"``, ``"subscription"``, ...), which picks
            the class of a ``limit_exceeded`` error.
        feature: set for endpoints a server may not offer (the token API): a 404 or 405
            there is a :class:`ClientError` naming the feature, not a :class:`NotFound`.
        hint: added to the message of a malformed document the server refuses (an
            :class:`~semps.errors.IngestError` or :class:`~semps.errors.OntologyError`):
            what the client guessed for the caller, such as the media type.
    """

    method: str
    path: str
    parse: Callable[[Reply], T]
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes | None = None
    topic: str = ""
    feature: str | None = None
    hint: str | None = None


def finish(call: Call[T], reply: Reply) -> T:
    """The value of ``call``'s answer, or the error the server answered, raised."""
    if reply.status < 400:
        return call.parse(reply)
    raise refusal(call, reply)


def refusal(call: Call[Any], reply: Reply) -> SempsError:
    """The exception for an error answer to ``call``."""
    if call.feature is not None and _no_route(reply):
        msg = (
            f"this server does not offer {call.feature} "
            f"({call.method} {call.path} answered {reply.status})"
        )
        return ClientError(msg, status=reply.status)
    found = error_from(reply.status, reply.content, call.topic)
    if call.hint is None:
        return found
    if isinstance(found, IngestError) and not isinstance(found, _NOT_SYNTAX):
        hinted = f"{found.detail} ({call.hint})"
        return type(found)(hinted, line=found.line, column=found.column)
    if isinstance(found, OntologyError):
        return OntologyError(f"{found} ({call.hint})")
    return found


#: Refusals of a document that its media type would not change.
_NOT_SYNTAX = (DocumentTooLarge, EventLimitExceeded, UnsupportedMediaType)


def _no_route(reply: Reply) -> bool:
    """Whether an answer says the route does not exist (405, or a 404 that is not about a
    missing object: FastAPI's ``Not Found``, the API's ``no route ...``)."""
    if reply.status == 405:
        return True
    if reply.status != 404:
        return False
    try:
        detail = json.loads(reply.content).get("detail")
    except (ValueError, AttributeError):
        return True
    return not isinstance(detail, str) or detail == "Not Found" or detail.startswith("no route")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its items and the cursor of the next page (``None``: the last)."""

    items: list[T]
    next: str | None = None


def page_of(item: Callable[[object], T]) -> Callable[[Reply], Page[T]]:
    """A parser for a list endpoint: ``{"items": [...], "next": cursor-or-null}`` (cursor
    pagination), or a plain JSON list (a server without pagination: one page)."""

    def parse(reply: Reply) -> Page[T]:
        body = reply.json()
        if isinstance(body, list):
            return Page([item(x) for x in body])
        if isinstance(body, dict) and isinstance(body.get("items"), list):
            cursor = body.get("next")
            return Page(
                [item(x) for x in body["items"]], None if cursor in (None, "") else str(cursor)
            )
        msg = f'expected a JSON list or {{"items": [...], "next": ...}}, got {reply.text()[:200]!r}'
        raise ClientError(msg, status=reply.status)

    return parse


def path_id(value: str) -> str:
    """An id as one URL path segment (refused when empty or holding ``/``, ``?`` or ``#``,
    which would address another resource)."""
    if not value or any(c in value for c in "/?#") or value in (".", ".."):
        msg = f"not an id: {value!r}"
        raise ClientError(msg)
    return value
