"""The Solid Notifications Protocol's documents without a server (semps.api.solid): the
subscription request of each channel type read and checked, and the channel sealed as its
capability. The request shapes are the protocol's examples (webhook-channel-2023.bs,
streaming-http-channel-2023.bs)."""

from __future__ import annotations

import json

import pyoxigraph
import pytest

from semps.api.solid import (
    CHANNEL_TYPES,
    QUERY,
    STREAMING,
    WEBHOOK,
    Channel,
    description,
    description_turtle,
    parse_request,
)
from semps.errors import HostileInputError, SempsError, UnprocessableRequest, UnsupportedMediaType

BASE = "https://semps.example"
KEY = b"k" * 32


def _request(**fields: object) -> bytes:
    return json.dumps(
        {"@context": ["https://www.w3.org/ns/solid/notification/v1"], **fields}
    ).encode()


def test_a_webhook_request_carries_its_send_to() -> None:
    body = _request(
        type=WEBHOOK, topic=f"{BASE}/subscriptions/sub-1", sendTo="https://hook.example/871b84e7"
    )
    wanted = parse_request(body, BASE, kind=WEBHOOK)
    assert (wanted.kind, wanted.topic, wanted.send_to) == (
        WEBHOOK,
        "sub-1",
        "https://hook.example/871b84e7",
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": WEBHOOK, "topic": "sub-1"}, "'sendTo' must be the https (or http) URL"),
        ({"type": WEBHOOK, "topic": "sub-1", "sendTo": 7}, "'sendTo' must be"),
        ({"type": WEBHOOK, "topic": "sub-1", "sendTo": "https://x/" + "a" * 2048}, "2048"),
        ({"type": STREAMING, "topic": "sub-1"}, f"'type' must be {WEBHOOK}"),
        ({"type": WEBHOOK, QUERY: "SELECT * {}", "topic": "sub-1"}, "not both"),
    ],
)
def test_bad_webhook_requests_say_why(fields: dict[str, object], message: str) -> None:
    with pytest.raises(SempsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_request(_request(**fields), BASE, kind=WEBHOOK)


@pytest.mark.parametrize(
    ("content_type", "context", "error"),
    [
        ("application/ld+json", ["https://www.w3.org/ns/solid/notifications-context/v1"], None),
        (
            "Application/LD+JSON; charset=utf-8",
            ["https://www.w3.org/ns/solid/notification/v1"],
            None,
        ),
        (
            'application/ld+json; profile="https://www.w3.org/ns/solid/notifications-context/v1'
            ' http://www.w3.org/ns/json-ld#compacted"',
            "https://www.w3.org/ns/solid/notifications-context/v1",
            None,
        ),
        ('application/ld+json; profile="https://x.example/"', [], UnsupportedMediaType),
        ("application/json", [], UnsupportedMediaType),  # plain JSON: the WebSocket service's
        ("application/ld+json", None, UnprocessableRequest),
        ("application/ld+json", 7, UnprocessableRequest),
        ("application/ld+json", "https://www.w3.org/ns/activitystreams", UnprocessableRequest),
    ],
)
def test_a_request_is_json_ld_in_the_notifications_context(
    content_type: str, context: object, error: type[SempsError] | None
) -> None:
    fields = {"type": WEBHOOK, "topic": "sub-1", "sendTo": "https://hook.example/in"}
    body = json.dumps({**fields, **({} if context is None else {"@context": context})}).encode()
    if error is None:
        assert parse_request(body, BASE, kind=WEBHOOK, content_type=content_type).topic == "sub-1"
    else:
        with pytest.raises(error):
            parse_request(body, BASE, kind=WEBHOOK, content_type=content_type)


def test_a_streaming_request_may_name_a_sparql_text_in_place_of_a_topic() -> None:
    wanted = parse_request(_request(type=STREAMING, **{QUERY: "SELECT * {}"}), BASE, kind=STREAMING)
    assert (wanted.topic, wanted.query, wanted.send_to) == ("", "SELECT * {}", None)


def test_channels_are_sealed_and_their_documents_fit_their_type() -> None:
    for kind in CHANNEL_TYPES:
        send_to = "https://hook.example/in" if kind == WEBHOOK else None
        channel = Channel("alice", "sub-1", 4, rate=10.0, kind=kind, send_to=send_to, nonce="n")
        sealed = channel.seal(KEY)
        assert Channel.open(sealed, KEY) == channel
        with pytest.raises(HostileInputError):
            Channel.open(sealed[:-2] + ("AA" if not sealed.endswith("AA") else "BB"), KEY)
        document = channel.document(BASE, sealed, "s3cret" if kind == WEBHOOK else None)
        assert document["id"] == f"{BASE}/solid/channel/{sealed}"
        assert document["type"] == kind and document["rate"] == "PT10S"
        assert ("receiveFrom" in document) == (kind != WEBHOOK)
        assert ("sendTo" in document) == (kind == WEBHOOK)
    websocket = Channel("alice", "sub-1", 0).document(BASE, "x")
    assert websocket["receiveFrom"] == "wss://semps.example/solid/channel/x"
    streaming = Channel("alice", "sub-1", 0, kind=STREAMING).document(BASE, "x")
    assert streaming["receiveFrom"] == f"{BASE}/solid/stream/x"


def test_two_equal_requests_make_two_channels() -> None:
    one = Channel("alice", "sub-1", 0, kind=WEBHOOK, send_to="https://h/", nonce="a").seal(KEY)
    two = Channel("alice", "sub-1", 0, kind=WEBHOOK, send_to="https://h/", nonce="b").seal(KEY)
    assert one != two


def test_the_description_lists_each_channel_types_service() -> None:
    services = description(BASE)["subscription"]
    assert [s["id"] for s in services] == [f"{BASE}/solid/subscription/{k}" for k in CHANNEL_TYPES]


def test_the_turtle_description_says_what_the_json_ld_one_says() -> None:
    """Read by pyoxigraph: the gateway, and each service's channel type and features."""
    store = pyoxigraph.Store()
    store.load(description_turtle(BASE).encode(), pyoxigraph.RdfFormat.TURTLE)
    solid, notify = "http://www.w3.org/ns/solid/terms#", "http://www.w3.org/ns/solid/notifications#"
    gateway = store.query(
        f"SELECT ?g WHERE {{ <{BASE}/.well-known/solid> <{solid}notificationGateway> ?g }}"
    )
    assert [row["g"].value for row in gateway] == [description(BASE)["notificationGateway"]]
    for service in description(BASE)["subscription"]:
        rows = store.query(
            f"SELECT ?type ?feature WHERE {{ <{BASE}/.well-known/solid> <{notify}subscription> "
            f"<{service['id']}> . <{service['id']}> <{notify}channelType> ?type ; "
            f"<{notify}feature> ?feature }}"
        )
        found = {(row["type"].value, row["feature"].value) for row in rows}
        assert found == {
            (notify + service["channelType"], notify + feature) for feature in service["feature"]
        }
