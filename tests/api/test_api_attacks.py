"""Issue 38's attacks on a real ``semps serve``, as an admin, as an unauthenticated client and
as one tenant against another: each is refused with its 4xx (or contained), nothing of it is
applied, the service keeps answering, no tenant reads another's data, and no secret reaches
the log. Timings are the benchmark's (bench/noisy.py); these tests assert behaviour only,
and wait on events (a stream's next line, a status), never on a fixed time."""

from __future__ import annotations

import json
import resource
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from semps_test_support import PATIENCE, Server, diamonds, wait_for
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from semps.api.server import Server as HTTPServer
from semps.limits import Limits

pytestmark = [pytest.mark.server, pytest.mark.slow]

EX = "http://ex/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
NT = {"Content-Type": "application/n-triples"}
ANY = f"SELECT ?s WHERE {{ ?s <{EX}p> ?o }}"


def chain(links: int) -> bytes:
    return "\n".join(
        f"<{EX}C{i}> <{RDFS}subClassOf> <{EX}C{i + 1}> ." for i in range(links)
    ).encode()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("attacks") / "data", extra=("--header-timeout", "2"))
    yield server
    server.stop()


def healthy(srv: Server) -> None:
    assert httpx.get(srv.url + "/health", timeout=None).status_code == 200


def raw(srv: Server, request: bytes) -> bytes:
    """Send ``request`` on a new connection; what the server answers before it closes."""
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        try:
            s.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before all of it was read: the answer is still there
        chunks = []
        try:
            while chunk := s.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass
        return b"".join(chunks)


def status_and_body(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


# -- 1: an ontology edit that would wedge the broker --------------------------------------


def test_a_20000_deep_chain_is_refused_and_nothing_of_it_applied(srv: Server) -> None:
    with srv.client("admin") as admin, srv.client("publisher") as pub:
        admin.put("/ontology", content=chain(3), headers=NT).raise_for_status()
        before = admin.get("/ontology", headers={"Accept": "text/turtle"}).text
        reply = admin.put("/ontology", content=chain(20_000), headers=NT)
        assert (reply.status_code, reply.json()["error"]) == (422, "limit_exceeded")
        assert "(max_hierarchy_depth)" in reply.json()["detail"]
        assert admin.get("/ontology", headers={"Accept": "text/turtle"}).text == before
        event = f"<{EX}a> <{EX}p> <{EX}b> .".encode()
        assert pub.post("/events", content=event, headers=NT).status_code == 202
    healthy(srv)


def test_get_ontology_shows_no_anonymous_ontology(srv: Server) -> None:
    with srv.client("subscriber") as sub:
        text = sub.get("/ontology", headers={"Accept": "text/turtle"}).text
    assert "anonymous" not in text and "urn:semps:ontology" not in text


# -- 2, 9: request heads, slow and idle connections ---------------------------------------


@pytest.mark.parametrize(
    ("request_bytes", "status", "detail"),
    [
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (4 << 20) + b"\r\n\r\n",
            431,
            "the request's header fields are over the limit of 32768 bytes (max_header_bytes)",
        ),
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\n"
            + b"".join(b"X-%d: 1\r\n" % i for i in range(101))
            + b"\r\n",
            431,
            "the request has more than the limit of 100 header fields (max_headers)",
        ),
        (
            b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            414,
            "the request line is over the limit of 8192 bytes (max_request_line)",
        ),
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\n",  # and then nothing: a slow head
            408,
            "the request head did not arrive within 2 s (header_timeout)",
        ),
    ],
    ids=["4-mib-header", "101-headers", "9000-byte-request-line", "unfinished-head"],
)
def test_a_bad_request_head_is_refused_logged_and_answered_with_its_status(
    srv: Server, request_bytes: bytes, status: int, detail: str
) -> None:
    got, body = status_and_body(raw(srv, request_bytes))
    assert (got, body["detail"]) == (status, detail)
    assert wait_for(lambda: f"({status}): {detail}" in srv.log.read_text())
    healthy(srv)


def test_a_connection_that_sends_nothing_is_closed_and_logged(srv: Server) -> None:
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        assert s.recv(100) == b""  # the server closed it (after header_timeout)
    assert wait_for(lambda: "no request in 2 s (header_timeout)" in srv.log.read_text())


