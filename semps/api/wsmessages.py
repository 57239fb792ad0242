"""What a client sends on a WebSocket, read within bounds: at most :data:`MAX_MESSAGE`
bytes a message (past it the socket closes with 1009) and :data:`MAX_RATE` messages a
second averaged over a burst of as many (past it, 4429). The multiplexed notification
stream and SEPA's subscribe protocol read their clients' messages through
:func:`client_messages`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from fastapi import WebSocket, WebSocketDisconnect

__all__ = ["MAX_MESSAGE", "MAX_RATE", "RateGate", "client_messages"]

#: The largest message a client may send on the WebSocket (bytes).
MAX_MESSAGE = 256 * 1024
#: Messages a client may send a second (averaged over a burst of as many).
MAX_RATE = 20


class RateGate:
    """A token bucket of :data:`MAX_RATE` messages a second.

    Example:
        >>> gate = RateGate(rate=2, now=0.0)
        >>> [gate.allowed(now=0.0) for _ in range(3)]
        [True, True, False]
        >>> gate.allowed(now=0.5)
        True
    """

    def __init__(self, rate: int = MAX_RATE, now: float | None = None) -> None:
        self.rate = rate
        self.allowance = float(rate)
        self.checked = time.monotonic() if now is None else now

    def allowed(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.allowance = min(float(self.rate), self.allowance + (now - self.checked) * self.rate)
        self.checked = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True


async def client_messages(ws: WebSocket, gate: RateGate | None = None) -> AsyncIterator[str]:
    """The client's messages as text (bytes decoded as UTF-8), until it disconnects or
    passes a bound (the socket is then closed with 1009 or 4429)."""
    gate = RateGate() if gate is None else gate
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("text")
            if data is None:
                data = (message.get("bytes") or b"").decode("utf-8", "replace")
            if len(data) > MAX_MESSAGE // 4 and len(data.encode()) > MAX_MESSAGE:
                await ws.close(code=1009, reason=f"a message over {MAX_MESSAGE} bytes")
                return
            if not gate.allowed():
                await ws.close(code=4429, reason=f"more than {MAX_RATE} messages a second")
                return
            yield data
    except (WebSocketDisconnect, RuntimeError):
        return
