"""Solid's WebhookChannel2023 and StreamingHTTPChannel2023 on a real ``semps serve``, with a
real HTTP receiver for the webhooks. The shapes are the protocol's (solid/notifications:
webhook-channel-2023.bs, a request of ``type``, ``topic`` and ``sendTo`` answered with
``id``, ``type``, ``topic`` and ``sender``; streaming-http-channel-2023.bs, a response with
``receiveFrom`` read with the same token). Each test speaks as its own subscriber, so the
channels one leaves running count against no other's ``--max-streams``."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from semps_test_support import LocalServer, QuietHandler, Server, wait_for
from solid_service import HOT, Receiver, Subscribers, establish, hot, publish, request, solutions
from websockets.sync.client import connect

pytestmark = pytest.mark.server

RETRIES = ("--webhook-attempts", "3", "--webhook-backoff", "0.1")
MAX_STREAMS = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = (*RETRIES, "--webhook-allow", "127.0.0.1/32", "--max-streams", str(MAX_STREAMS))
    srv = Server(tmp_path_factory.mktemp("solid-channels") / "data", extra=extra)
    yield srv
    srv.stop()


Subscriber = Callable[[str], tuple[httpx.Client, str]]


@pytest.fixture
def subscriber(server: Server) -> Iterator[Subscriber]:
    """Makes a client with a new subscriber token of a subject (and the token's id),
    closed after the test."""
    made = Subscribers(server)
    yield made
    made.close()


def _at(seconds: float) -> tuple[float, str]:
    """The moment ``seconds`` from now, and as an xsd:dateTime (to the millisecond)."""
    when = time.time() + seconds
    return when, datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")


def test_a_webhook_channel_posts_signed_notifications_until_it_is_deleted(
    server: Server, subscriber: Subscriber
) -> None:
    client, _ = subscriber("hooked")
    topic = f"{server.url}/subscriptions/{hot(client)}"
    first, second = Receiver(failures=1), Receiver()  # first refuses once: retried
    try:
        channel = establish(client, "WebhookChannel2023", topic=topic, sendTo=first.url)
        assert channel["type"] == "WebhookChannel2023" and channel["topic"] == topic
        assert channel["sendTo"] == first.url and channel["sender"].startswith(server.url)
        assert channel["id"].startswith(f"{server.url}/solid/channel/")
        publish(server, (2, 20), (3, 50))
        assert wait_for(lambda: len(first.received) == 1)
        headers, body, _ = first.received[0]
        assert first.refused == 1
        assert headers["Content-Type"] == "application/ld+json"
        key = channel["semps:secret"].encode()
        assert headers["X-Semps-Signature"] == (
            "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
        )
        (note,) = first.notes()
        assert note["type"] == "Add" and note["object"] == topic and note["state"] == "1"
        assert solutions(note) == ["<http://ex.org/room3>"]

        # the channel is a resource of its owner's: another subscriber does not find it
        other, _ = subscriber("not-hooked")
        assert other.delete(channel["id"]).status_code == 404
        assert client.get(channel["id"]).status_code == 200
        # unsubscribe: DELETE on the channel's id
        assert client.delete(channel["id"]).status_code == 204
        assert client.get(channel["id"]).status_code == 404
        assert client.delete(channel["id"]).status_code == 404

        # a channel established after it gets the next notification; the deleted one not
        establish(client, "WebhookChannel2023", topic=topic, sendTo=second.url)
        publish(server, (4, 60))
        assert wait_for(lambda: len(second.received) == 1)
        assert solutions(second.notes()[0]) == ["<http://ex.org/room4>"]
        assert len(first.received) == 1
    finally:
        first.close()
        second.close()


def test_a_webhook_channel_keeps_its_state_rate_and_end(
    server: Server, subscriber: Subscriber
) -> None:
    client, _ = subscriber("featured")
    sub = hot(client)
    publish(server, (5, 40), (6, 41))  # before the channel: carried, from state "0"
    end, end_text = _at(6)
    receiver = Receiver()
    try:
        channel = establish(
            client,
            "WebhookChannel2023",
            topic=sub,
            sendTo=receiver.url,
            state="0",
            rate="PT1S",
            endAt=end_text,
        )
        assert channel["rate"] == "PT1S" and channel["endAt"].startswith(end_text[:19])
        assert wait_for(lambda: len(receiver.received) == 2)
        assert [note["state"] for note in receiver.notes()] == ["1", "2"]
        (_, _, t1), (_, _, t2) = receiver.received
        assert t2 - t1 >= 0.9  # rate: at most one notification a second (a lower bound)
        # endAt: the channel ends by itself, and then is gone
        assert wait_for(lambda: client.get(channel["id"]).status_code == 404)
        assert time.time() >= end - 0.1
    finally:
        receiver.close()


def test_a_webhook_channel_goes_on_after_a_restart(tmp_path: Path) -> None:
    """The channel is kept in the data directory: the restarted server delivers the next
    notification, after the last one delivered."""
    server = Server(tmp_path / "data", extra=(*RETRIES, "--webhook-allow", "127.0.0.1/32"))
    receiver = Receiver()
    try:
        with server.client("subscriber") as client:
            sub = hot(client)
            channel = establish(client, "WebhookChannel2023", topic=sub, sendTo=receiver.url)
        publish(server, (11, 51))
        assert wait_for(lambda: len(receiver.received) == 1)
        server.stop()
        server.start()
        publish(server, (12, 52))
        assert wait_for(lambda: len(receiver.received) == 2)
        assert [note["state"] for note in receiver.notes()] == ["1", "2"]
        assert solutions(receiver.notes()[1]) == ["<http://ex.org/room12>"]
        path = channel["id"].removeprefix(channel["id"].split("/solid/")[0])  # (new port)
        with server.client("subscriber") as client:
            assert client.delete(path).status_code == 204
        server.stop()
        server.start()  # a deleted channel stays deleted
        with server.client("subscriber") as client:
            assert client.get(path).status_code == 404
    finally:
        receiver.close()
        server.stop()


class Redirector(LocalServer):
    """A webhook endpoint that answers every call with a redirect to ``target``."""

    def __init__(self, target: str) -> None:
        self.calls = 0
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.body()
                outer.calls += 1
                self.send_response(307)
                self.send_header("Location", target)
                self.end_headers()

        super().__init__(Handler, 0, "/hook")


def _failures(server: Server) -> int:
    with server.client("admin") as admin:
        text = admin.get("/metrics").text
    (line,) = [row for row in text.splitlines() if row.startswith("semps_webhook_failures_total")]
    return int(line.split()[1])


def test_a_webhook_channel_follows_no_redirect_to_a_refused_address(tmp_path: Path) -> None:
    """The webhooks' SSRF guard checks each redirect: one to the cloud metadata address
    (link-local, not allowed) fails each attempt, counted as a webhook's failures."""
    server = Server(tmp_path / "data", extra=(*RETRIES, "--webhook-allow", "127.0.0.1/32"))
    redirector = Redirector("http://169.254.169.254/latest/meta-data/")
    try:
        with server.client("subscriber") as client:
            establish(client, "WebhookChannel2023", topic=hot(client), sendTo=redirector.url)
        publish(server, (13, 53))
        assert wait_for(lambda: redirector.calls == 3 and _failures(server) == 3)
        skipped = "notification 1 skipped after 3 attempts: UnsafeCallback: refused callback"
        assert wait_for(lambda: skipped in server.log.read_text())
    finally:
        redirector.close()
        server.stop()


def test_a_deleted_topic_ends_its_webhook_channel(server: Server, subscriber: Subscriber) -> None:
    client, _ = subscriber("deleting")
    sub = hot(client)
    receiver = Receiver()
    try:
        channel = establish(client, "WebhookChannel2023", topic=sub, sendTo=receiver.url)
        assert client.delete(f"/subscriptions/{sub}").status_code == 204
        assert wait_for(lambda: client.get(channel["id"]).status_code == 404)
    finally:
        receiver.close()


class Reader:
    """Reads a streaming HTTP channel in a thread: each line a notification."""

    def __init__(self, client: httpx.Client, url: str) -> None:
        self.notes: list[tuple[dict[str, Any], float]] = []
        self.status = 0
        self.media = ""
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(client, url), daemon=True)
        self.thread.start()

    def _read(self, client: httpx.Client, url: str) -> None:
        try:
            with client.stream("GET", url) as reply:
                self.status, self.media = reply.status_code, reply.headers["content-type"]
                for line in reply.iter_lines():
                    if line:
                        self.notes.append((json.loads(line), time.time()))
        finally:
            self.ended.set()


