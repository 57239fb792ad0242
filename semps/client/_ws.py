"""Notifications over WebSocket (``/subscriptions/{id}/ws``), through the ``websockets``
library (installed with ``uvicorn[standard]``; imported only when a WebSocket is opened).

The server closes a refused handshake with HTTP 403 (bad token, unknown subscription), a
bad position with close code 4400 and a stream over the per-subscriber cap with 4429; the
last is retried like a dropped connection, the others raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from semps.errors import ClientError, TooManyRequests

__all__ = [
    "RETRIABLE",
    "connect_async",
    "connect_sync",
    "ws_cause",
    "ws_refusal",
    "ws_url",
]

try:
    from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
except ImportError:  # pragma: no cover - websockets comes with uvicorn[standard]
    RETRIABLE: tuple[type[BaseException], ...] = (OSError, TimeoutError)
else:
    RETRIABLE = (OSError, TimeoutError, WebSocketException)

#: Handshake statuses and close codes that are a refusal, not a lost connection.
_REFUSED = {400, 401, 403, 404, 4400, 4401, 4403, 4404, 4422}


def ws_url(base: str, sub: str | None) -> str:
    """The WebSocket URL of ``sub``'s notifications on the server at ``base`` (``None``:
    the multiplexed stream's).

    Example:
        >>> ws_url("https://semps.example/api", "s1")
        'wss://semps.example/api/subscriptions/s1/ws'
        >>> ws_url("http://127.0.0.1:8000", None)
        'ws://127.0.0.1:8000/notifications/ws'
    """
    scheme, sep, rest = base.partition("://")
    if not sep or scheme not in ("http", "https"):
        msg = f"expected an http(s) server URL, not {base!r}"
        raise ClientError(msg)
    path = "/notifications/ws" if sub is None else f"/subscriptions/{sub}/ws"
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}{path}"


def ws_refusal(exc: BaseException) -> int | None:
    """The status or close code when ``exc`` is the server refusing the stream, else
    ``None`` (a connection to retry)."""
    code: int | None = None
    if isinstance(exc, InvalidStatus):
        code = exc.response.status_code
    elif isinstance(exc, ConnectionClosed) and exc.rcvd is not None:
        code = exc.rcvd.code
    return code if code in _REFUSED else None


def ws_cause(exc: BaseException) -> BaseException:
    """What a lost WebSocket is retried for: the server's ``TooManyRequests`` when it closed
    with 4429 (raised as such when the retries are spent), else ``exc``."""
    if isinstance(exc, ConnectionClosed) and exc.rcvd is not None and exc.rcvd.code == 4429:
        return TooManyRequests(exc.rcvd.reason or "too many open streams")
    return exc


def _module(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        msg = "notifications over WebSocket need the 'websockets' package (pip install websockets)"
        raise ClientError(msg) from exc


def connect_sync(url: str, headers: Mapping[str, str], timeout: float = 30.0) -> Any:
    """A blocking WebSocket connection (a context manager yielding messages)."""
    client = _module("websockets.sync.client")
    return client.connect(url, additional_headers=dict(headers), open_timeout=timeout)


def connect_async(url: str, headers: Mapping[str, str], timeout: float = 30.0) -> Any:
    """An asyncio WebSocket connection (an async context manager yielding messages)."""
    client = _module("websockets.asyncio.client")
    return client.connect(url, additional_headers=dict(headers), open_timeout=timeout)
