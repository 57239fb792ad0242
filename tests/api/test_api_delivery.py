"""Delivery channels on a real server: signed webhooks with retries and dead letters (a dead
or hanging endpoint delays no one else), the SSRF guard on callback URLs, and the WebSocket
stream with resume."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import PATIENCE, UNIV_BENCH, LocalServer, QuietHandler, Server, wait_for
from websockets.sync.client import connect

from semps.cli.demo import demo_dir

pytestmark = pytest.mark.server
UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
CHAIRS = UB + "SELECT ?who WHERE { ?who a ub:Chair }"
EVENT = (demo_dir() / "events" / "e1-new-chair.rdf").read_bytes()
RDFXML = {"Content-Type": "application/rdf+xml"}
RETRIES = ("--webhook-attempts", "3", "--webhook-backoff", "0.1")


class Receiver(LocalServer):
    """A real HTTP endpoint that records webhook deliveries."""

    def __init__(self, port: int = 0) -> None:
        received: list[tuple[dict[str, str], bytes]] = []
        self.received = received

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                received.append((dict(self.headers), self.body()))
                self.send_response(204)
                self.end_headers()

        super().__init__(Handler, port, "/hook")


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/gone"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    extra = (*RETRIES, "--webhook-allow", "127.0.0.1/32")
    with Server(tmp_path / "data", extra=extra, ontology=UNIV_BENCH) as srv:
        yield srv


def test_webhooks_are_signed_retried_and_dead_lettered(server: Server) -> None:
    live = Receiver()
    dead = _dead_url()
    try:
        with server.client("subscriber") as sub, server.client("publisher") as pub:
            dead_sub = sub.post("/subscriptions", content=CHAIRS, params={"callback": dead}).json()
            live_sub = sub.post(
                "/subscriptions", content=CHAIRS, params={"callback": live.url}
            ).json()
            for _ in range(3):
                assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202
        assert wait_for(lambda: len(live.received) == 3), "the live webhook was held up"
        for seq, (headers, body) in enumerate(live.received, start=1):
            expected = hmac.new(live_sub["secret"].encode(), body, hashlib.sha256).hexdigest()
            assert headers["X-Semps-Signature"] == f"sha256={expected}"
            assert json.loads(body)["id"] == seq
        with server.client("admin") as admin:
            assert wait_for(lambda: len(admin.get("/deadletters").json()["items"]) == 3)
            letters = admin.get("/deadletters").json()["items"]
            assert {d["subscription"] for d in letters} == {dead_sub["id"]}
            assert all(d["attempts"] == 3 for d in letters)
            # A replay goes to the recorded URL, which is still dead.
            replay = admin.post(f"/deadletters/{letters[0]['id']}/replay").json()
            assert replay["delivered"] is False
            assert "ConnectError" in replay["error"]
            with server.client("subscriber") as sub2:
                assert sub2.get("/deadletters").status_code == 403
    finally:
        live.close()


def test_a_dead_letter_replays_once_its_endpoint_is_back(server: Server) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/hook"
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        sub.post("/subscriptions", content=CHAIRS, params={"callback": url})
        pub.post("/events", content=EVENT, headers=RDFXML)
    with server.client("admin") as admin:
        assert wait_for(lambda: len(admin.get("/deadletters").json()["items"]) == 1)
        (letter,) = admin.get("/deadletters").json()["items"]
        back = Receiver(port)  # the endpoint comes back on the recorded URL
        try:
            assert admin.post(f"/deadletters/{letter['id']}/replay").json()["delivered"]
            assert json.loads(back.received[0][1])["id"] == letter["seq"]
            assert admin.get("/deadletters").json()["items"] == []
        finally:
            back.close()


def test_websocket_streams_and_resumes(server: Server) -> None:
    with server.client("subscriber") as sub, server.client("publisher") as pub:
        sub_id = sub.post("/subscriptions", content=CHAIRS).json()["id"]
        for _ in range(2):
            pub.post("/events", content=EVENT, headers=RDFXML)
    token = server.tokens["subscriber"]
    ws_url = server.url.replace("http://", "ws://") + f"/subscriptions/{sub_id}/ws"
    with connect(f"{ws_url}?token={token}", open_timeout=PATIENCE) as ws:
        assert [json.loads(ws.recv(timeout=PATIENCE))["id"] for _ in range(2)] == [1, 2]
    with connect(f"{ws_url}?token={token}&after=1", open_timeout=PATIENCE) as ws:
        assert json.loads(ws.recv(timeout=PATIENCE))["id"] == 2
        with server.client("publisher") as pub:
            pub.post("/events", content=EVENT, headers=RDFXML)
        assert json.loads(ws.recv(timeout=PATIENCE))["id"] == 3


class Hanging:
    """An endpoint that accepts connections and never answers; counts who is still waiting."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = 0
        self.gone = 0  # connections the client closed (it gave up waiting)
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        try:
            while conn.recv(65536):
                pass  # read the request, never answer
        except OSError:
            return
        self.gone += 1

    def close(self) -> None:
        self.sock.close()
        for conn in self._conns:
            conn.close()


