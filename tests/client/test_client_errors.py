"""Refusals of a real server come back through semps.client as the exception classes the
server raised, with its messages (and positions), on both clients."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from semps_test_support import Server, _free_port

from semps.errors import (
    AuthError,
    ClientError,
    DocumentTooLarge,
    EventLimitExceeded,
    IngestError,
    NotFound,
    PermissionDenied,
    PluginNotFound,
    SubscriptionLimitExceeded,
    SubscriptionSyntaxError,
    UnsupportedMediaType,
)

pytestmark = pytest.mark.server


def test_a_syntax_error_names_its_line_and_column(subscriber: Any) -> None:
    with pytest.raises(SubscriptionSyntaxError) as info:
        subscriber.subscribe("SELECT ?x\nWHERE { ?x a }")
    assert (info.value.line, info.value.column) == (2, 14)
    assert str(info.value).startswith("2:14: ")


def test_a_subscription_over_a_limit(subscriber: Any) -> None:
    patterns = " ".join(f"?x <urn:p{i}> ?y{i} ." for i in range(65))
    with pytest.raises(SubscriptionLimitExceeded, match=r"limit of 64 triple patterns"):
        subscriber.subscribe(f"SELECT ?x WHERE {{ {patterns} }}")


def test_an_unknown_kind(subscriber: Any) -> None:
    with pytest.raises(PluginNotFound, match="semntic"):
        subscriber.subscribe("SELECT ?x WHERE { ?x a <urn:C> }", kind="semntic")


def test_a_malformed_event(publisher: Any) -> None:
    with pytest.raises(IngestError, match="malformed XML"):
        publisher.publish(b"<rdf:RDF", "application/rdf+xml")


def test_an_event_nested_past_the_document_depth_limit(publisher: Any) -> None:
    deep = "<urn:s> <urn:p> " + "[ <urn:p> " * 200 + "<urn:o>" + " ]" * 200 + " ."
    with pytest.raises(EventLimitExceeded, match="max_document_depth"):
        publisher.publish(deep, "text/turtle")


def test_an_event_of_an_unknown_media_type(publisher: Any) -> None:
    with pytest.raises(UnsupportedMediaType, match="image/png"):
        publisher.publish(b"\x89PNG", "image/png")


def test_an_event_over_the_body_limit(publisher: Any, server: Server) -> None:
    with pytest.raises(DocumentTooLarge):
        publisher.publish(b" " * (server.max_body + 1), "text/turtle")


def test_no_such_subscription(subscriber: Any) -> None:
    with pytest.raises(NotFound, match="no subscription 'sub-nope'"):
        subscriber.subscription("sub-nope")


def test_an_unknown_token_and_a_role_that_may_not(
    connect: Any, server: Server, subscriber: Any, demo: Path
) -> None:
    with pytest.raises(AuthError):
        list(connect(server.url, "not-a-token").subscriptions())
    with pytest.raises(PermissionDenied):
        subscriber.replace_ontology(demo / "univ-bench.owl")


def test_no_server_at_all(connect: Any) -> None:
    with pytest.raises(ClientError, match="failed"):
        connect(f"http://127.0.0.1:{_free_port()}", None).health()


@pytest.mark.parametrize("via", ["sse", "websocket"])
def test_a_stream_refused_for_its_token_or_subscription(
    via: str, connect: Any, server: Server, subscriber: Any
) -> None:
    with pytest.raises(AuthError):
        next(connect(server.url, "not-a-token").notifications("sub-1", via=via))
    with pytest.raises(NotFound, match="no subscription 'sub-nope'"):
        next(subscriber.notifications("sub-nope", via=via))
