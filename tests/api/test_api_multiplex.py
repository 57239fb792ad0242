"""The multiplexed notification stream on a real server: one stream carries many
subscriptions' notifications, each naming its subscription, counts once against
--max-streams, resumes from a signed cursor (a made-up or another principal's cursor is a
400), follows subscriptions registered later, and over WebSocket takes subscribe and
unsubscribe messages on the open connection; the Python clients read it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import UNIV_BENCH, Server, store_backlog
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from semps.cli.demo import demo_dir
from semps.client import AsyncClient, Client, MuxPosition

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("mux") / "data"
    extra = ("--max-streams", "1", "--max-stream-subscriptions", "5")
    with Server(data, extra=extra, ontology=UNIV_BENCH) as srv:
        yield srv


def _token(server: Server, role: str = "subscriber") -> str:
    with server.client("admin") as admin:
        return str(admin.post("/tokens", json={"role": role}).json()["token"])


def _subscribe(server: Server, token: str, count: int) -> list[str]:
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    ) as c:
        return [c.post("/subscriptions", content=CHAIRS).json()["id"] for _ in range(count)]


def _publish(server: Server, count: int = 1) -> None:
    with server.client("publisher") as pub:
        for _ in range(count):
            assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202


def _events(lines: Iterator[str], count: int) -> list[tuple[str | None, str, str]]:
    """The next ``count`` SSE events as (id or None, event, data)."""
    got: list[tuple[str | None, str, str]] = []
    event_id, name, data = None, "message", ""
    for line in lines:
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and data:
            got.append((event_id, name, data))
            event_id, name, data = None, "message", ""
            if len(got) == count:
                return got
    return got


def _seqs(events: list[tuple[str | None, str, str]]) -> dict[str, list[int]]:
    seqs: dict[str, list[int]] = {}
    for _, name, data in events:
        if name == "notification":
            doc = json.loads(data)
            seqs.setdefault(doc["subscription"], []).append(doc["id"])
    return seqs


def test_one_stream_carries_every_subscription_and_counts_once(server: Server) -> None:
    token = _token(server)
    subs = _subscribe(server, token, 3)
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, headers=auth, timeout=120) as client:
        with client.stream("GET", "/notifications") as stream:
            assert stream.status_code == 200
            # --max-streams 1: the one multiplexed stream is this subscriber's one stream
            over = client.get(f"/subscriptions/{subs[0]}/notifications")
            assert over.status_code == 429
            _publish(server, 2)
            events = _events(stream.iter_lines(), 6)
    assert _seqs(events) == {sub: [1, 2] for sub in subs}
    assert events[-1][0] is not None  # the page's last event carries the cursor


def test_a_cursor_resumes_each_subscription_where_it_was(server: Server) -> None:
    token = _token(server)
    subs = _subscribe(server, token, 2)
    auth = {"Authorization": f"Bearer {token}"}
    _publish(server, 1)
    with httpx.Client(base_url=server.url, headers=auth, timeout=120) as client:
        with client.stream("GET", "/notifications") as stream:
            events = _events(stream.iter_lines(), 2)
        cursor = events[-1][0]
        assert cursor is not None and _seqs(events) == {sub: [1] for sub in subs}
        _publish(server, 2)
        # a third subscription of another's is not in the stream; the cursor is per token
        with client.stream("GET", "/notifications", headers={"Last-Event-ID": cursor}) as again:
            events = _events(again.iter_lines(), 4)
    assert _seqs(events) == {sub: [2, 3] for sub in subs}


@pytest.mark.parametrize(
    "cursor",
    ["AAAA", "not base64 at all!", "x" * 200, "é"],
)
def test_a_cursor_the_service_did_not_hand_out_is_a_400(server: Server, cursor: str) -> None:
    token = _token(server)
    auth = {"Authorization": f"Bearer {token}"}
    reply = httpx.get(f"{server.url}/notifications", params={"cursor": cursor}, headers=auth)
    assert reply.status_code == 400
    assert reply.json()["error"] == "bad_request"
    assert reply.json()["detail"].startswith("invalid cursor")


def test_another_principals_cursor_is_a_400(server: Server) -> None:
    ada, bob = _token(server), _token(server)
    _subscribe(server, ada, 1)
    _publish(server)
    with httpx.Client(base_url=server.url, timeout=120) as client:
        ada_auth = {"Authorization": f"Bearer {ada}"}
        with client.stream("GET", "/notifications", headers=ada_auth) as stream:
            cursor = _events(stream.iter_lines(), 1)[0][0]
        assert cursor is not None
        reply = client.get(
            "/notifications", params={"cursor": cursor}, headers={"Authorization": f"Bearer {bob}"}
        )
    assert reply.status_code == 400
    assert "not one this service handed out to this token" in reply.json()["detail"]


def test_a_chosen_set_of_another_principals_subscription_is_a_404(server: Server) -> None:
    ada, bob = _token(server), _token(server)
    (theirs,) = _subscribe(server, ada, 1)
    auth = {"Authorization": f"Bearer {bob}"}
    reply = httpx.get(f"{server.url}/notifications?subscriptions={theirs}", headers=auth)
    assert reply.status_code == 404
    assert reply.json() == {"error": "not_found", "detail": f"no subscription {theirs!r}"}


def test_more_subscriptions_than_a_stream_carries_is_a_422(server: Server) -> None:
    token = _token(server)
    _subscribe(server, token, 6)  # --max-stream-subscriptions 5
    reply = httpx.get(f"{server.url}/notifications", headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 422
    assert "max_stream_subscriptions" in reply.json()["detail"]


def test_a_subscription_registered_later_joins_the_all_stream(server: Server) -> None:
    token = _token(server)
    (first,) = _subscribe(server, token, 1)
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, headers=auth, timeout=120) as client:
        with client.stream("GET", "/notifications") as stream:
            lines = stream.iter_lines()
            (second,) = _subscribe(server, token, 1)
            added = _events(lines, 1)
            assert added[0][1:] == ("subscriptions", json.dumps({"added": [second]}))
            _publish(server)
            events = _events(lines, 2)
    assert _seqs(events) == {first: [1], second: [1]}


def _ws(server: Server, token: str, query: str) -> ClientConnection:
    url = server.url.replace("http://", "ws://") + f"/notifications/ws?token={token}&{query}"
    return connect(url, open_timeout=120)


def _next(ws: ClientConnection, kind: str) -> dict[str, object]:
    while True:
        message = json.loads(ws.recv(timeout=120))
        if message["type"] == kind:
            return message  # type: ignore[no-any-return]


def test_websocket_subscribe_and_unsubscribe_on_the_open_connection(server: Server) -> None:
    token, other = _token(server), _token(server)
    first, second = _subscribe(server, token, 2)
    (theirs,) = _subscribe(server, other, 1)
    with _ws(server, token, "subscriptions=") as ws:  # an empty set to start with
        ws.send(json.dumps({"type": "subscribe", "subscriptions": [first], "id": 1}))
        assert _next(ws, "subscribed") == {"type": "subscribed", "subscriptions": [first], "id": 1}
        _publish(server)
        note = _next(ws, "notification")["notification"]
        assert (note["subscription"], note["id"]) == (first, 1)  # type: ignore[index]
        ws.send("{not json")
        assert _next(ws, "error")["error"] == "bad_request"
        ws.send(json.dumps({"type": "subscribe", "subscriptions": [theirs], "id": "x"}))
        assert _next(ws, "error") == {
            "type": "error",
            "error": "not_found",
            "detail": f"no subscription {theirs!r}",
            "id": "x",
        }
        ws.send(json.dumps({"type": "unsubscribe", "subscriptions": [first]}))
        assert _next(ws, "unsubscribed")["subscriptions"] == [first]
        ws.send(json.dumps({"type": "subscribe", "subscriptions": [second]}))
        assert _next(ws, "subscribed")["subscriptions"] == [second]
        _publish(server)
        got = [_next(ws, "notification")["notification"] for _ in range(2)]
    # the second replays from its start; the first is no longer carried
    assert [(n["subscription"], n["id"]) for n in got] == [(second, 1), (second, 2)]  # type: ignore[index]


def test_websocket_messages_are_bounded_in_size_and_rate(server: Server) -> None:
    token = _token(server)
    with _ws(server, token, "subscriptions=") as ws:
        ws.send("x" * (300 * 1024))
        with pytest.raises(ConnectionClosed) as closed:
            _next(ws, "never")
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with _ws(server, token, "subscriptions=") as ws:
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(200):
                ws.send(json.dumps({"type": "unsubscribe", "subscriptions": []}))
            _next(ws, "never")
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429


def test_a_backlog_replays_in_pages_beside_live_subscriptions(server: Server) -> None:
    token = _token(server)
    subs = _subscribe(server, token, 2)
    store_backlog(server, subs[0], 450)  # three pages of 200
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, headers=auth, timeout=120) as client:
        with client.stream("GET", f"/notifications?subscriptions={','.join(subs)}") as stream:
            lines = stream.iter_lines()
            replayed = _events(lines, 450)
            _publish(server)
            live = _events(lines, 2)
    assert _seqs(replayed) == {subs[0]: list(range(1, 451))}
    assert _seqs(live) == {subs[0]: [451], subs[1]: [1]}


def test_the_clients_read_the_stream_and_resume_from_its_cursor(server: Server) -> None:
    token = _token(server)
    subs = _subscribe(server, token, 2)
    _publish(server, 2)
    with Client(server.url, token) as client:
        position = MuxPosition()
        stream = client.stream(subs, position=position)
        got = [(n.subscription, n.seq) for _, n in zip(range(4), stream, strict=False)]
        stream.close()  # type: ignore[attr-defined]
    assert sorted(got) == [(subs[0], 1), (subs[0], 2), (subs[1], 1), (subs[1], 2)]
    assert position.cursor is not None
    _publish(server)

    async def rest() -> list[tuple[str, int]]:
        async with AsyncClient(server.url, token) as client:
            stream = client.stream(subs, cursor=position.cursor, via="websocket")
            seen = []
            async for note in stream:
                seen.append((note.subscription, note.seq))
                if len(seen) == 2:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
            return seen

    assert sorted(asyncio.run(rest())) == [(subs[0], 3), (subs[1], 3)]


def test_a_revoked_token_ends_the_stream_with_the_reason(server: Server, tmp_path: Path) -> None:
    with server.client("admin") as admin:
        made = admin.post("/tokens", json={"role": "subscriber"}).json()
    auth = {"Authorization": f"Bearer {made['token']}"}
    with httpx.Client(base_url=server.url, headers=auth, timeout=120) as client:
        with client.stream("GET", "/notifications") as stream:
            with server.client("admin") as admin:
                assert admin.delete(f"/tokens/{made['id']}").status_code == 204
            (end,) = _events(stream.iter_lines(), 1)
    assert end[1] == "end" and json.loads(end[2])["error"] == "unauthorized"
