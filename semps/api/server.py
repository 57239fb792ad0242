"""The uvicorn server semps runs its app in (``semps serve``, ``semps demo``)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import uvicorn

from semps.api.streams import Streams

__all__ = ["GRACE", "Server"]

#: Seconds the server waits for requests still being answered when it stops (its
#: ``timeout_graceful_shutdown``; the notification streams end at once).
GRACE = 3


class Server(uvicorn.Server):
    """:class:`uvicorn.Server` that ends the app's notification streams first when it
    shuts down (:meth:`Streams.close`).

    uvicorn waits for open responses before it stops, up to ``timeout_graceful_shutdown``,
    then cuts them; a notification stream never finishes by itself, so every SIGTERM or
    Ctrl-C waited that long and every stream's client saw its connection cut mid-response.
    Ended first, each SSE response completes (WebSockets get uvicorn's close code 1012,
    "service restart"), and the server stops as soon as its other requests are answered."""

    def __init__(self, config: uvicorn.Config, streams: Streams) -> None:
        super().__init__(config)
        self.streams = streams
        #: Called (in order) as the server stops, before the app's broker closes: the
        #: bridges feeding the broker stop first.
        self.on_stop: list[Callable[[], None]] = []

    @classmethod
    def of(cls, app: Any, **options: Any) -> Server:
        """The server of a semps app (:func:`semps.api.app.create_app`): uvicorn ``options``
        (host, port, logging), the shutdown grace :data:`GRACE`, the app's streams."""
        config = uvicorn.Config(app, timeout_graceful_shutdown=GRACE, **options)
        return cls(config, app.state.context.streams)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.streams.close()
        for stop in self.on_stop:
            stop()
        await super().shutdown(sockets)
