"""The HTTP API in the test process: the application from ``create_app`` driven through
``httpx.ASGITransport`` on one event loop (no server process), with a token per role."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from semps.api.app import create_app


class InProcess:
    """One application on a fresh data directory, and a synchronous way to call it."""

    def __init__(self, data_dir: Path, **options: Any) -> None:
        self.app = create_app(data_dir, workers=1, **options)
        self.broker = self.app.state.broker
        self.tokens = {role: self.token(role) for role in ("admin", "publisher", "subscriber")}
        self.loop = asyncio.new_event_loop()
        # an unexpected exception is answered (500), not raised into the test
        transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
        self.http = httpx.AsyncClient(transport=transport, base_url="http://semps.test")

    def token(self, role: str, subject: str | None = None) -> str:
        """A new token's secret."""
        return str(self.broker.store.create_token(role, subject)[1])

    def request(
        self, method: str, path: str, role: str | None = None, token: str | None = None, **kw: Any
    ) -> httpx.Response:
        """``method path`` with the bearer token of ``role`` (or ``token``; neither: none)."""
        headers = dict(kw.pop("headers", {}))
        secret = token or (self.tokens[role] if role else None)
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        call = self.http.request(method, path, headers=headers, **kw)
        return self.loop.run_until_complete(call)

    def close(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()
        self.broker.close()