def test_hanging_endpoints_do_not_delay_a_healthy_one(server: Server) -> None:
    hanging, live = [Hanging() for _ in range(10)], Receiver()
    try:
        with server.client("subscriber") as sub, server.client("publisher") as pub:
            for hang in hanging:
                hook = f"{hang.url}/hook"
                assert sub.post("/subscriptions", content=CHAIRS, params={"callback": hook})
            sub.post("/subscriptions", content=CHAIRS, params={"callback": live.url})
            for _ in range(2):
                assert pub.post("/events", content=EVENT, headers=RDFXML).status_code == 202
        # All ten hang at once (one request each: one in flight per subscription) while the
        # healthy endpoint gets both notifications, in order.
        assert wait_for(lambda: len(live.received) == 2 and all(h.accepted == 1 for h in hanging))
        assert sum(h.gone for h in hanging) == 0, "the healthy endpoint waited for the others"
        assert [json.loads(body)["id"] for _, body in live.received] == [1, 2]
    finally:
        for hang in hanging:
            hang.close()
        live.close()


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Server]:
    """A server with the default SSRF guard (no allow-list), for one test."""
    with Server(tmp_path / "data", extra=RETRIES, ontology=UNIV_BENCH) as srv:
        yield srv


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the default SSRF guard, shared by the refusals (each checks that
    nothing was registered, so they see the same empty server)."""
    data = tmp_path_factory.mktemp("refusing") / "data"
    with Server(data, extra=RETRIES, ontology=UNIV_BENCH) as srv:
        yield srv


#: Callback hosts that are not public, and what the refusal calls them.
NON_PUBLIC = [
    ("127.0.0.1", "127.0.0.1: a loopback"),
    ("0x7f000001", "127.0.0.1: a loopback"),
    ("2130706433", "127.0.0.1: a loopback"),
    ("0177.1", "127.0.0.1: a loopback"),
    ("0x7f.1", "127.0.0.1: a loopback"),
    ("127.0.0.1.", "127.0.0.1: a loopback"),
    ("[::1]", "::1: a loopback"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1: a loopback"),
    ("169.254.169.254", "169.254.169.254: a link-local"),
    ("10.1.2.3", "10.1.2.3: a private"),
    ("192.168.0.1", "192.168.0.1: a private"),
    ("[fd00::1]", "fd00::1: a private"),
    ("[fe80::1]", "fe80::1: a link-local"),
    ("0.0.0.0", "0.0.0.0: an unspecified"),
    ("224.0.0.1", "224.0.0.1: a multicast"),
]

#: Malformed callback URLs and their refusals.
MALFORMED = [
    (
        "http://example.com/%00hook",
        "callback URL contains a control character or space: 'http://example.com/%00hook'",
    ),
    ("http://user:pw@example.com/", "callback URL must not carry credentials (user:password@)"),
    ("ftp://example.com/", "callback must be an http(s) URL, not 'ftp://example.com/'"),
    ("http:///hook", "callback URL has no host: 'http:///hook'"),
]


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        *[
            (f"http://{host}/", f"refused callback to {what} address (see --webhook-allow)")
            for host, what in NON_PUBLIC
        ],
        *MALFORMED,
    ],
)
def test_unsafe_callbacks_are_refused_at_registration(
    refusing: Server, url: str, detail: str
) -> None:
    with refusing.client("subscriber") as sub:
        reply = sub.post("/subscriptions", content=CHAIRS, params={"callback": url})
        assert reply.status_code == 400
        assert reply.json() == {"error": "unsafe_callback", "detail": detail}
        assert sub.get("/subscriptions").json()["items"] == []  # nothing was registered


def test_the_brokers_own_port_is_refused(refusing: Server) -> None:
    with refusing.client("subscriber") as sub:
        reply = sub.post("/subscriptions", content=CHAIRS, params={"callback": refusing.url})
        assert sub.get("/subscriptions").json()["items"] == []  # nothing was registered
    assert reply.status_code == 400
    assert reply.json()["detail"].startswith("refused callback to 127.0.0.1: a loopback")


def test_a_name_that_resolves_to_loopback_is_refused_at_delivery(guarded: Server) -> None:
    """A host name (this machine's: not ``localhost``, which registration refuses) that
    resolves to a non-public address is refused when the webhook is called."""
    live = Receiver()
    name = socket.gethostname()
    url = live.url.replace("127.0.0.1", name)
    try:
        with guarded.client("subscriber") as sub, guarded.client("publisher") as pub:
            sub_id = sub.post("/subscriptions", content=CHAIRS, params={"callback": url}).json()
            pub.post("/events", content=EVENT, headers=RDFXML)
        with guarded.client("admin") as admin:
            assert wait_for(lambda: len(admin.get("/deadletters").json()["items"]) == 1)
            (letter,) = admin.get("/deadletters").json()["items"]
        assert letter["subscription"] == sub_id["id"]
        assert letter["attempts"] == 3
        assert letter["error"].startswith(f"UnsafeCallback: refused callback to {name} (")
        assert letter["error"].endswith(" address (see --webhook-allow)")
        assert live.received == []  # never called
    finally:
        live.close()
