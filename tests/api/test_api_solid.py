"""The Solid Notifications Protocol on a real ``semps serve``: the description resource, a
WebSocketChannel2023 subscription on one of the caller's subscriptions, Activity Streams 2.0
notifications on ``receiveFrom``, the ``state`` and ``endAt`` features, and refusals. The
shapes are the protocol's (solid/notifications: protocol.html, websocket-channel-2023.html
examples: a request of ``type`` and ``topic``; a response with ``receiveFrom``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from semps_test_support import Server
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

pytestmark = pytest.mark.server

HOT = "SELECT ?room ?t WHERE { ?room <http://ex.org/temperature> ?t FILTER(?t > 30) }"
TURTLE = {"Content-Type": "text/turtle"}
AS = "https://www.w3.org/ns/activitystreams"


def reading(room: int, value: int) -> bytes:
    return f"<http://ex.org/room{room}> <http://ex.org/temperature> {value} .".encode()


def _subscription(server: Server) -> str:
    with server.client("subscriber") as client:
        return str(client.post("/subscriptions", content=HOT).json()["id"])


def _publish(server: Server, *bodies: bytes) -> None:
    with server.client("publisher") as pub:
        for body in bodies:
            assert pub.post("/events", content=body, headers=TURTLE).status_code == 202


def _channel(
    server: Server,
    request: dict[str, Any],
    role: str = "subscriber",
    service: str = "WebSocketChannel2023",
) -> httpx.Response:
    service = f"{server.url}/solid/subscription/{service}"
    body = {"@context": ["https://www.w3.org/ns/solid/notification/v1"], **request}
    with server.client(role) as client:
        return client.post(
            service, content=json.dumps(body), headers={"Content-Type": "application/ld+json"}
        )


def _open(url: str) -> ClientConnection:
    """The channel's socket. Without the subprotocol the spec's example offers
    (``new WebSocket(url, "http://www.w3.org/ns/solid/notifications#WebSocketChannel2023")``):
    it is not an RFC 6455 token (':', '/' and '#' are separators), which this client, as
    browsers, refuses to send."""
    return connect(url, open_timeout=60)


def test_the_description_resource_lists_the_subscription_service(server: Server) -> None:
    reply = httpx.get(f"{server.url}/.well-known/solid")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("application/ld+json")
    body = reply.json()
    assert "https://www.w3.org/ns/solid/notification/v1" in body["@context"]
    kinds = ("WebSocketChannel2023", "WebhookChannel2023", "StreamingHTTPChannel2023")
    assert [service["channelType"] for service in body["subscription"]] == list(kinds)
    for kind, service in zip(kinds, body["subscription"], strict=True):
        assert service["id"] == f"{server.url}/solid/subscription/{kind}"
        assert set(service["feature"]) == {"accept", "endAt", "rate", "startAt", "state"}
        # the protocol's subscription service answers GET with its own description
        alone = httpx.get(service["id"], headers={"Accept": "application/ld+json"})
        assert alone.status_code == 200 and alone.json()["channelType"] == kind
        # ... and HEAD and OPTIONS (the protocol's four methods of a subscription service)
        assert httpx.head(service["id"]).status_code == 200
        allowed = httpx.options(service["id"]).headers["allow"]
        assert set(allowed.replace(" ", "").split(",")) == {"GET", "HEAD", "OPTIONS", "POST"}


def test_a_topic_links_to_the_description_resource(server: Server) -> None:
    """The protocol's discovery: a topic resource answers a ``Link`` header of rel
    ``http://www.w3.org/ns/solid/terms#storageDescription`` to the description resource."""
    sub = _subscription(server)
    with server.client("subscriber") as client:
        for reply in (client.get(f"/subscriptions/{sub}"), client.head(f"/subscriptions/{sub}")):
            assert reply.status_code == 200
            link = httpx.Headers(reply.headers).get_list("link", split_commas=True)
            assert (
                f"<{server.url}/.well-known/solid>; "
                'rel="http://www.w3.org/ns/solid/terms#storageDescription"'
            ) in link
        assert client.head("/subscriptions/sub-nope").status_code == 404


