"""A typed Python client of the semps HTTP API, synchronous (:class:`Client`) and asyncio
(:class:`AsyncClient`).

Both send the same requests and read the same answers (:mod:`semps.client._calls`); the
server's refusals are raised as the classes of :mod:`semps.errors` it raised
(``NotFound``, ``SubscriptionSyntaxError`` with ``line`` and ``column``,
``EventLimitExceeded``, ``TooManyRequests``, ...) and network failures as
:class:`~semps.errors.ClientError`.

Example:
    >>> from semps.client import Client
    >>> def chairs(url: str, token: str) -> list[str]:
    ...     with Client(url, token) as client:
    ...         sub = client.subscribe("SELECT ?who WHERE { ?who a <urn:Chair> }", name="chairs")
    ...         return [n.solutions[0]["who"] for n in client.notifications(sub, once=True)]
"""

from semps.client._async import AsyncClient
from semps.client._models import (
    BatchItem,
    BatchSubscription,
    DeadLetter,
    GraphEdit,
    GraphInfo,
    NewToken,
    Notification,
    Published,
    Subscription,
    Token,
)
from semps.client._mux import MuxPosition
from semps.client._stream import Retry
from semps.client._sync import Client
from semps.errors import ClientError

__all__ = [
    "AsyncClient",
    "BatchItem",
    "BatchSubscription",
    "Client",
    "ClientError",
    "DeadLetter",
    "GraphEdit",
    "GraphInfo",
    "MuxPosition",
    "NewToken",
    "Notification",
    "Published",
    "Retry",
    "Subscription",
    "Token",
]
