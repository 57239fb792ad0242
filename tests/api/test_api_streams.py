"""Notification streams on a real server: positions validated, a per-subscriber cap, replay
in pages then live notifications from memory, and bounded server memory for clients that
never read."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import (
    PATIENCE,
    UNIV_BENCH,
    Server,
    rss_kib,
    stalled_reader,
    store_backlog,
    wait_for,
)
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from semps.api.streams import parse_position
from semps.cli.demo import demo_dir
from semps.errors import SempsError

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}
LIMIT_TEXT = "must be ASCII digits for a number below 2**63, not"


def _server(tmp_path: Path, *extra: str) -> Server:
    return Server(tmp_path / "data", extra=extra, ontology=UNIV_BENCH)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own: it counts open streams or restarts with a backlog."""
    srv = _server(tmp_path, "--max-streams", "3")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests that only send positions: each registers a subscription of its
    own and leaves no stream open, so none sees what another did."""
    srv = _server(tmp_path_factory.mktemp("positions"))
    yield srv
    srv.stop()


def _ids(text: str) -> list[int]:
    return [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]


@pytest.mark.parametrize(
    ("params", "headers", "shown"),
    [
        (
            {},
            {"Last-Event-ID": "²".encode()},
            "Last-Event-ID",
        ),
        ({}, {"Last-Event-ID": "9223372036854775808"}, "Last-Event-ID"),
        ({}, {"Last-Event-ID": "-1"}, "Last-Event-ID"),
        ({"after": "9223372036854775808"}, {}, "after"),
        ({"after": "99999999999999999999999"}, {}, "after"),
        ({"after": "1e3"}, {}, "after"),
        ({"after": "١٢"}, {}, "after"),  # Arabic-Indic digits: str.isdigit, not ASCII
    ],
)
def test_stream_positions_must_be_ascii_digits_below_2_63(
    shared: Server, params: dict[str, str], headers: dict[str, object], shown: str
) -> None:
    with shared.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        reply = sub.get(f"/subscriptions/{sub_id}/notifications", params=params, headers=headers)
    value = params.get("after") or headers["Last-Event-ID"]
    if isinstance(value, bytes):
        value = value.decode("latin-1")  # how an HTTP server reads a non-ASCII header
    assert reply.status_code == 400
    assert reply.json() == {"error": "bad_request", "detail": f"{shown} {LIMIT_TEXT} {value!r}"}


def test_the_largest_position_is_accepted(shared: Server) -> None:
    with shared.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        url = f"/subscriptions/{sub_id}/notifications?once=true"
        top = {"Last-Event-ID": str(2**63 - 1)}
        assert sub.get(url, headers=top).status_code == 200
        assert sub.get(url + f"&after={2**63 - 1}").status_code == 200


def _ws_url(server: Server, sub_id: str, query: str = "") -> str:
    base = server.url.replace("http://", "ws://") + f"/subscriptions/{sub_id}/ws"
    return f"{base}?token={server.tokens['subscriber']}{query}"


def test_websocket_positions_are_validated(shared: Server) -> None:
    with shared.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
    with connect(_ws_url(shared, sub_id, f"&after={2**63}"), open_timeout=PATIENCE) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=PATIENCE)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4400
    assert closed.value.rcvd.reason == f"after {LIMIT_TEXT} '{2**63}'"


def test_open_streams_per_subscriber_are_capped(server: Server) -> None:
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
    url = f"{server.url}/subscriptions/{sub_id}/notifications"
    auth = {"Authorization": f"Bearer {server.tokens['subscriber']}"}
    with httpx.Client(timeout=None, headers=auth) as client:
        first = client.send(client.build_request("GET", url), stream=True)
        second = client.send(client.build_request("GET", url), stream=True)
        with connect(_ws_url(server, sub_id), open_timeout=PATIENCE) as ws:
            assert (first.status_code, second.status_code) == (200, 200)
            over = client.get(url)
            assert over.status_code == 429
            detail = over.json()["detail"]
            assert over.json()["error"] == "too_many_requests"
            assert detail.startswith("subscriber-")
            assert detail.endswith(" already has 3 open streams, the limit (--max-streams)")
            with connect(_ws_url(server, sub_id), open_timeout=PATIENCE) as ws2:
                with pytest.raises(ConnectionClosed) as closed:
                    ws2.recv(timeout=PATIENCE)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
            # Another caller is not counted against this subscriber.
            with server.client("admin") as admin:
                assert admin.get(url + "?once=true").status_code == 200
            ws.send("ignored")
        first.close()
        # The closed streams are given back: a new one is accepted.
        assert wait_for(lambda: client.get(url + "?once=true").status_code == 200)
        second.close()


def test_replay_reads_the_store_in_pages_then_follows_live(server: Server) -> None:
    with server.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
    store_backlog(server, sub_id, 450)  # three pages of 200
    with server.client("subscriber") as sub:
        url = f"/subscriptions/{sub_id}/notifications"
        assert _ids(sub.get(url + "?once=true").text) == list(range(1, 451))
        assert _ids(sub.get(url + "?once=true&after=390").text) == list(range(391, 451))
        with sub.stream("GET", url, headers={"Last-Event-ID": "445"}) as live:
            lines = live.iter_lines()
            seen: list[int] = []
            while len(seen) < 5:
                line = next(lines)
                if line.startswith("id: "):
                    seen.append(int(line[4:]))
            with server.client("publisher") as pub:
                for _ in range(3):
                    assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202
            while len(seen) < 8:
                line = next(lines)
                if line.startswith("id: "):
                    seen.append(int(line[4:]))
            assert seen == list(range(446, 454))
    with connect(_ws_url(server, sub_id, "&after=448"), open_timeout=PATIENCE) as ws:
        got = [json.loads(ws.recv(timeout=PATIENCE))["id"] for _ in range(5)]
    assert got == [449, 450, 451, 452, 453]


@pytest.mark.slow
def test_streams_that_never_read_keep_server_memory_bounded(tmp_path: Path) -> None:
    """40 streams (SSE and WebSocket) replay a 40 MB backlog (10 KB notifications) from the
    start and never read: the server holds about a page per stream (the socket's
    back-pressure stops each one), not the backlog. (Before paging, 40 SSE streams grew the
    server by 230 MB.)"""
    srv = _server(tmp_path, "--max-streams", "40")
    socks: list[socket.socket] = []
    try:
        with srv.client("subscriber") as sub:
            sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        store_backlog(srv, sub_id, 4000, pad=10_000)
        assert srv.proc is not None
        with srv.client("subscriber") as sub:  # warm up: one full replay, read to the end
            assert len(_ids(sub.get(f"/subscriptions/{sub_id}/notifications?once=true").text))
        before = rss_kib(srv.proc.pid)
        token = srv.tokens["subscriber"]
        sse = (
            f"GET /subscriptions/{sub_id}/notifications HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        ).encode()
        ws = (
            f"GET /subscriptions/{sub_id}/ws?token={token} HTTP/1.1\r\nHost: x\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        ).encode()
        for request in [sse, ws] * 20:  # 20 SSE and 20 WebSocket streams
            socks.append(stalled_reader(srv.port, request))
        peak = before
        for _ in range(40):  # 4 s: every stream has long filled its socket
            peak = max(peak, rss_kib(srv.proc.pid))
            time.sleep(0.1)
        with srv.client("publisher") as pub:  # the server still answers
            assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202
        assert (peak - before) < 120 * 1024, f"RSS grew from {before} KiB to {peak} KiB"
        for s in socks:
            s.close()
        socks.clear()
        # The 40 leases are given back once the server sees the sockets close.
        with srv.client("subscriber") as sub:
            url = f"/subscriptions/{sub_id}/notifications?once=true&after=3999"
            assert wait_for(lambda: sub.get(url).status_code == 200)
    finally:
        for s in socks:
            s.close()
        srv.stop()


def test_position_parsing_without_a_server() -> None:
    assert parse_position(None, "after") == 0
    assert parse_position("", "after") == 0
    assert parse_position("0" * 30 + "42", "after") == 42
    assert parse_position(str(2**63 - 1), "after") == 2**63 - 1
    with pytest.raises(SempsError) as refused:
        parse_position("9" * 5000, "after")  # past int()'s 4300-digit limit: still a 400
    assert str(refused.value) == f"after {LIMIT_TEXT} '{'9' * 40}...'"


def test_sigterm_ends_every_stream_cleanly_after_what_it_sent(tmp_path: Path) -> None:
    """A stopping server ends its notification streams itself: an SSE client reads its
    response to the end (every notification sent, then a complete response, not a cut
    connection) and a WebSocket client a close frame (uvicorn's 1012, "service restart"),
    so both resume from their position. Before, uvicorn waited out its graceful-shutdown
    time for the SSE streams and then cut them mid-response."""
    srv = _server(tmp_path)
    try:
        with srv.client("subscriber") as sub, srv.client("publisher") as pub:
            sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
            assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202
        url = f"{srv.url}/subscriptions/{sub_id}/notifications"
        auth = {"Authorization": f"Bearer {srv.tokens['subscriber']}"}
        with httpx.Client(timeout=None, headers=auth) as client:
            sse = client.send(client.build_request("GET", url), stream=True)
            lines = sse.iter_lines()
            assert next(line for line in lines if line.startswith("id: ")) == "id: 1"
            with connect(_ws_url(srv, sub_id), open_timeout=PATIENCE) as ws:
                assert json.loads(ws.recv(timeout=PATIENCE))["id"] == 1
                assert srv.proc is not None
                srv.proc.terminate()
                rest = list(lines)  # raises httpx.RemoteProtocolError on a cut response
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=PATIENCE)
            sse.close()
        assert not [line for line in rest if line.startswith("id: ")]
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1012
        assert srv.proc.wait(timeout=PATIENCE) is not None
    finally:
        srv.stop()
