"""The one exception tree of semps.

Every error semps raises on purpose is a :class:`SempsError`. Errors from the libraries we
build on (rdflib, pyoxigraph, owlready2, py4j, sqlite3) are wrapped where they enter and
re-raised as one of ours ``from`` the original::

    SempsError
    ├── IngestError                 bytes could not become an event
    │   ├── RDFSyntaxError          malformed RDF/XML, Turtle, N-Triples or JSON-LD
    │   ├── HostileInputError       DTD tricks: external entities, entity expansion
    │   ├── DocumentTooLarge        over the configured size bound
    │   ├── UnsupportedMediaType    no reader for that media type or file suffix
    │   ├── JSONEventError          a JSON (content or region) event is malformed
    │   └── EventLimitExceeded      the event passes a documented limit (depth, closure)
    ├── SubscriptionError           a subscription could not be registered
    │   ├── SubscriptionSyntaxError the text does not parse (carries line and column)
    │   ├── UnsupportedQueryError   valid SPARQL outside the supported fragment
    │   ├── SubscriptionLimitExceeded  the subscription passes a documented limit
    │   └── CompositeDefinitionError   a composite event definition is refused
    ├── OntologyError               an ontology could not be loaded or edited
    │   └── OntologyLimitExceeded   the ontology passes a documented limit (size, depth, rules)
    ├── GraphError                  the knowledge graph refused an edit or a document
    │   ├── UpdateSyntaxError       a SPARQL Update does not parse (carries line and column)
    │   ├── UnsupportedUpdateError  valid SPARQL Update semps does not run (LOAD, SERVICE,
    │   │                           named graphs)
    │   └── GraphLimitExceeded      the edit passes a documented limit (size, triples,
    │                               closure growth); nothing of it was applied
    ├── MatcherError                a matcher failed on valid input
    │   ├── PluginNotFound          no matcher registered under that name
    │   └── NotSupported            the matcher does not offer this (explain)
    ├── StoreError                  the persistent store refused or failed
    │   ├── NotFound                no such subscription, token, ...
    │   └── StoreUnavailable        the store could not read or write (503, retry later)
    │       └── StorageFull         the disk is full: nothing was written (507)
    ├── AuthError                   missing or unknown bearer token
    │   └── PermissionDenied        the token's role may not do this
    ├── DeliveryError               a notification could not be delivered
    │   └── UnsafeCallback          a webhook URL the broker refuses to call (SSRF)
    ├── TooManyRequests             a per-caller cap is reached (open streams, ...)
    ├── NotAcceptable               no media type the caller accepts can be written
    ├── UnprocessableRequest        well-formed, but its instructions cannot be carried out
    ├── RequestRefused              the HTTP request itself is refused (its head, its pace)
    │   ├── HeadersTooLarge         the request head is over a size or count limit (431)
    │   ├── RequestLineTooLong      the request line is over its limit (414)
    │   ├── RequestTimeout          the request did not arrive in time (408)
    │   └── Overloaded              every connection the server may hold is busy (503)
    ├── SettingsError               a setting (flag, SEMPS_* variable, TOML file) is refused
    ├── ClientError                 semps.client could not reach the server or read its answer
    └── SparkError                  the Spark pipeline could not start or run

Messages are built first and then raised, and say *where*: syntax errors carry ``line`` and
``column`` (1-based) and prefix them to the message as ``line:col:``.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = [
    "AuthError",
    "ClientError",
    "CompositeDefinitionError",
    "DeliveryError",
    "DocumentTooLarge",
    "EventLimitExceeded",
    "GraphError",
    "GraphLimitExceeded",
    "HeadersTooLarge",
    "HostileInputError",
    "IngestError",
    "JSONEventError",
    "MatcherError",
    "NotAcceptable",
    "NotFound",
    "NotSupported",
    "OntologyError",
    "OntologyLimitExceeded",
    "Overloaded",
    "PermissionDenied",
    "PluginNotFound",
    "RDFSyntaxError",
    "RequestLineTooLong",
    "RequestRefused",
    "RequestTimeout",
    "SempsError",
    "SettingsError",
    "SparkError",
    "StorageFull",
    "StoreError",
    "StoreUnavailable",
    "SubscriptionError",
    "SubscriptionLimitExceeded",
    "SubscriptionSyntaxError",
    "TooManyRequests",
    "UnprocessableRequest",
    "UnsafeCallback",
    "UnsupportedMediaType",
    "UnsupportedQueryError",
    "UnsupportedUpdateError",
    "UpdateSyntaxError",
    "WIRE",
    "existing",
    "limit_exceeded",
]


class SempsError(Exception):
    """Base class of every error semps raises on purpose."""


class _Located(SempsError):
    """An error that knows where in a text it happened (1-based line and column)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        self.detail = message
        if line is not None:
            where = f"{line}:{column}: " if column is not None else f"{line}: "
            message = where + message
        super().__init__(message)