def test_a_streaming_channel_carries_notifications_until_its_token_is_revoked(
    server: Server, subscriber: Subscriber
) -> None:
    client, token_id = subscriber("streamer")
    topic = f"{server.url}/subscriptions/{hot(client)}"
    channel = establish(client, "StreamingHTTPChannel2023", topic=topic)
    assert channel["type"] == "StreamingHTTPChannel2023" and channel["topic"] == topic
    url = channel["receiveFrom"]
    assert url.startswith(f"{server.url}/solid/stream/")
    assert httpx.get(url).status_code == 401  # the same token as the subscription request
    other, _ = subscriber("not-streamer")
    assert other.get(url).status_code == 404
    reader = Reader(client, url)
    publish(server, (7, 70))  # after the channel was established: carried
    assert wait_for(lambda: len(reader.notes) == 1)
    note, _ = reader.notes[0]
    assert reader.status == 200 and reader.media.startswith("application/ld+json")
    assert note["type"] == "Add" and note["object"] == topic and note["state"] == "1"
    assert solutions(note) == ["<http://ex.org/room7>"]
    with server.client("admin") as admin:
        assert admin.delete(f"/tokens/{token_id}").status_code == 204
    assert wait_for(reader.ended.is_set)


def test_a_streaming_channel_waits_for_start_at_and_ends_at_end_at(
    server: Server, subscriber: Subscriber
) -> None:
    client, _ = subscriber("timed")
    sub = hot(client)
    start, start_text = _at(2)
    end, end_text = _at(5)
    channel = establish(
        client, "StreamingHTTPChannel2023", topic=sub, startAt=start_text, endAt=end_text
    )
    reader = Reader(client, channel["receiveFrom"])
    publish(server, (8, 80))
    assert wait_for(lambda: len(reader.notes) == 1)
    assert reader.notes[0][1] >= start - 0.1  # not before startAt
    assert wait_for(reader.ended.is_set)  # the response completes at endAt
    assert time.time() >= end - 0.1


