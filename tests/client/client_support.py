"""Helpers of the client tests: a TCP relay a test can cut, and the AsyncClient driven from
plain test code (so each behaviour test runs on both clients)."""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
from typing import Any

from semps_test_support import PATIENCE

from semps.client import AsyncClient

__all__ = ["Awaited", "Relay"]


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


class Awaited:
    """An :class:`~semps.client.AsyncClient` driven from plain test code through an event
    loop in another thread, so every behaviour test runs on both clients unchanged:
    coroutines are awaited, async iterators become iterators."""

    def __init__(self, client: AsyncClient, loop: asyncio.AbstractEventLoop) -> None:
        self._client, self._loop = client, loop

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=PATIENCE)

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