class _Unsupported(_Located):
    """Valid input that uses a construct semps does not take; ``construct`` names it."""

    def __init__(
        self,
        message: str,
        *,
        construct: str,
        line: int | None = None,
        column: int | None = None,
    ):
        self.construct = construct
        super().__init__(message, line=line, column=column)


class IngestError(_Located):
    """Bytes could not be read into an event; nothing of the document was ingested."""


class RDFSyntaxError(IngestError):
    """The document is not well-formed in its RDF syntax."""


class HostileInputError(IngestError):
    """The document uses DTD features refused for safety (external or nested entities)."""


class DocumentTooLarge(IngestError):
    """The document is larger than the configured bound."""


class UnsupportedMediaType(IngestError):
    """No reader is registered for the media type or file suffix."""


class JSONEventError(IngestError):
    """A JSON event (attribute values, regions) is malformed or carries values of the wrong
    type."""


class EventLimitExceeded(IngestError):
    """The event passes a documented limit (nesting depth, inferred triples, ...); the
    message names the limit and its value."""


class SubscriptionError(_Located):
    """A subscription could not be registered."""


class SubscriptionSyntaxError(SubscriptionError):
    """The subscription text does not parse."""


class UnsupportedQueryError(_Unsupported, SubscriptionError):
    """Valid SPARQL that uses a construct outside the supported fragment.

    ``construct`` names it (``"OPTIONAL"``, ``"property path"``, ...).
    """


class SubscriptionLimitExceeded(SubscriptionError):
    """The subscription passes a documented limit (size, nesting, patterns, per-subscriber
    count); the message names the limit and its value."""


class OntologyError(SempsError):
    """An ontology could not be loaded, parsed or edited."""


class OntologyLimitExceeded(OntologyError):
    """The ontology an edit would make (or the one stored) passes a documented limit
    (document size, triples, hierarchy depth, compiled rules, compile time); the message
    names the limit and its value. Nothing of the edit was applied."""


class GraphError(_Located):
    """The knowledge graph refused an edit, a query over it or a document for it; nothing of
    the edit was applied."""


class UpdateSyntaxError(GraphError):
    """A SPARQL Update text does not parse."""


class UnsupportedUpdateError(_Unsupported, GraphError):
    """Valid SPARQL Update that semps does not run: ``LOAD``, ``SERVICE`` or anything else
    that fetches remote data, named graphs other than the default one. ``construct`` names
    it."""


class GraphLimitExceeded(GraphError):
    """An edit passes a documented limit (update size, triples per load, closure growth);
    the message names the limit and its value."""


_Limit = TypeVar(
    "_Limit",
    EventLimitExceeded,
    SubscriptionLimitExceeded,
    OntologyLimitExceeded,
    GraphLimitExceeded,
)


def limit_exceeded(error: type[_Limit], said: str, name: str, *, over: str = "") -> _Limit:
    """The ``error`` refusing what ``said`` tells, its message ending with the limit's
    ``name`` in parentheses (the setting, ``max_batch_subscriptions``, or a phrase naming
    the settings that make the limit), after ``, over the limit of {over}`` when ``over``
    (the limit's value and unit: ``"8"``, ``"64 bytes"``) is given.

    Example:
        >>> said, name = "the batch holds 9 subscriptions", "max_batch_subscriptions"
        >>> print(limit_exceeded(SubscriptionLimitExceeded, said, name, over="8"))
        the batch holds 9 subscriptions, over the limit of 8 (max_batch_subscriptions)
    """
    text = f"{said}, over the limit of {over}" if over else said
    return error(f"{text} ({name})")


class MatcherError(SempsError):
    """A matcher failed on input it accepted."""


class PluginNotFound(MatcherError):
    """No matcher is registered under the requested name."""


class NotSupported(MatcherError):
    """The matcher does not offer the operation asked of it (an explanation)."""


class CompositeDefinitionError(SubscriptionError):
    """A composite event definition is refused (syntax, duplicate, undefined, cycle)."""


class StoreError(SempsError):
    """The persistent store failed."""


class NotFound(StoreError):
    """The requested object does not exist (or is not visible to the caller)."""


_T = TypeVar("_T")


def existing(value: _T | None, what: str, key: str) -> _T:
    """``value``, looked up by ``key``; :class:`NotFound` ("no event 'e1'") when it is ``None``.

    Example:
        >>> existing({"e1": 1}.get("e1"), "event", "e1")
        1
        >>> existing(None, "event", "e2")
        Traceback (most recent call last):
        ...
        semps.errors.NotFound: no event 'e2'
    """
    if value is None:
        msg = f"no {what} {key!r}"
        raise NotFound(msg)
    return value


