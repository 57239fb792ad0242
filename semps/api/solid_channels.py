"""Solid notification channels at work (the documents are :mod:`semps.api.solid`, the
routes :mod:`semps.api.routes.solid`): :func:`run_channel` follows a channel's topic on a
multiplexed stream and hands each notification, as Activity Streams 2.0, to the channel's
sender (a WebSocket, a streaming HTTP response, a webhook), keeping its features
(``startAt``, ``endAt``, ``rate``); :class:`WebhookChannels` holds the running
``WebhookChannel2023`` channels, which POST through the webhook dispatcher.

A webhook channel's deliveries follow a subscription webhook's rules (the SSRF policy on
``sendTo`` and each redirect, the deadline, the in-flight limits, ``--webhook-attempts``
with the pause doubling from ``--webhook-backoff``); a notification still refused after
the last attempt is logged, counted in ``webhook_failures`` and skipped (it stays in the
topic's stored notifications, which a channel with ``state`` replays). Each channel counts
against its owner's ``--max-streams`` while it runs; it ends at ``endAt``, when its topic
is deleted, when the server stops, or on ``DELETE`` of its id.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from semps.api.context import Context
from semps.api.errors import error_parts
from semps.api.multiplex import Changed, Multiplexer, MuxStream, Reply
from semps.api.solid import Channel, notification
from semps.broker.webhooks import MAX_DELAY, signature
from semps.errors import NotFound, SempsError

__all__ = ["Ended", "Send", "WebhookChannels", "run_channel"]

_log = logging.getLogger("semps.solid")
#: Seconds of quiet after which a stream yields (and a channel looks at its features again).
_IDLE = 30.0

#: A channel's sender: given a notification's seq and its Activity Streams text.
Send = Callable[[int, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Ended:
    """Why a channel ended: a status as the HTTP API's (200: ``endAt`` came; 401/403: the
    token; 404: the topic was deleted; 503: the server stops) and the reason."""

    status: int
    reason: str


async def run_channel(stream: MuxStream, channel: Channel, base: str, send: Send) -> Ended:
    """Follow ``stream`` (the channel's topic from its position) until the channel ends,
    giving ``send`` each notification; closes ``stream``."""
    left = None if channel.end_at is None else max(0.0, channel.end_at - time.time())
    try:
        return await asyncio.wait_for(_follow(stream, channel, base, send), left)
    except TimeoutError:
        return Ended(200, "the channel ended (endAt)")
    finally:
        stream.close()


async def _follow(stream: MuxStream, channel: Channel, base: str, send: Send) -> Ended:
    if channel.start_at is not None and channel.start_at > time.time():
        await asyncio.sleep(channel.start_at - time.time())
    sent_at = -channel.rate
    async for item in stream.items(_IDLE):
        if isinstance(item, SempsError):
            return Ended(error_parts(item)[0], str(item))
        if isinstance(item, Changed):
            return Ended(404, "the subscription was deleted")
        if isinstance(item, Reply) or not item:
            continue
        for _, seq, text in item:
            wait = sent_at + channel.rate - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await send(seq, notification(base, json.loads(text)))
            sent_at = time.monotonic()
            stream.mux.streams.sent(1)
    return Ended(503, "the server is shutting down")


class WebhookChannels:
    """The running ``WebhookChannel2023`` channels, by their sealed id (each an asyncio
    task on the server's loop)."""

    def __init__(self, ctx: Context, mux: Multiplexer, key: bytes) -> None:
        self.ctx, self.mux, self.key = ctx, mux, key
        self._running: dict[str, asyncio.Task[Ended]] = {}

    def start(self, channel: Channel, sealed: str, base: str) -> None:
        """Run ``channel`` (call on the server's loop).

        Raises:
            TooManyRequests: its owner holds ``--max-streams`` streams and channels.
        """
        lease = self.ctx.streams.lease(channel.subject)
        try:
            stream = self.mux.open(
                channel.subject,
                {channel.subscription: channel.after},
                roster=None,
                exists=lambda sub: self._exists(sub, channel.subject),
                check=lambda: None,
                lease=lease,
            )
        except BaseException:
            lease.release()
            raise
        secret = channel.secret(self.key, sealed)

        async def send(seq: int, text: str) -> None:
            await self._deliver(channel, secret, seq, text.encode())

        task = asyncio.create_task(run_channel(stream, channel, base, send))
        self._running[sealed] = task
        task.add_done_callback(lambda _: self._running.pop(sealed, None))

    def stop(self, sealed: str) -> None:
        """End a running channel.

        Raises:
            NotFound: it is not running (ended, or deleted already).
        """
        task = self._running.pop(sealed, None)
        if task is None:
            raise NotFound("no such webhook channel (it ended, or was deleted)")
        task.cancel()

    def running(self, sealed: str) -> bool:
        """Whether the channel ``sealed`` runs."""
        return sealed in self._running

    def _exists(self, sub: str, subject: str) -> bool:
        try:
            return self.ctx.broker.store.subscription(sub).owner == subject
        except SempsError:
            return False

    async def _deliver(self, channel: Channel, secret: str, seq: int, body: bytes) -> None:
        """POST one notification until it is taken or the attempts are spent."""
        hooks, metrics = self.ctx.broker.webhooks, self.ctx.broker.metrics
        url = str(channel.send_to)
        headers = {
            "Content-Type": "application/ld+json",
            "X-Semps-Signature": signature(secret, body),
            "X-Semps-Delivery": f"{channel.subscription}/{seq}",
        }
        for failed in range(1, hooks.attempts + 1):
            error = await asyncio.wrap_future(hooks.post(url, body, headers))
            if error is None:
                return
            metrics.webhook_failures += 1
            if failed < hooks.attempts:
                await asyncio.sleep(min(hooks.backoff * 2 ** (failed - 1), MAX_DELAY))
        _log.error(
            "Solid webhook channel on %s: notification %d skipped after %d attempts: %s",
            channel.subscription,
            seq,
            hooks.attempts,
            error,
        )