def test_a_channel_carries_activity_streams_notifications(server: Server) -> None:
    sub = _subscription(server)
    topic = f"{server.url}/subscriptions/{sub}"
    _publish(server, reading(1, 40))  # before the channel: not carried (no state given)
    reply = _channel(server, {"type": "WebSocketChannel2023", "topic": topic})
    assert reply.status_code == 200, reply.text
    channel = reply.json()
    assert channel["type"] == "WebSocketChannel2023" and channel["topic"] == topic
    assert channel["receiveFrom"].startswith(f"ws://127.0.0.1:{server.port}/solid/channel/")
    with _open(channel["receiveFrom"]) as ws:
        _publish(server, reading(2, 20), reading(3, 50))
        note = json.loads(ws.recv(timeout=120))
    assert AS in note["@context"]
    assert note["type"] == "Add" and note["object"] == topic
    assert note["state"] == "2"  # the second notification: the first came before the channel
    assert note["semps:solutions"] == [{"room": "<http://ex.org/room3>", "t": _int(50)}]
    assert note["published"].endswith("Z")

    # state: a channel asked with the state of the first notification resumes after it
    again = _channel(server, {"type": "WebSocketChannel2023", "topic": topic, "state": "1"})
    with _open(again.json()["receiveFrom"]) as ws:
        assert json.loads(ws.recv(timeout=120))["state"] == "2"


def _int(value: int) -> str:
    return f'"{value}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_a_deleted_subscription_ends_its_channel(server: Server) -> None:
    sub = _subscription(server)
    reply = _channel(server, {"type": "WebSocketChannel2023", "topic": sub})
    with _open(reply.json()["receiveFrom"]) as ws:
        with server.client("subscriber") as client:
            assert client.delete(f"/subscriptions/{sub}").status_code == 204
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=120)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


@pytest.mark.parametrize(
    ("request_body", "status"),
    [
        # instructions that cannot be processed: 422 (protocol.html, Subscription Server);
        # a topic of another's or none: 404; a sendTo the SSRF guard refuses: 400, as a
        # subscription webhook's
        # another type than the service's ("_service": where it is sent; else to its type's)
        ({"_service": "WebSocketChannel2023", "type": "WebhookChannel2023", "topic": "x"}, 422),
        ({"type": "WebSocketChannel2023"}, 422),
        ({"type": "WebSocketChannel2023", "topic": "https://elsewhere.example/x"}, 422),
        ({"type": "WebSocketChannel2023", "topic": "sub-nope"}, 404),
        ({"type": "WebSocketChannel2023", "topic": "{sub}", "endAt": "2001-01-01T00:00:00Z"}, 422),
        ({"type": "WebSocketChannel2023", "topic": "{sub}", "rate": "ten seconds"}, 422),
        ({"type": "WebSocketChannel2023", "topic": "{sub}", "state": "x"}, 422),
        ({"type": "WebSocketChannel2023", "topic": "{sub}", "accept": "text/turtle"}, 415),
        ({"type": "WebhookChannel2023", "topic": "{sub}"}, 422),  # no sendTo
        ({"type": "WebhookChannel2023", "topic": "{sub}", "sendTo": "ftp://x.example/"}, 422),
        # the webhook policy's SSRF guard (this server has no --webhook-allow)
        ({"type": "WebhookChannel2023", "topic": "{sub}", "sendTo": "http://127.0.0.1:9/"}, 400),
        ({"type": "WebhookChannel2023", "topic": "{sub}", "sendTo": "http://10.0.0.1/"}, 400),
        ({"type": "StreamingHTTPChannel2023", "topic": "sub-nope"}, 404),
        ({"type": "StreamingHTTPChannel2023", "topic": "{sub}", "accept": "text/turtle"}, 415),
        ({"type": "StreamingHTTPChannel2023", "topic": "{sub}", "rate": "PT"}, 422),
        (
            {
                "type": "WebhookChannel2023",
                "topic": "{sub}",
                "sendTo": "https://hooks.example/in",
                "accept": "text/turtle",
            },
            415,
        ),
        ({"type": "NoSuchChannel2023", "topic": "{sub}"}, 404),  # no such service
    ],
)
def test_bad_subscription_requests_are_refused(
    server: Server, request_body: dict[str, Any], status: int
) -> None:
    sub = _subscription(server)
    body = {
        k: v.replace("{sub}", sub) if isinstance(v, str) else v for k, v in request_body.items()
    }
    service = body.pop("_service", body.get("type", "WebSocketChannel2023"))
    reply = _channel(server, body, service=service)
    assert reply.status_code == status, reply.text
    assert set(reply.json()) >= {"error", "detail"}


