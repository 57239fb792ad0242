"""Notification streams of a real server through semps.client, on both clients and both
transports (SSE, WebSocket): a connection cut in the middle is resumed from the last seq,
and the subscriber gets every notification the publisher was acknowledged for, once, in
order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from client_support import Relay
from semps_test_support import Server, _free_port

from semps.client import Retry
from semps.errors import ClientError, TooManyRequests

pytestmark = pytest.mark.server

FAST = Retry(attempts=20, backoff=0.05, max_backoff=0.5)


@pytest.mark.parametrize("via", ["sse", "websocket"])
def test_a_cut_connection_resumes_without_loss_or_duplicates(
    via: str,
    server: Server,
    relay: Relay,
    connect: Any,
    subscriber: Any,
    publisher: Any,
    subscriber_token: str,
    demo: Path,
) -> None:
    sub = subscriber.subscribe(demo / "subscriptions" / "chairs.rq")
    event = demo / "events" / "e1-new-chair.rdf"
    stream = connect(relay.url, subscriber_token, retry=FAST).notifications(sub, via=via)
    acked = [publisher.publish(event).id for _ in range(2)]
    got = [next(stream) for _ in range(2)]
    relay.cut()
    acked += [publisher.publish(event).id for _ in range(3)]
    got += [next(stream) for _ in range(3)]
    stream.close()
    assert [n.seq for n in got] == [1, 2, 3, 4, 5]
    assert [n.event for n in got] == acked
    heads = [r.split(b"\r\n\r\n")[0].lower() for r in relay.requests]
    assert len(heads) == 2  # one reconnection
    resumed = b"last-event-id: 2" if via == "sse" else b"?after=2 "
    assert resumed in heads[1]


def test_a_stream_resumes_across_a_server_killed_and_restarted(
    tmp_path: Path, connect: Any, demo: Path
) -> None:
    """SIGKILL, then a restart on another port behind the same address: the stream reads on
    from the store where it stopped."""
    srv = Server(tmp_path / "data")
    relay = Relay(srv.port)
    try:
        admin = connect(srv.url, srv.tokens["admin"])
        admin.replace_ontology(demo / "univ-bench.owl")
        sub = admin.subscribe(demo / "subscriptions" / "chairs.rq")
        event = demo / "events" / "e1-new-chair.rdf"
        stream = connect(relay.url, srv.tokens["admin"], retry=FAST).notifications(sub)
        acked = [admin.publish(event).id for _ in range(2)]
        got = [next(stream) for _ in range(2)]
        srv.kill()
        relay.cut()
        srv.start()
        relay.port_upstream = srv.port
        admin = connect(srv.url, srv.tokens["admin"])
        acked += [admin.publish(event).id for _ in range(2)]
        got += [next(stream) for _ in range(2)]
        stream.close()
    finally:
        relay.close()
        srv.stop()
    assert [(n.seq, n.event) for n in got] == list(enumerate(acked, start=1))


@pytest.mark.parametrize("via", ["sse", "websocket"])
def test_a_stream_whose_server_is_gone_fails_after_its_retries(via: str, connect: Any) -> None:
    nowhere = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    client = connect(nowhere, "t0k", retry=Retry(attempts=2, backoff=0.01))
    with pytest.raises(ClientError, match="after 2 reconnections") as info:
        next(client.notifications("sub-1", via=via))
    assert isinstance(info.value.__cause__, OSError | httpx.TransportError)


@pytest.mark.parametrize("via", ["sse", "websocket"])
def test_one_stream_over_the_cap_is_too_many_requests(
    via: str, server: Server, connect: Any, subscriber: Any, subscriber_token: str
) -> None:
    sub = subscriber.subscribe("SELECT ?x WHERE { ?x a <urn:Nothing> }")
    client = connect(server.url, subscriber_token, retry=Retry(attempts=0))
    headers = {"Authorization": f"Bearer {subscriber_token}"}
    held = [
        httpx.stream("GET", f"{server.url}/subscriptions/{sub.id}/notifications", headers=headers)
        for _ in range(3)
    ]
    responses = [h.__enter__() for h in held]
    try:
        assert all(r.status_code == 200 for r in responses)
        with pytest.raises(TooManyRequests, match="3 open streams"):
            next(client.notifications(sub, via=via))
    finally:
        for h in held:
            h.__exit__(None, None, None)
