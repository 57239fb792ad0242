"""The documented limits that bound the work one request can cause.

Every input is hostile: a subscriber, publisher or document may be crafted to make the
broker work hard. Each limit below bounds the cost of one request by what it sent; passing
one raises a clear error (:class:`~semps.errors.SubscriptionLimitExceeded`,
:class:`~semps.errors.EventLimitExceeded`, :class:`~semps.errors.DocumentTooLarge`,
:class:`~semps.errors.GraphLimitExceeded`) whose message names the limit. ``semps serve``
takes each as a flag (its name with dashes for underscores: ``--max-patterns``,
``--header-timeout``); ``docs/operations.md`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from semps.errors import SubscriptionLimitExceeded, limit_exceeded


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request limits, with their defaults.

    Attributes:
        max_query_bytes: size of a subscription's text, in bytes.
        max_query_depth: nesting depth of a subscription (parentheses, unary operators,
            function calls, blank-node brackets); the parser and the FILTER evaluator recurse
            once per level, so keep it well under Python's recursion limit.
        max_patterns: triple patterns in one subscription (each typed event costs a wide
            subscription work and a notification in proportion: 1,000 disconnected
            ``?s a ?c`` patterns took 0.6 s an event).
        max_subscriptions: subscriptions one subscriber may hold (service only).
        max_batch_subscriptions: subscriptions one ``POST /subscriptions/batch`` may
            carry (service only; past it the batch is refused whole).
        max_batch_bytes: size of one ``POST /subscriptions/batch`` body, in bytes (service
            only; the other requests' bodies are bounded by ``--max-body``).
        max_event_bytes: size of an event document, in bytes.
        max_document_depth: nesting depth of an RDF document, screened before any parser
            reads it: XML element depth, Turtle ``[``/``(`` depth, JSON-LD ``{``/``[``
            depth (ontology documents pass the same screen).
        max_closure_triples: triples an event may hold after closing it under the
            ontology (its own plus the inferred ones); the closure stops as soon as it
            passes this (200,000 take well under a second to close).
        max_solutions: solutions a match carries (its count is exact up to
            ``max_count``).
        max_count: solution counts stop here; the notification says
            ``"count_truncated": true``.
        max_notification_bytes: size of one notification; past it, solutions are left out
            from the end and the notification says ``"solutions_truncated": true``.
        match_timeout: CPU seconds one batch of events may spend matching without progress
            before the watchdog cuts it off and suspends the subscription that caused it
            (service only; 30 times as many seconds on the clock when it does not compute).
        max_ontology_bytes: size of an ontology document sent to ``PUT``/``POST /ontology``.
        max_ontology_triples: triples the ontology may hold after an edit.
        max_hierarchy_depth: the longest ``subClassOf`` (or ``subPropertyOf``) chain, counting
            the classes (properties) on it; a cycle counts once (its members are equivalent).
        max_ontology_rules: entries of the compiled rule tables (each class's ancestors, each
            property's implied properties, the restrictions' links): what every event's
            closure reads and every matching process holds in memory.
        ontology_timeout: seconds an edit's rules may take to compile before the edit is cut
            off (and nothing of it applied).
        max_definitions: composite event definitions one subscriber may hold (over all its
            composite subscriptions).
        max_detections: composite detections one event may cause (over every subscriber),
            split evenly between the owners its matches name: each owner's detections stop
            at its share, and its further detections from that event are dropped, with a
            log line.
        max_detections_per_owner: composite detections one event may cause for one owner
            (its share of ``max_detections``, when that is larger).
        max_header_bytes: bytes of an HTTP request's header fields (431 past it).
        max_headers: header fields in one HTTP request (431 past it).
        max_request_line: bytes of an HTTP request line (method, target, version; 414 past it).
        header_timeout: seconds a connection may take to send a request's head, counted from
            the connection (or the end of the previous response); 408 past it.
        body_timeout: seconds a request's body may take to arrive once its head has (408).
        idle_timeout: seconds a kept-alive connection may stay idle between requests.
        max_connections: open HTTP connections in all (at start-up it is lowered to fit the
            process's file limit); past it, the oldest connection that has not yet sent a
            request is closed to make room, or the new one is refused.
        max_client_connections: open HTTP connections of one client address (the same
            rule).
        max_update_bytes: size of one SPARQL Update text, in bytes.
        max_update_triples: triples one graph edit inserts or deletes (an update, once its
            WHERE clause is evaluated, or a Graph Store Protocol DELETE of that many).
        max_load_triples: triples one bulk load of the knowledge graph brings (a document
            loaded, replaced or merged in).
        max_edit_inferred: inferred triples one graph edit may add or remove (its closure
            growth, or what a deletion takes with it); the edit is refused whole past it.
        max_edit_inferred_ratio: ... or this many times the triples the edit inserts or
            deletes, when larger (a bulk load of a building model infers about ten times
            its triples under Brick).
        max_graph_triples: triples the knowledge graph may hold in all (its closure, asserted
            and inferred); an edit that would pass it is refused whole.
        graph_timeout: seconds planning one graph edit (an update, a load, an ontology
            edit's re-closing of the graph), or answering one query over it, may take;
            past it the edit is cut off and refused whole (not applied at start-up, where
            the size bounds hold).
        max_update_rows: rows an update's WHERE clause may visit in the graph.
        max_query_rows: rows a query (``/query``, a SEPA subscription's current answers,
            ``/explain``) may visit in the graph, counted as they are produced: about a
            second of CPU (a query runs beside the edits on a snapshot of the graph, but
            it shares the process's CPU with them and with publishing).
        max_queries_in_flight: queries (as ``max_query_rows`` counts them) one principal
            may have running at once; one more is answered 429 with ``Retry-After``.
        max_answer_rows: rows one query's answer may hold (``/query``, a SEPA
            subscription's current answers): each is held in memory and written out.
        max_stream_subscriptions: subscriptions one multiplexed stream carries
            (``GET /notifications``, its WebSocket; service only): each costs the stream a
            position and a store read when it falls behind.
    """

    max_query_bytes: int = 64 * 1024
    max_query_depth: int = 64
    max_patterns: int = 64
    max_subscriptions: int = 100_000
    max_batch_subscriptions: int = 100_000
    max_batch_bytes: int = 64 * 1024 * 1024
    max_event_bytes: int = 16 * 1024 * 1024
    max_document_depth: int = 128
    max_closure_triples: int = 50_000
    max_closure_ratio: int = 8
    max_solutions: int = 100
    max_count: int = 1_000_000_000
    max_notification_bytes: int = 256 * 1024
    match_timeout: float = 2.0
    max_ontology_bytes: int = 16 * 1024 * 1024
    max_ontology_triples: int = 1_000_000
    max_hierarchy_depth: int = 256
    max_ontology_rules: int = 1_000_000
    ontology_timeout: float = 20.0
    max_definitions: int = 1_000
    max_detections: int = 10_000
    max_detections_per_owner: int = 1_000
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    max_request_line: int = 8 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 5.0
    max_connections: int = 4096
    max_client_connections: int = 256
    max_update_bytes: int = 1024 * 1024
    max_update_triples: int = 100_000
    max_load_triples: int = 10_000_000
    max_edit_inferred: int = 1_000_000
    max_edit_inferred_ratio: int = 32
    max_graph_triples: int = 20_000_000
    graph_timeout: float = 30.0
    max_update_rows: int = 10_000_000
    max_query_rows: int = 1_000_000
    max_queries_in_flight: int = 1
    max_answer_rows: int = 100_000
    max_stream_subscriptions: int = 10_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value <= 0:
                msg = f"limit {f.name} must be positive, not {value!r}"
                raise ValueError(msg)

    def check_query_size(self, text: str) -> None:
        """Refuse a subscription text over ``max_query_bytes`` (every kind, every reader).

        Raises:
            SubscriptionLimitExceeded: the text is larger.
        """
        limit = self.max_query_bytes
        if len(text) * 4 <= limit:  # a character is at most 4 bytes: no need to encode
            return
        size = len(text.encode("utf-8", "replace"))
        if size > limit:
            said = f"the subscription is {size} bytes"
            over = f"{limit} bytes"
            raise limit_exceeded(SubscriptionLimitExceeded, said, "max_query_bytes", over=over)

    def check_batch_size(self, items: int) -> None:
        """Refuse a subscription batch of more than ``max_batch_subscriptions`` items.

        Raises:
            SubscriptionLimitExceeded: the batch holds more.
        """
        limit = self.max_batch_subscriptions
        if items > limit:
            said = f"the batch holds {items} subscriptions"
            name = "max_batch_subscriptions"
            raise limit_exceeded(SubscriptionLimitExceeded, said, name, over=f"{limit}")

    def closure_limit(self, triples: int) -> int:
        """The closure limit of an event of ``triples`` triples."""
        return max(self.max_closure_triples, self.max_closure_ratio * triples)

    def edit_limit(self, triples: int) -> int:
        """Inferred triples a graph edit of ``triples`` asserted triples may add or remove."""
        return max(self.max_edit_inferred, self.max_edit_inferred_ratio * triples)


#: The defaults, for callers that were given no limits.
DEFAULT_LIMITS = Limits()

#: The limits parsing a subscription reads (:func:`~semps.ingest.sparql.parse_query` and
#: what it calls): a parse under limits equal in these is the parse under any of them.
PARSE_LIMITS = ("max_query_bytes", "max_query_depth", "max_patterns")


def parse_limits(limits: Limits) -> dict[str, int]:
    """The :data:`PARSE_LIMITS` of ``limits`` by name: what a cache of parses (or of what is
    built from them) must have been made under to be used under ``limits``.

    Example:
        >>> parse_limits(Limits(match_timeout=60.0)) == parse_limits(DEFAULT_LIMITS)
        True
    """
    return {name: getattr(limits, name) for name in PARSE_LIMITS}