class StoreUnavailable(StoreError):
    """The store's files could not be read or written (an I/O error, a locked database): the
    operation was rolled back; it may succeed if retried later."""


class StorageFull(StoreUnavailable):
    """The disk (or the file system's quota) is full: the write was rolled back, nothing of
    it is stored. Retry once space is freed."""


class AuthError(SempsError):
    """Missing, unknown or insufficient bearer token."""


class PermissionDenied(AuthError):
    """The bearer token is valid but its role may not do this."""


class DeliveryError(SempsError):
    """A notification could not be delivered to its channel."""


class UnsafeCallback(DeliveryError):
    """A webhook URL the broker refuses to call: credentials in it, or an address on
    loopback, private, link-local or metadata networks outside the allow-list."""


class TooManyRequests(SempsError):
    """A per-caller cap is reached (open streams per subscriber, ...)."""

    #: Seconds the caller is asked to wait (the ``Retry-After`` header), when known.
    retry_after: int | None = None


class QueriesInFlight(TooManyRequests):
    """A principal has ``max_queries_in_flight`` queries of the graph running already."""

    retry_after = 1


class RequestRefused(SempsError):
    """The HTTP request itself is refused before any route reads it (the request head's size
    or pace); the server logs each refusal and closes the connection."""


class HeadersTooLarge(RequestRefused):
    """The request's header fields pass ``max_header_bytes`` or ``max_headers``."""


class RequestLineTooLong(RequestRefused):
    """The request line (method, target, version) passes ``max_request_line``."""


class RequestTimeout(RequestRefused):
    """The request head or body did not arrive within ``header_timeout`` / ``body_timeout``."""


class Overloaded(RequestRefused):
    """The server holds ``max_connections`` connections, each busy with a request, so a new
    one is refused (an idle one would have been closed to make room)."""


class ClientError(SempsError):
    """:mod:`semps.client` could not reach the server, lost it beyond its retries, got an
    answer it cannot read (a 5xx, a body that is not the API's), or the server does not offer
    the feature asked for. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None):
        self.status = status
        super().__init__(message)


class NotAcceptable(SempsError):
    """The caller accepts none of the media types semps can write the answer in (an HTTP
    ``Accept`` header naming only others: 406)."""


class UnprocessableRequest(SempsError):
    """A well-formed request whose instructions semps cannot carry out, such as a Solid
    subscription request in an unrecognised JSON-LD context (HTTP 422, as the Solid
    Notifications Protocol asks)."""


class SettingsError(SempsError):
    """A setting (a flag, a ``SEMPS_*`` variable, a key of the TOML file) is refused."""


class SparkError(SempsError):
    """The Spark pipeline could not start or failed."""


#: How each error crosses the wire: (class, HTTP status, error code), most specific first.
#: The API answers an exception with the first row its class matches; the client maps a code
#: (or, for an unknown code, a status) named by one row only back to that row's class.
WIRE: tuple[tuple[type[SempsError], int, str], ...] = (
    (PermissionDenied, 403, "forbidden"),
    (AuthError, 401, "unauthorized"),
    (NotFound, 404, "not_found"),
    (StorageFull, 507, "insufficient_storage"),
    (StoreUnavailable, 503, "unavailable"),
    (DocumentTooLarge, 413, "too_large"),
    (UnsupportedMediaType, 415, "unsupported_media_type"),
    (EventLimitExceeded, 422, "limit_exceeded"),
    (GraphLimitExceeded, 422, "limit_exceeded"),
    (SubscriptionLimitExceeded, 422, "limit_exceeded"),
    (OntologyLimitExceeded, 422, "limit_exceeded"),
    (HostileInputError, 400, "hostile_input"),
    (IngestError, 400, "bad_event"),
    (SubscriptionSyntaxError, 400, "syntax_error"),
    (UnsupportedQueryError, 422, "unsupported_query"),
    (PluginNotFound, 400, "unknown_kind"),
    (NotSupported, 422, "not_supported"),
    (OntologyError, 400, "bad_ontology"),
    (UpdateSyntaxError, 400, "update_syntax_error"),
    (UnsupportedUpdateError, 422, "unsupported_update"),
    (GraphError, 400, "bad_graph"),
    (UnsafeCallback, 400, "unsafe_callback"),
    (TooManyRequests, 429, "too_many_requests"),
    (NotAcceptable, 406, "not_acceptable"),
    (UnprocessableRequest, 422, "unprocessable"),
    (HeadersTooLarge, 431, "headers_too_large"),
    (RequestLineTooLong, 414, "request_line_too_long"),
    (RequestTimeout, 408, "request_timeout"),
    (Overloaded, 503, "overloaded"),
    (SempsError, 400, "bad_request"),
)
