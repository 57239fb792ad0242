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
is deleted, when the token that established it is revoked or expires (every channel type,
checked as the other streams' tokens are: :func:`token_check`), or on ``DELETE`` of its
id. The channels are kept in the data directory (``solid-webhooks.json``): a restarted
server resumes each after the last notification it delivered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from semps.api.context import Context
from semps.api.errors import error_parts
from semps.api.multiplex import Changed, Check, Multiplexer, MuxStream, Reply
from semps.api.solid import Channel, notification
from semps.broker.webhooks import MAX_DELAY, signature
from semps.errors import NotFound, SempsError

__all__ = [
    "FLUSH",
    "Ended",
    "Send",
    "WebhookChannels",
    "open_stream",
    "owned",
    "run_channel",
    "run_until_gone",
    "token_check",
]

_log = logging.getLogger("semps.solid")
#: Seconds of quiet after which a stream yields (and a channel looks at its features again).
_IDLE = 30.0

#: Seconds between two writes of the kept webhook channels (a restart may deliver what
#: was delivered in the last of them again: at least once).
FLUSH = 1.0

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


async def run_until_gone(
    stream: MuxStream, channel: Channel, base: str, send: Send, gone: Awaitable[object]
) -> Ended:
    """:func:`run_channel`, ended early (status 499) once ``gone`` completes: the client
    went away (a socket or a response whose sends alone would notice only at the next
    notification)."""
    running = asyncio.ensure_future(run_channel(stream, channel, base, send))
    watching = asyncio.ensure_future(gone)
    try:
        await asyncio.wait({running, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (running, watching):
            task.cancel()
        await asyncio.gather(running, watching, return_exceptions=True)
        stream.close()
    if running.cancelled() or running.exception() is not None:
        return Ended(499, "the client went away")
    return running.result()


def owned(ctx: Context, sub: str, subject: str) -> bool:
    """Whether ``sub`` exists and is ``subject``'s."""
    try:
        return ctx.broker.store.subscription(sub).owner == subject
    except SempsError:
        return False


def token_check(ctx: Context, channel: Channel, also: Check = lambda: None) -> Check:
    """A stream's check that ends ``channel`` once the token that established it is revoked
    or expires (an :class:`~semps.errors.AuthError`), or once ``also`` finds an error."""

    def check() -> SempsError | None:
        try:
            ctx.broker.check_token_id(channel.token)
        except SempsError as exc:
            return exc
        return also()

    return check


def open_stream(
    ctx: Context, mux: Multiplexer, channel: Channel, after: int, check: Check = lambda: None
) -> MuxStream:
    """The stream of ``channel``'s topic from ``after``, holding one of its owner's
    ``--max-streams`` slots (returned when the stream closes), checked every
    :data:`~semps.api.multiplex.RECHECK` seconds by :func:`token_check` (with ``check``).

    Raises:
        TooManyRequests: the owner holds all its slots.
    """
    lease = ctx.streams.lease(channel.subject)
    try:
        return mux.open(
            channel.subject,
            {channel.subscription: after},
            roster=None,
            exists=lambda sub: owned(ctx, sub, channel.subject),
            check=token_check(ctx, channel, check),
            lease=lease,
        )
    except BaseException:
        lease.release()
        raise


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
    task on the server's loop), kept in ``path`` (with the base URL and the last seq each
    delivered, written at most every :data:`FLUSH` seconds) so that a restarted server
    resumes them (:meth:`restore`)."""

    def __init__(self, ctx: Context, mux: Multiplexer, key: bytes, path: Path) -> None:
        self.ctx, self.mux, self.key, self.path = ctx, mux, key, path
        self._running: dict[str, asyncio.Task[Ended]] = {}
        self._kept: dict[str, tuple[str, int]] = {}  # sealed -> (base, last seq delivered)
        self._dirty = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None

    def start(self, channel: Channel, sealed: str, base: str, after: int | None = None) -> None:
        """Run ``channel`` (call on the server's loop), from ``after`` (default: its own).

        Raises:
            TooManyRequests: its owner holds ``--max-streams`` streams and channels.
        """
        after = channel.after if after is None else after
        stream = open_stream(self.ctx, self.mux, channel, after)
        secret = channel.secret(self.key, sealed)

        async def send(seq: int, text: str) -> None:
            await self._deliver(channel, secret, seq, text.encode())
            self._keep(sealed, base, seq)

        task = asyncio.create_task(run_channel(stream, channel, base, send))
        self._running[sealed] = task
        self._keep(sealed, base, after)
        task.add_done_callback(lambda done: self._ended(sealed, done))

    def stop(self, sealed: str) -> None:
        """End a running channel.

        Raises:
            NotFound: it is not running (ended, or deleted already).
        """
        task = self._running.pop(sealed, None)
        if task is None:
            raise NotFound("no such webhook channel (it ended, or was deleted)")
        self._forget(sealed)
        task.cancel()

    def running(self, sealed: str) -> bool:
        """Whether the channel ``sealed`` runs."""
        return sealed in self._running

    # -- kept across restarts ----------------------------------------------------------------

    async def restore(self) -> None:
        """Resume the channels kept in :attr:`path` (call once, on the server's loop, at
        start-up); one that cannot run (altered, ended, its owner at the cap) is dropped."""
        self._flusher = asyncio.create_task(self._flush())
        try:
            kept = json.loads(await asyncio.to_thread(self.path.read_text))
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            _log.exception("cannot read the Solid webhook channels in %s", self.path)
            return
        for sealed, base, after in kept if isinstance(kept, list) else []:
            try:
                channel = Channel.open(sealed, self.key)
                if channel.end_at is None or channel.end_at > time.time():
                    self.start(channel, sealed, base, int(after))
            except (SempsError, ValueError, TypeError) as exc:
                _log.warning("a Solid webhook channel is not resumed: %s", exc)
        self._dirty.set()  # those not resumed leave the file

    async def close(self) -> None:
        """Write what is kept a last time (the server stops)."""
        if self._flusher is not None:
            self._flusher.cancel()
        if self._kept or self.path.exists():
            await asyncio.to_thread(self._write, self._snapshot())

    def _keep(self, sealed: str, base: str, seq: int) -> None:
        if sealed in self._running:
            self._kept[sealed] = (base, seq)
            self._dirty.set()

    def _forget(self, sealed: str) -> None:
        if self._kept.pop(sealed, None) is not None:
            self._dirty.set()

    def _ended(self, sealed: str, task: asyncio.Task[Ended]) -> None:
        """A channel's task is done: forgotten, unless the server is stopping (it resumes
        after the restart)."""
        if self._running.get(sealed) is task:
            del self._running[sealed]
        if not task.cancelled() and task.exception() is not None:
            _log.error("a Solid webhook channel failed", exc_info=task.exception())
        if task.cancelled() or task.exception() is not None or task.result().status != 503:
            self._forget(sealed)

    def _snapshot(self) -> list[tuple[str, str, int]]:
        return [(sealed, base, seq) for sealed, (base, seq) in self._kept.items()]

    async def _flush(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if not self._kept and not self.path.exists():
                continue
            try:
                await asyncio.to_thread(self._write, self._snapshot())
            except OSError:
                _log.exception("cannot keep the Solid webhook channels in %s", self.path)
            await asyncio.sleep(FLUSH)

    def _write(self, kept: list[tuple[str, str, int]]) -> None:
        """Replace :attr:`path` whole (readable by the owner only: it holds capabilities)."""
        part = self.path.with_suffix(".part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(kept, out)
        os.replace(part, self.path)

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
