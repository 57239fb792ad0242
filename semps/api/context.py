"""What the routers share: the broker, token checks, streams, the webhook policy and the
HTTP-level settings (one object per application, handed to each router factory)."""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass, field

from semps.api.auth import Auth
from semps.api.streams import Streams
from semps.broker.broker import Broker
from semps.broker.callbacks import CallbackPolicy

__all__ = ["Context"]


@dataclass(eq=False)
class Context:
    """The state of one HTTP application.

    Attributes:
        broker: the broker the routes drive.
        auth: bearer token checks.
        streams: the SSE and WebSocket streams (and their per-subscriber cap).
        policy: which webhook URLs may be called (SSRF guard).
        max_body: the most bytes a request body may have (413 past it).
        metrics_token: a token that may read ``/metrics`` only (``None``: none).
        errors: HTTP responses by error status, for ``/metrics``.
        cursor_key: the key list cursors are signed with (:mod:`semps.api.pagination`).
    """

    broker: Broker
    auth: Auth
    streams: Streams
    policy: CallbackPolicy
    max_body: int
    metrics_token: str | None = None
    errors: Counter[int] = field(default_factory=Counter)
    cursor_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