def test_channels_count_against_the_stream_cap(server: Server, subscriber: Subscriber) -> None:
    """A running webhook channel and each open streaming response hold one of the owner's
    ``--max-streams`` slots."""
    client, _ = subscriber("capped")
    sub = hot(client)
    receiver = Receiver()
    try:
        establish(client, "WebhookChannel2023", topic=sub, sendTo=receiver.url)
        urls = [
            establish(client, "StreamingHTTPChannel2023", topic=sub)["receiveFrom"]
            for _ in range(MAX_STREAMS)
        ]
        readers = [Reader(client, url) for url in urls[1:]]
        assert wait_for(lambda: all(r.status == 200 for r in readers))
        refused = client.get(urls[0])
        assert refused.status_code == 429 and "--max-streams" in refused.json()["detail"]
        refused = request(client, "WebhookChannel2023", topic=sub, sendTo=receiver.url)
        assert refused.status_code == 429
        # a refused channel on a SPARQL text leaves no subscription behind
        features = {"semps:query": HOT, "sendTo": receiver.url}
        refused = request(client, "WebhookChannel2023", **features)
        assert refused.status_code == 429
        assert [item["id"] for item in client.get("/subscriptions").json()["items"]] == [sub]
        assert client.delete(f"/subscriptions/{sub}").status_code == 204  # ends every one
        assert wait_for(lambda: all(r.ended.is_set() for r in readers))
    finally:
        receiver.close()


def test_a_channel_on_a_sparql_text_makes_the_subscription_its_topic(
    server: Server, subscriber: Subscriber
) -> None:
    """``semps:query`` in place of ``topic``: a new semantic subscription of the caller's,
    followed from its start."""
    client, _ = subscriber("querying")
    channel = establish(client, "StreamingHTTPChannel2023", **{"semps:query": HOT})
    topic = channel["topic"]
    assert topic.startswith(f"{server.url}/subscriptions/")
    made = client.get(topic.removeprefix(server.url))
    assert made.status_code == 200 and made.json()["kind"] == "semantic"
    reader = Reader(client, channel["receiveFrom"])
    publish(server, (9, 90), (10, 10))
    assert wait_for(lambda: len(reader.notes) == 1)
    note, _ = reader.notes[0]
    assert note["object"] == topic and solutions(note) == ["<http://ex.org/room9>"]


@pytest.mark.parametrize(
    ("features", "status", "detail"),
    [
        ({"semps:query": HOT, "topic": "sub-1"}, 422, "not both"),
        ({"semps:query": "SELECT nonsense"}, 400, "1:8: expected variables"),
        ({"semps:query": ""}, 422, "SPARQL query's text"),
    ],
)
def test_a_bad_sparql_topic_is_refused_and_makes_nothing(
    server: Server, subscriber: Subscriber, features: dict[str, Any], status: int, detail: str
) -> None:
    client, _ = subscriber("badly-querying")
    reply = request(client, "WebSocketChannel2023", **features)
    assert reply.status_code == status, reply.text
    assert detail in reply.json()["detail"]
    assert client.get("/subscriptions").json()["items"] == []


def _status(client: httpx.Client, url: str) -> int:
    """The status a streaming channel's GET is answered with (the stream closed at once)."""
    with client.stream("GET", url) as reply:
        return reply.status_code


def test_a_closed_channel_socket_returns_its_slot_at_once(
    server: Server, subscriber: Subscriber
) -> None:
    """A WebSocket channel whose client goes frees its ``--max-streams`` slot without
    waiting for a notification to fail to send."""
    client, _ = subscriber("socketed")
    sub = hot(client)
    probe = establish(client, "StreamingHTTPChannel2023", topic=sub)["receiveFrom"]
    with contextlib.ExitStack() as sockets:
        for _ in range(MAX_STREAMS):
            url = establish(client, "WebSocketChannel2023", topic=sub)["receiveFrom"]
            sockets.enter_context(connect(url))
        assert wait_for(lambda: _status(client, probe) == 429)
    assert wait_for(lambda: _status(client, probe) == 200)
