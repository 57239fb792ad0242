"""The server's JSON error bodies back into the exception tree of :mod:`semps.errors`.

The API answers every refusal with ``{"error": code, "detail": message}`` (plus ``line`` and
``column`` for syntax errors, ``construct`` for unsupported SPARQL). :func:`error_from` turns
one back into the class the server raised, with the same message, so ``except NotFound`` works
the same in-process and over HTTP. Codes the client does not know fall back on the status.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from semps.errors import (
    WIRE,
    ClientError,
    EventLimitExceeded,
    GraphError,
    GraphLimitExceeded,
    IngestError,
    OntologyLimitExceeded,
    SempsError,
    SubscriptionError,
    SubscriptionLimitExceeded,
    UnsupportedQueryError,
    UnsupportedUpdateError,
)

__all__ = ["CODES", "STATUSES", "error_from", "error_from_body"]

#: The API's error code -> the class the server raised, for each code one class owns
#: (``limit_exceeded`` depends on the request: see :func:`error_from_body`).
CODES: dict[str, type[SempsError]] = {
    code: cls for cls, _, code in WIRE if sum(c == code for _, _, c in WIRE) == 1
}

#: The class for a status when the code is unknown (or the body is not the API's): for each
#: status one class owns.
STATUSES: dict[int, type[SempsError]] = {
    status: cls for cls, status, _ in WIRE if sum(s == status for _, s, _ in WIRE) == 1
}


#: The classes that carry a line and column (and prefix them to their message).
_LOCATED = (IngestError, SubscriptionError, GraphError)


def _limit_class(topic: str) -> type[SempsError]:
    if topic == "event":
        return EventLimitExceeded
    if topic == "subscription":
        return SubscriptionLimitExceeded
    if topic == "ontology":
        return OntologyLimitExceeded
    if topic == "graph":
        return GraphLimitExceeded
    return SempsError


def _position(body: Mapping[str, object], key: str) -> int | None:
    value = body.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def error_from_body(status: int, body: Mapping[str, object], topic: str = "") -> SempsError:
    """The exception for an error ``body`` answered with ``status``.

    ``topic`` is what the request was about (``"event"``, ``"subscription"``, ``"graph"``,
    ...): the API's ``limit_exceeded`` is an :class:`EventLimitExceeded` for events, a
    :class:`SubscriptionLimitExceeded` for subscriptions, a :class:`GraphLimitExceeded` for
    the knowledge graph.

    Example:
        >>> exc = error_from_body(400, {"error": "syntax_error", "detail": "1:8: expected WHERE",
        ...                             "line": 1, "column": 8})
        >>> type(exc).__name__, str(exc), exc.line, exc.column
        ('SubscriptionSyntaxError', '1:8: expected WHERE', 1, 8)
    """
    code, detail = body.get("error"), body.get("detail")
    message = detail if isinstance(detail, str) else json.dumps(detail)
    if code == "limit_exceeded":
        cls = _limit_class(topic)
    elif isinstance(code, str) and code in CODES:
        cls = CODES[code]
    elif status >= 500:
        return ClientError(f"the server failed ({status}): {message}", status=status)
    else:
        cls = STATUSES.get(status, SempsError)
    line, column = _position(body, "line"), _position(body, "column")
    if cls is UnsupportedQueryError or cls is UnsupportedUpdateError:
        construct = str(body.get("construct") or "")
        text = _strip_position(message, line, column)
        return cls(text, construct=construct, line=line, column=column)
    if issubclass(cls, _LOCATED):
        return _located(cls, message, line, column)
    return cls(message)


def _strip_position(message: str, line: int | None, column: int | None) -> str:
    """The message without the ``line:col:`` the server's exception already prefixed (the
    rebuilt exception prefixes it again)."""
    if line is None:
        return message
    where = f"{line}:{column}: " if column is not None else f"{line}: "
    return message.removeprefix(where)


def _located(
    cls: type[SempsError], message: str, line: int | None, column: int | None
) -> SempsError:
    text = _strip_position(message, line, column)
    return cls(text, line=line, column=column)  # type: ignore[call-arg]


def error_from(status: int, content: bytes, topic: str = "") -> SempsError:
    """The exception for an error response (any body: the API's JSON shape, FastAPI's
    ``{"detail": ...}``, or text)."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        text = content.decode("utf-8", "replace").strip()[:500] or f"HTTP {status}"
        body = {"detail": text}
    return error_from_body(status, body, topic)
