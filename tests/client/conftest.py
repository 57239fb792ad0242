"""Fixtures of the client tests: one real `semps serve` per module with the demo's ontology,
clients for each role, and a TCP relay in front of the server whose connections a test can
cut (a forced disconnect, as a flaky network or a proxy restart would cause)."""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from semps_test_support import Server

from semps.cli.demo import demo_dir
from semps.client import AsyncClient, Client


class Relay:
    """A TCP relay to ``127.0.0.1:port``: :meth:`cut` drops every open connection (both
    sides); :attr:`requests` holds the first bytes each client sent (its request head)."""

    def __init__(self, port: int) -> None:
        self.port_upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: list[bytes] = []
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
                far = socket.create_connection(("127.0.0.1", self.port_upstream))
            except OSError:
                return
            with self._lock:
                self._open += [near, far]
            threading.Thread(target=self._pump, args=(near, far, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(far, near, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        first = record
        try:
            while data := src.recv(65536):
                if first:
                    with self._lock:
                        self.requests.append(data)
                    first = False
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        """Drop every connection open now."""
        with self._lock:
            doomed, self._open = self._open, []
        for s in doomed:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() in its thread
        except OSError:
            pass
        self.listener.close()
        self.cut()


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


class Awaited:
    """An :class:`~semps.client.AsyncClient` driven from plain test code through an event
    loop in another thread, so every behaviour test runs on both clients unchanged:
    coroutines are awaited, async iterators become iterators."""

    def __init__(self, client: AsyncClient, loop: asyncio.AbstractEventLoop) -> None:
        self._client, self._loop = client, loop

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=120)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if inspect.isawaitable(result):
                return self._run(result)
            if hasattr(result, "__anext__"):
                return _Iterated(self, result)
            return result

        return call

    def close(self) -> None:
        self._run(self._client.aclose())


class _Iterated:
    def __init__(self, owner: Awaited, it: Any) -> None:
        self.owner, self.it = owner, it

    def __iter__(self) -> _Iterated:
        return self

    def __next__(self) -> Any:
        async def step() -> tuple[bool, Any]:
            try:
                return True, await self.it.__anext__()
            except StopAsyncIteration:
                return False, None

        more, value = self.owner._run(step())
        if not more:
            raise StopIteration
        return value

    def close(self) -> None:
        self.owner._run(self.it.aclose())


@pytest.fixture(scope="session")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    ev = asyncio.new_event_loop()
    thread = threading.Thread(target=ev.run_forever, daemon=True)
    thread.start()
    yield ev
    ev.call_soon_threadsafe(ev.stop)
    thread.join(timeout=10)
    ev.close()


@pytest.fixture(params=["sync", "async"])
def connect(request: pytest.FixtureRequest, loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """``connect(url, token, **options)`` -> a Client, or an AsyncClient behind
    :class:`Awaited`; closed after the test."""
    opened: list[Any] = []

    def make(url: str, token: str | None, **options: Any) -> Any:
        if request.param == "sync":
            client: Any = Client(url, token, **options)
        else:
            client = Awaited(AsyncClient(url, token, **options), loop)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()