def test_another_subscribers_subscription_is_not_found_and_a_publisher_is_forbidden(
    server: Server,
) -> None:
    with server.client("admin") as admin:
        other = admin.post("/tokens", json={"role": "subscriber"}).json()["token"]
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {other}"}) as c:
        theirs = c.post("/subscriptions", content=HOT).json()["id"]
    assert _channel(server, {"type": "WebSocketChannel2023", "topic": theirs}).status_code == 404
    mine = _subscription(server)
    request = {"type": "WebSocketChannel2023", "topic": mine}
    assert _channel(server, request, role="publisher").status_code == 403


def test_a_made_up_channel_is_closed(server: Server) -> None:
    with _open(f"ws://127.0.0.1:{server.port}/solid/channel/e30.AAAAAAAAAAAAAAAAAAAAAA") as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


def test_the_gateway_points_ws_clients_to_the_subscription_service(server: Server) -> None:
    """Inrupt's negotiation: protocols and features in, the endpoint to ask out."""
    with server.client("subscriber") as client:
        good = client.post("/solid/gateway", json={"protocols": ["ws"], "features": []})
        bad = client.post("/solid/gateway", json={"protocols": ["sse"], "features": []})
    assert good.status_code == 200
    assert good.json()["endpoint"] == f"{server.url}/solid/subscription/WebSocketChannel2023"
    assert bad.status_code == 400 and "'ws'" in bad.json()["detail"]
    assert httpx.get(f"{server.url}/.well-known/solid").json()["notificationGateway"] == (
        f"{server.url}/solid/gateway"
    )


SPEC_CONTEXT = "https://www.w3.org/ns/solid/notifications-context/v1"
LD = "application/ld+json"


@pytest.mark.parametrize(
    ("service", "media", "context", "status", "detail"),
    [
        # protocol.html, Subscription Server: 415 for an unsupported profile, 422 for an
        # unrecognised JSON-LD context; the request is application/ld+json
        ("WebSocketChannel2023", LD, [SPEC_CONTEXT], 200, None),
        ("WebhookChannel2023", f'{LD}; profile="{SPEC_CONTEXT}"', [SPEC_CONTEXT], 200, None),
        (
            "WebSocketChannel2023",
            f'{LD};profile="https://example.org/p"',
            [SPEC_CONTEXT],
            415,
            "'https://example.org/p' is not served",
        ),
        ("WebSocketChannel2023", "text/turtle", [SPEC_CONTEXT], 415, "not 'text/turtle'"),
        ("StreamingHTTPChannel2023", None, [SPEC_CONTEXT], 415, "has no Content-Type"),
        ("WebSocketChannel2023", LD, None, 422, "unrecognised JSON-LD context (none)"),
        ("WebSocketChannel2023", LD, [AS], 422, "unrecognised JSON-LD context"),
        ("WebSocketChannel2023", LD, ["https://example.org/ctx", SPEC_CONTEXT], 422, "example.org"),
        (
            "WebSocketChannel2023",
            LD,
            [{"notify": "https://example.org/"}],
            422,
            "names " + SPEC_CONTEXT,
        ),
        # plain JSON is Inrupt's gateway form: on the WebSocketChannel2023 service only
        ("WebSocketChannel2023", "application/json", None, 200, None),
        ("WebhookChannel2023", "application/json", [SPEC_CONTEXT], 415, "not 'application/json'"),
    ],
)
def test_a_subscription_request_is_json_ld_in_the_notifications_context(
    server: Server,
    service: str,
    media: str | None,
    context: list[Any] | None,
    status: int,
    detail: str | None,
) -> None:
    body: dict[str, Any] = {"topic": _subscription(server)}
    if service == "WebhookChannel2023":
        body["sendTo"] = "https://hooks.example/in"
    if context is not None:
        body["@context"] = context
    headers = {} if media is None else {"Content-Type": media}
    with server.client("subscriber") as client:
        reply = client.post(
            f"/solid/subscription/{service}", content=json.dumps(body), headers=headers
        )
    assert reply.status_code == status, reply.text
    if detail is not None:
        assert detail in reply.json()["detail"]
        assert (
            reply.json()["error"] == {415: "unsupported_media_type", 422: "unprocessable"}[status]
        )
    else:
        assert reply.json()["type"] == service