def test_1100_idle_connections_under_a_1024_file_limit_leave_the_service_answering(
    tmp_path: Path,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this test's own 1,100 sockets need a file limit of 1,300 (hard: {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    server = Server(tmp_path / "data", nofile=1024)
    sockets: list[socket.socket] = []
    try:
        for _ in range(1100):
            sockets.append(socket.create_connection(("127.0.0.1", server.port)))
        for _ in range(3):
            healthy(server)
        with server.client("publisher") as pub:
            reply = pub.post("/events", content=f"<{EX}a> <{EX}p> <{EX}b> .".encode(), headers=NT)
            assert reply.status_code == 202
        log = server.log.read_text()
        assert "max_connections lowered from 4096" in log
        assert "to make room" in log
    finally:
        for s in sockets:
            s.close()
        server.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _from(address: str, port: int) -> socket.socket:
    """A connection to the server from the loopback ``address`` (another client address
    than the test's own 127.0.0.1)."""
    s = socket.socket()
    s.bind((address, 0))
    s.connect(("127.0.0.1", port))
    return s


def _status_line(s: socket.socket) -> bytes:
    """The first line the server sends on ``s``."""
    line = b""
    while not line.endswith(b"\r\n") and (byte := s.recv(1)):
        line += byte
    return line


def test_a_request_body_that_trickles_is_refused_after_body_timeout(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--body-timeout", "1")) as server:
        head = (
            "POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/n-triples\r\n"
            f"Authorization: Bearer {server.tokens['publisher']}\r\nContent-Length: 1000\r\n\r\n"
        )
        got, body = status_and_body(raw(server, head.encode() + f"<{EX}a> ".encode()))
        detail = "the request body did not arrive within 1 s (body_timeout)"
        assert (got, body["detail"]) == (408, detail)
        assert wait_for(lambda: f"(408): {detail}" in server.log.read_text())
        healthy(server)


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[Server]:
    """A server that keeps a request head waiting as long as a test may run, closes a
    kept-alive connection after 1 s idle and lets one client address hold 3 connections."""
    extra = ("--header-timeout", str(PATIENCE), "--idle-timeout", "1")
    with Server(tmp_path / "data", extra=(*extra, "--max-client-connections", "3")) as server:
        yield server


def test_a_kept_alive_connection_is_closed_after_idle_timeout(capped: Server) -> None:
    with socket.create_connection(("127.0.0.1", capped.port)) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _status_line(s) == b"HTTP/1.1 200 OK\r\n"
        while s.recv(65536):  # the rest of the answer, then the server closes the connection
            pass


def test_the_idle_timeout_is_the_one_uvicorn_keeps_alive_by() -> None:
    """The test above cannot tell ``--idle-timeout`` from uvicorn's own default (5 s) by
    waiting: the setting must reach uvicorn."""
    context = SimpleNamespace(streams=None)
    app = SimpleNamespace(state=SimpleNamespace(context=context))
    server = HTTPServer.of(app, limits=Limits(idle_timeout=7.5))
    assert server.config.timeout_keep_alive == 7.5


def test_one_address_past_max_client_connections_loses_its_oldest_idle_connection(
    capped: Server,
) -> None:
    """Past 3 connections from 127.0.0.2, the oldest that has sent nothing is closed to make
    room; once its 3 are all busy with a request, a fourth is refused with 429; another
    address is not held to 127.0.0.2's connections."""
    with capped.client("subscriber") as sub:
        sub_id = sub.post("/subscriptions", content=ANY).json()["id"]
    first, *rest = [_from("127.0.0.2", capped.port) for _ in range(4)]
    try:
        assert first.recv(100) == b""  # closed to make room for the fourth
        assert wait_for(
            lambda: (
                "to make room: 127.0.0.2 has 3 open connections (max_client_connections)"
                in capped.log.read_text()
            )
        )
        token = capped.tokens["subscriber"]
        stream = (
            f"GET /subscriptions/{sub_id}/notifications HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        ).encode()
        for s in rest:  # each busy with a request: none may go
            s.sendall(stream)
            assert _status_line(s) == b"HTTP/1.1 200 OK\r\n"
        with _from("127.0.0.2", capped.port) as fifth:
            got, body = status_and_body(b"".join(iter(lambda: fifth.recv(65536), b"")))
        detail = "127.0.0.2 already has 3 open connections, the limit (max_client_connections)"
        assert (got, body["detail"]) == (429, detail)
        assert wait_for(lambda: f"(429): {detail}" in capped.log.read_text())
        healthy(capped)  # from 127.0.0.1
    finally:
        first.close()
        for s in rest:
            s.close()


def _get_health(s: socket.socket) -> None:
    """``GET /health`` on ``s`` (kept alive), its whole answer read."""
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
        chunk = s.recv(65536)
        assert chunk, answer
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")


def _kept_alive_from(address: str, port: int) -> socket.socket | None:
    """A connection from ``address`` that asked for /health and is kept alive, or None
    when the server refused it (its answer read)."""
    s = _from(address, port)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    if _status_line(s) == b"HTTP/1.1 200 OK\r\n":
        while not s.recv(65536).endswith(b"}"):  # the rest of the answer
            pass
        return s
    s.close()
    return None


def test_connections_kept_alive_between_requests_make_room_for_a_lighter_address(
    tmp_path: Path,
) -> None:
    """127.0.0.3 opens connections that each ask for /health and wait, kept alive, until it
    is refused one (all 16 slots taken, none of them idle): a newcomer from 127.0.0.6 is
    not refused, one of 127.0.0.3's connections is closed for it, the one waiting longest."""
    extra = ("--header-timeout", str(PATIENCE), "--idle-timeout", str(PATIENCE))
    with Server(tmp_path / "data", extra=(*extra, "--max-connections", "16")) as server:
        kept: list[socket.socket] = []
        try:
            while (s := _kept_alive_from("127.0.0.3", server.port)) is not None:
                kept.append(s)
            with _from("127.0.0.6", server.port) as newcomer:
                _get_health(newcomer)  # 503 overloaded before
            assert kept[0].recv(100) == b""  # closed for it
            for s in kept[1:]:
                _get_health(s)  # the others still serve
            assert wait_for(
                lambda: (
                    "the most" in server.log.read_text()
                    and "refused a request from 127.0.0.3" in server.log.read_text()
                )
            )
        finally:
            for s in kept:
                s.close()


def test_past_max_connections_the_address_holding_the_most_makes_room(tmp_path: Path) -> None:
    """16 connections in all: one from 127.0.0.5 that has sent nothing yet, then fifteen
    from 127.0.0.4; a newcomer from 127.0.0.6 takes the place of one of 127.0.0.4's, not of
    the oldest connection, 127.0.0.5's."""
    extra = ("--header-timeout", str(PATIENCE), "--idle-timeout", str(PATIENCE))
    with Server(tmp_path / "data", extra=(*extra, "--max-connections", "16")) as server:
        light = _from("127.0.0.5", server.port)
        heavy: list[socket.socket] = []
        try:
            heavy += [_from("127.0.0.4", server.port) for _ in range(15)]
            with _from("127.0.0.6", server.port) as newcomer:
                _get_health(newcomer)
            _get_health(light)  # still open
            assert heavy[0].recv(100) == b""  # closed for the newcomer
            most = "of them 127.0.0.4's, the most"
            assert wait_for(lambda: most in server.log.read_text())
        finally:
            for s in [light, *heavy]:
                s.close()


# -- 10: secrets in the log ---------------------------------------------------------------


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_tokens_never_reach_the_log(tmp_path: Path, log_format: str) -> None:
    extra = ("--access-log", "--log-format", log_format)
    with Server(tmp_path / "data", extra=extra) as server:
        token = server.tokens["subscriber"]
        with server.client("subscriber") as sub:
            sub_id = sub.post("/subscriptions", content=ANY).json()["id"]
        with connect(f"ws://127.0.0.1:{server.port}/subscriptions/{sub_id}/ws?token={token}"):
            pass
        httpx.get(server.url + f"/health?token={token}", headers={"X-Note": token})
        httpx.get(server.url + "/subscriptions", headers={"Authorization": "Bearer nope-guess"})
        assert wait_for(lambda: "WebSocket" in server.log.read_text())
        assert wait_for(lambda: "refused a bearer token" in server.log.read_text())
        log = server.log.read_text()
        assert "token=[redacted]" in log
        for secret in (*server.tokens.values(), "nope-guess"):
            assert secret not in log


def test_token_guesses_are_limited_and_logged_and_a_good_token_still_works(
    tmp_path: Path,
) -> None:
    with Server(tmp_path / "data") as server:
        with server.client("subscriber") as good:
            assert good.get("/subscriptions").status_code == 200
            statuses = []
            for i in range(25):
                guess = {"Authorization": f"Bearer guess-{i}"}
                statuses.append(httpx.get(server.url + "/subscriptions", headers=guess).status_code)
            assert statuses == [401] * 19 + [429] * 6
            assert good.get("/subscriptions").status_code == 200  # it authenticated lately
        log = server.log.read_text()
        assert log.count("refused a bearer token from 127.0.0.1") == 20
        assert "refusing bearer tokens from 127.0.0.1" in log


# -- 3, 4, 6: composites --------------------------------------------------------------------


def test_a_failed_composite_registration_leaves_no_ghost_and_no_id_is_reissued(
    tmp_path: Path,
) -> None:
    with Server(tmp_path / "data") as server:
        with server.client("subscriber") as ann, server.client("publisher") as pub:
            for name in ("pa", "pb", "pc"):
                text = f"SELECT ?s WHERE {{ ?s <{EX}{name}> ?o }}"
                ann.post("/subscriptions", params={"name": name}, content=text).raise_for_status()
            text = (
                "create event kk = pa or pb;\n"
                "create event kk2 = 99999999999999999999 times pb in pa, pc;"
            )
            reply = ann.post("/subscriptions", params={"kind": "composite"}, content=text)
            assert (reply.status_code, reply.json()["error"]) == (400, "bad_request")
            assert reply.json()["line"] == 2
            assert "times is more than the largest count" in reply.json()["detail"]
            listed = [s["id"] for s in ann.get("/subscriptions").json()["items"]]
            pub.post("/events", content=f"<{EX}a> <{EX}pa> <{EX}b> .".encode(), headers=NT)
        server.stop()
        server.start()
        with server.another("subscriber") as other:
            new_id = other.post("/subscriptions", content=ANY).json()["id"]
            assert new_id not in listed
            notes = other.get(f"/subscriptions/{new_id}/notifications?once=true").text
            assert "data:" not in notes  # nothing of ann's, under any id
            ids = [int(i.split("-")[1]) for i in [*listed, new_id]]
            assert max(ids[:-1]) + 1 < ids[-1]  # the refused registration's id is spent


def test_composite_names_never_meet_across_tenants_whatever_they_hold(tmp_path: Path) -> None:
    """``team:red``'s composite over its ``pa`` is not fed by ``team``'s subscription named
    ``red:pa`` (joined with ':' the two spelled the same)."""
    with Server(tmp_path / "data") as server:
        team, red = server.another("subscriber", "team"), server.another("subscriber", "team:red")
        with team as t, red as r, server.client("publisher") as pub:
            t.post("/subscriptions", params={"name": "red:pa"}, content=ANY).raise_for_status()
            for name in ("pa", "pb"):
                text = f"SELECT ?s WHERE {{ ?s <{EX}{name}> ?o }}"
                r.post("/subscriptions", params={"name": name}, content=text).raise_for_status()
            composite = r.post(
                "/subscriptions",
                params={"kind": "composite"},
                content="create event both = pa or pb;",
            ).json()["id"]
            pub.post("/events", content=f"<{EX}a> <{EX}p> <{EX}b> .".encode(), headers=NT)
            assert "data:" not in r.get(f"/subscriptions/{composite}/notifications?once=true").text
            pub.post("/events", content=f"<{EX}a> <{EX}pa> <{EX}b> .".encode(), headers=NT)
            notes = r.get(f"/subscriptions/{composite}/notifications?once=true").text
            assert notes.count("data:") == 1


def _six_chained_ors(sub: httpx.Client) -> httpx.Response:
    """Subscriptions ``a`` and ``b``, then the answer to registering ``x0 = a or b`` and
    ``x{i} = x{i-1} or b`` up to ``x5`` (an ``a`` fires all six)."""
    for name in ("a", "b"):
        text = f"SELECT ?s WHERE {{ ?s <{EX}{name}> ?o }}"
        sub.post("/subscriptions", params={"name": name}, content=text).raise_for_status()
    text = "\n".join(
        ["create event x0 = a or b;"] + [f"create event x{i} = x{i - 1} or b;" for i in range(1, 6)]
    )
    return sub.post("/subscriptions", params={"kind": "composite"}, content=text)


def test_a_subscribers_composite_definitions_are_bounded(tmp_path: Path) -> None:
    with Server(tmp_path / "data", extra=("--max-definitions", "5")) as server:
        with server.client("subscriber") as sub:
            reply = _six_chained_ors(sub)
            assert (reply.status_code, reply.json()["error"]) == (422, "limit_exceeded")
            assert reply.json()["detail"].endswith("over the limit of 5 (max_definitions)")


def test_the_detections_one_event_causes_are_bounded(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", extra=("--max-detections", "3"))
    try:
        with server.client("subscriber") as sub, server.client("publisher") as pub:
            composite = _six_chained_ors(sub).json()["id"]  # an `a`: six detections
            pub.post("/events", content=f"<{EX}s> <{EX}a> <{EX}o> .".encode(), headers=NT)
            notes = sub.get(f"/subscriptions/{composite}/notifications?once=true").text
            found = [
                json.loads(line[5:])["detail"]["composite"]
                for line in notes.splitlines()
                if line.startswith("data:")
            ]
            assert found == ["x0", "x1", "x2"]
    finally:
        server.stop()


def _detections(sub: httpx.Client, composite: str) -> list[str]:
    notes = sub.get(f"/subscriptions/{composite}/notifications?once=true").text
    return [
        json.loads(line[5:])["detail"]["composite"]
        for line in notes.splitlines()
        if line.startswith("data:")
    ]


def test_one_tenant_flooding_detections_leaves_another_tenant_s_detection(tmp_path: Path) -> None:
    """Three tenants whose definitions make 2**20 detections of one event, and tenant B
    with one composite over the same event: B's detection is delivered, and each flooding
    tenant is held to its share (--max-detections 12 split between the 4 owners: 3)."""
    extra = ("--max-detections", "12")
    with Server(tmp_path / "data", extra=extra) as server, server.client("publisher") as pub:
        attackers = [server.another("subscriber", f"mallory{i}") for i in range(3)]
        floods = []
        for client in attackers:
            for name in ("a", "b", "c"):
                text = f"SELECT ?s WHERE {{ ?s <{EX}{name}> ?o }}"
                client.post(
                    "/subscriptions", params={"name": name}, content=text
                ).raise_for_status()
            reply = client.post(
                "/subscriptions", params={"kind": "composite"}, content=diamonds(20)
            )
            assert reply.status_code == 201, reply.text
            floods.append(reply.json()["id"])
        with server.another("subscriber", "bob") as bob:
            for name in ("a", "b"):
                text = f"SELECT ?s WHERE {{ ?s <{EX}{name}> ?o }}"
                bob.post("/subscriptions", params={"name": name}, content=text).raise_for_status()
            mine = bob.post(
                "/subscriptions", params={"kind": "composite"}, content="create event x = a or b;"
            ).json()["id"]

            published = pub.post(
                "/events", content=f"<{EX}s> <{EX}a> <{EX}o> .".encode(), headers=NT
            )
            assert published.status_code == 202

            assert wait_for(lambda: _detections(bob, mine) == ["x"])
        for client, composite in zip(attackers, floods, strict=True):
            assert wait_for(lambda c=client, f=composite: len(_detections(c, f)) == 3)
            client.close()


# -- 5, 11: streams end when their token or subscription goes ----------------------------


def test_an_sse_stream_ends_when_its_token_is_revoked_with_a_last_event_saying_why(
    srv: Server,
) -> None:
    token = srv._token("subscriber", "revokee")
    with srv.client("admin") as admin:
        token_id = next(t["id"] for t in admin.get("/tokens").json() if t["subject"] == "revokee")
        with srv.bearer(token) as sub:
            sub_id = sub.post("/subscriptions", content=ANY).json()["id"]
            with sub.stream("GET", f"/subscriptions/{sub_id}/notifications") as stream:
                lines = stream.iter_lines()
                assert next(lines) == ": keep-alive"  # the stream is open
                admin.delete(f"/tokens/{token_id}").raise_for_status()
                rest = list(lines)  # ends by itself
    assert "event: end" in rest
    data = json.loads(next(line for line in rest if line.startswith("data: "))[6:])
    assert data == {"error": "unauthorized", "detail": "unknown, expired or revoked bearer token"}


def test_a_websocket_ends_when_its_token_is_revoked(srv: Server) -> None:
    token = srv._token("subscriber", "ws-revokee")
    with srv.client("admin") as admin:
        token_id = next(
            t["id"] for t in admin.get("/tokens").json() if t["subject"] == "ws-revokee"
        )
        with srv.bearer(token) as sub:
            sub_id = sub.post("/subscriptions", content=ANY).json()["id"]
        url = f"ws://127.0.0.1:{srv.port}/subscriptions/{sub_id}/ws?token={token}"
        with connect(url) as ws:
            admin.delete(f"/tokens/{token_id}").raise_for_status()
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv()
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4401
    assert closed.value.rcvd.reason == "unknown, expired or revoked bearer token"


def _expiring(srv: Server, admin: httpx.Client, seconds: int) -> tuple[str, str]:
    """A subscriber token that expires in ``seconds``, and a subscription of its own."""
    made = admin.post(
        "/tokens", json={"role": "subscriber", "subject": "expiring", "expires_in": seconds}
    ).json()
    with srv.bearer(made["token"]) as sub:
        reply = sub.post("/subscriptions", content=ANY)
    return made["token"], reply.json()["id"] if reply.status_code == 201 else ""


def test_sse_and_websocket_streams_end_when_their_token_expires(srv: Server) -> None:
    """A token that expires in a few seconds: its streams, open before, end with the error.
    (A machine too slow to open them in that time tries again with twice as many.)"""
    seconds, sse, ws_closed = 4, [""], None
    with srv.client("admin") as admin:
        while "event: end" not in sse:
            seconds *= 2
            token, sub_id = _expiring(srv, admin, seconds)
            url = f"ws://127.0.0.1:{srv.port}/subscriptions/{sub_id}/ws?token={token}"
            with srv.bearer(token) as sub:
                with sub.stream("GET", f"/subscriptions/{sub_id}/notifications") as stream:
                    if stream.status_code != 200:
                        continue  # expired before it opened
                    try:
                        ws = connect(url, open_timeout=None)
                    except InvalidStatus:
                        continue  # expired before it opened
                    with ws:
                        sse = list(stream.iter_lines())  # ends by itself
                        with pytest.raises(ConnectionClosed) as closed:
                            ws.recv()
                        ws_closed = closed.value.rcvd
    data = json.loads(next(line for line in sse if line.startswith("data: "))[6:])
    assert data == {"error": "unauthorized", "detail": "unknown, expired or revoked bearer token"}
    assert ws_closed is not None
    assert (ws_closed.code, ws_closed.reason) == (4401, "unknown, expired or revoked bearer token")


def test_an_sse_stream_on_a_deleted_subscription_ends_and_frees_its_slot(
    tmp_path: Path,
) -> None:
    with Server(tmp_path / "data", extra=("--max-streams", "1")) as server:
        with server.client("subscriber") as sub:
            first = sub.post("/subscriptions", content=ANY).json()["id"]
            second = sub.post("/subscriptions", content=ANY).json()["id"]
            with sub.stream("GET", f"/subscriptions/{first}/notifications") as stream:
                lines = stream.iter_lines()
                assert next(lines) == ": keep-alive"
                assert sub.get(f"/subscriptions/{second}/notifications").status_code == 429
                assert sub.delete(f"/subscriptions/{first}").status_code == 204
                rest = list(lines)
            assert "event: end" in rest
            assert any('"error": "not_found"' in line for line in rest)
            with sub.stream("GET", f"/subscriptions/{second}/notifications") as again:
                assert again.status_code == 200  # the slot is free
