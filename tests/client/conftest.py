"""Fixtures of the client tests: one real `semps serve` per module with the demo's ontology,
clients for each role, and a TCP relay in front of the server whose connections a test can
cut (a forced disconnect, as a flaky network or a proxy restart would cause)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_support import Awaited, Relay
from semps_test_support import PATIENCE, Server

from semps.cli.demo import demo_dir
from semps.client import AsyncClient, Client


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real server with univ-bench loaded: at most 3 open streams per subscriber; webhooks
    may call this machine and give up after one attempt (dead letters come at once)."""
    extra = ("--max-streams", "3", "--webhook-allow", "127.0.0.1/32", "--webhook-attempts", "1")
    srv = Server(tmp_path_factory.mktemp("client") / "data", extra=extra)
    with Client(srv.url, srv.tokens["admin"]) as admin:
        admin.replace_ontology(demo_dir() / "univ-bench.owl")
    yield srv
    srv.stop()


@pytest.fixture
def relay(server: Server) -> Iterator[Relay]:
    r = Relay(server.port)
    yield r
    r.close()


@pytest.fixture
def admin(server: Server, connect: Any) -> Any:
    return connect(server.url, server.tokens["admin"])


@pytest.fixture
def publisher(server: Server, connect: Any) -> Any:
    return connect(server.url, server.tokens["publisher"])


@pytest.fixture
def subscriber_token(server: Server) -> str:
    """A subscriber of its own (a new token per test), so stream caps do not add up."""
    return server._token("subscriber")


@pytest.fixture
def subscriber(server: Server, connect: Any, subscriber_token: str) -> Any:
    return connect(server.url, subscriber_token)


@pytest.fixture(scope="session")
def demo() -> Path:
    return demo_dir()


@pytest.fixture(scope="session")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    ev = asyncio.new_event_loop()
    thread = threading.Thread(target=ev.run_forever, daemon=True)
    thread.start()
    yield ev
    ev.call_soon_threadsafe(ev.stop)
    thread.join(timeout=PATIENCE)
    ev.close()


@pytest.fixture(params=["sync", "async"])
def connect(request: pytest.FixtureRequest, loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """``connect(url, token, **options)`` -> a Client, or an AsyncClient behind
    :class:`Awaited`; closed after the test."""
    opened: list[Any] = []

    def make(url: str, token: str | None, **options: Any) -> Any:
        options.setdefault("timeout", PATIENCE)  # a loaded machine is slow, not wrong
        if request.param == "sync":
            client: Any = Client(url, token, **options)
        else:
            client = Awaited(AsyncClient(url, token, **options), loop)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()
