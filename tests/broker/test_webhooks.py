"""The webhook dispatcher against real local endpoints: every failure path ends in retries
then a dead letter, redirects are checked, one request in flight per subscription in seq
order."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from semps_test_support import PATIENCE, LocalServer, QuietHandler, wait_for

from semps.broker.callbacks import CallbackPolicy
from semps.broker.sqlite_store import SQLiteStore
from semps.broker.webhooks import WebhookDispatcher, signature


class Endpoint(LocalServer):
    """A local HTTP server whose paths answer differently (``/ok``, ``/fail``, redirects,
    ``/hang``), recording what it got and how many requests overlapped per path."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, str], bytes]] = []
        self.busy: dict[str, int] = {}
        self.overlap = 0
        self.release = threading.Event()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.body()
                path = self.path
                outer.busy[path] = outer.busy.get(path, 0) + 1
                outer.overlap = max(outer.overlap, outer.busy[path])
                try:
                    outer.answer(self, path, body)
                finally:
                    outer.busy[path] -= 1

        super().__init__(Handler)

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: bytes) -> None:
        redirects = {
            "/to-ok": "/ok",
            "/to-metadata": "http://169.254.169.254/latest/meta-data/",
            "/loop": "/loop",
        }
        if path == "/hang":  # no answer until the test ends
            self.release.wait()
            return
        if path in redirects:
            handler.send_response(307)
            handler.send_header("Location", redirects[path])
        else:
            if path.startswith("/ok"):
                self.got.append((path, dict(handler.headers), body))
                time.sleep(0.02)  # long enough to see two requests overlap, if they did
            handler.send_response(204 if path.startswith("/ok") else 500)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def close(self) -> None:
        self.release.set()
        super().close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    ep = Endpoint()
    yield ep
    ep.close()


def _subscribe(store: SQLiteStore, sub: str, url: str, notes: int = 1) -> str:
    secret = store.set_webhook(sub, url)
    for i in range(notes):
        store.add_notifications(f"ev-{sub}-{i}", [(sub, {"subscription": sub})])
    return secret


def test_every_failure_ends_in_the_dead_letters(tmp_path: Path, endpoint: Endpoint) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    base = endpoint.url
    cases = {
        "fail": (f"{base}/fail", "HTTP 500"),
        "meta": (
            f"{base}/to-metadata",
            "UnsafeCallback: refused callback to 169.254.169.254: a link-local address "
            "(see --webhook-allow)",
        ),
        "loop": (f"{base}/loop", "TooManyRedirects: more than 5 redirects"),
        "nul": (
            f"{base}/%00",
            f"UnsafeCallback: callback URL contains a control character or space: '{base}/%00'",
        ),
        "creds": (
            base.replace("http://", "http://user:pw@") + "/ok",
            "UnsafeCallback: callback URL must not carry credentials (user:password@)",
        ),
        "closed": ("http://127.0.0.1:9/ok", "ConnectError: "),
    }
    for sub, (url, _) in cases.items():
        _subscribe(store, sub, url)  # stored as it was (a database from before the guard)
    secret = _subscribe(store, "good", f"{base}/to-ok", notes=2)
    policy = CallbackPolicy(["127.0.0.1/32"])
    # No attempt here may end by its time-out (a loaded machine is slow, not failing): that
    # failure has its own test, with an endpoint that never answers.
    hooks = WebhookDispatcher(store, attempts=2, backoff=0.01, timeout=PATIENCE, policy=policy)
    try:
        hooks.wake()
        assert wait_for(lambda: len(store.dead_letters()) == len(cases))
        assert wait_for(lambda: len(endpoint.got) == 2)
        assert wait_for(lambda: store.webhook_backlog() == 0)  # the last delivery's record
    finally:
        hooks.close()
    letters = {d.subscription: d for d in store.dead_letters()}
    for sub, (_, error) in cases.items():
        assert letters[sub].error.startswith(error), (sub, letters[sub].error)
        assert letters[sub].attempts == 2
    # The redirect was followed with the same signed body.
    (path, headers, body), _ = endpoint.got
    assert path == "/ok"
    assert headers["X-Semps-Signature"] == signature(secret, body)
    assert headers["X-Semps-Delivery"] == "good/1"
    assert json.loads(body).items() >= {"subscription": "good", "id": 1}.items()


def test_a_callback_that_never_answers_ends_in_the_dead_letters_by_its_time_out(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    _subscribe(store, "hang", f"{endpoint.url}/hang")  # answers only when the test ends
    policy = CallbackPolicy(["127.0.0.1/32"])
    hooks = WebhookDispatcher(store, attempts=2, backoff=0.01, timeout=0.5, policy=policy)
    try:
        hooks.wake()
        assert wait_for(lambda: len(store.dead_letters()) == 1)
    finally:
        hooks.close()
    (letter,) = store.dead_letters()
    assert letter.error == "Timeout: no answer within 0.5 s"
    assert letter.attempts == 2


def test_one_request_in_flight_per_subscription_in_seq_order(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    for sub in ("a", "b", "c"):
        _subscribe(store, sub, f"{endpoint.url}/ok-{sub}", notes=6)
    # An attempt that timed out while the endpoint was still answering would overlap its
    # retry: no attempt here may end by its time-out (a loaded machine is slow, not failing).
    policy = CallbackPolicy(["127.0.0.1"])
    hooks = WebhookDispatcher(store, policy=policy, timeout=PATIENCE)
    try:
        hooks.wake()
        assert wait_for(lambda: len(endpoint.got) == 18)
        for sub in ("a", "b", "c"):
            sent = [json.loads(b)["id"] for p, _, b in endpoint.got if p == f"/ok-{sub}"]
            assert sent == [1, 2, 3, 4, 5, 6]
        assert endpoint.overlap == 1
        assert wait_for(lambda: store.webhook_backlog() == 0)
        # New notifications after a wake-up are delivered too.
        store.add_notifications("ev-late", [("a", {"subscription": "a"})])
        hooks.wake()
        assert wait_for(lambda: len(endpoint.got) == 19)
    finally:
        hooks.close()


def test_many_subscriptions_on_one_hanging_host_leave_room_for_others(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    for i in range(20):
        _subscribe(store, f"stuck-{i}", f"{endpoint.url}/hang")
    healthy = Endpoint()
    _subscribe(store, "healthy", f"{healthy.url}/ok")
    policy = CallbackPolicy(["127.0.0.1"])
    hooks = WebhookDispatcher(store, policy=policy, timeout=PATIENCE, max_in_flight=8, per_host=4)
    try:
        hooks.wake()
        assert wait_for(lambda: len(healthy.got) == 1)
        assert wait_for(lambda: endpoint.overlap == 4)
        time.sleep(0.2)
        assert endpoint.overlap == 4  # never more than per_host on the hanging host
    finally:
        hooks.close()
        healthy.close()


def test_publishing_wakes_the_dispatcher_only_while_a_webhook_exists(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    woken: list[int] = []

    class Counted(WebhookDispatcher):
        def wake(self) -> None:
            woken.append(1)

    hooks = Counted(store)
    try:
        hooks.publish([("a", 1, "{}")])
        assert woken == []  # no webhook: nothing to read
        store.set_webhook("a", "https://example.org/a")
        hooks.publish([("a", 2, "{}")])
        assert woken == [1]
    finally:
        hooks.close()
        store.close()
