"""Webhook delivery: POST each notification to its subscription's callback URL.

Each request carries ``X-Semps-Signature: sha256=<hex HMAC-SHA256 of the body>`` under the
subscription's secret, and ``X-Semps-Delivery: <subscription>/<seq>``. The body is the
notification's stored JSON text.

Deliveries run as asyncio tasks on the dispatcher's own thread and event loop (never on the
HTTP server's loop, never on the publish path): one task per subscription with pending
notifications, so one request is in flight per subscription, in seq order, and a slow,
hanging or dead endpoint delays only its own subscription. At most ``per_host`` requests
are in flight to one host and port, and ``max_in_flight`` in all, so many subscriptions
pointing at one hanging endpoint cannot take every connection. Each attempt (DNS resolution,
connection, request, redirects) has one deadline, ``timeout`` seconds. *Any* failure (an
unsafe or unparsable URL, DNS, connect, timeout, a non-2xx answer, a redirect to a refused
address, too many redirects) is retried with exponential backoff (``backoff * 2**n``
seconds) up to ``attempts`` times; then the notification goes to the dead letters (an admin
can read and replay them) and the subscription's stream moves on.

Every URL, and every redirect target (at most :data:`MAX_REDIRECTS`, each re-posting the same
signed body), is checked by the :class:`~semps.broker.callbacks.CallbackPolicy` after DNS
resolution, and the request connects to the address that was checked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import hmac
import logging
import socket
import threading
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

import httpx

from semps.broker.callbacks import CallbackPolicy
from semps.broker.contracts import Channel, DeadLetter, Note, Store, Webhook
from semps.errors import NotFound, UnsafeCallback

__all__ = ["MAX_REDIRECTS", "WebhookDispatcher", "signature"]

#: Redirects followed per attempt; each target is checked like the first URL.
MAX_REDIRECTS = 5
#: Redirect statuses that are followed (the same signed body is posted again).
REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Longest wait between two attempts, whatever ``backoff`` and ``attempts`` say.
MAX_DELAY = 3600.0
#: Notifications read from the store per page.
PAGE = 50

_log = logging.getLogger("semps.webhooks")
_T = TypeVar("_T")


class DeliveryCounts(Protocol):
    """Where the dispatcher counts failed attempts and dead letters (the broker's metrics)."""

    webhook_failures: int
    webhooks_dead_lettered: int


def _host(url: str) -> str:
    """A URL's host and port for the log (never its path or query, which may hold secrets)."""
    try:
        return httpx.URL(url).netloc.decode("ascii", "replace") or "?"
    except Exception:
        return "?"


def signature(secret: str, body: bytes) -> str:
    """The ``X-Semps-Signature`` header value for ``body``.

    Example:
        >>> signature("key", b"{}")[:15]
        'sha256=a777724d'
    """
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookDispatcher(Channel):
    """Background delivery of stored notifications to webhooks: the webhook
    :class:`~semps.broker.contracts.Channel` (it reads what to deliver from the store, so
    :meth:`publish` only wakes it).

    Args:
        store: where notifications, webhooks and dead letters live.
        attempts: tries per notification before it is dead-lettered.
        backoff: seconds before the first retry; doubles with each failure.
        timeout: seconds one attempt (DNS, connect, request, redirects) may take.
        policy: the SSRF guard (default: refuse every non-public address).
        max_in_flight: requests in flight at once, over all subscriptions.
        per_host: requests in flight at once to one host and port (many subscriptions on
            one hanging endpoint cannot take the whole of ``max_in_flight``).

    The dispatcher starts on :meth:`start` or on the first :meth:`wake`, so whoever builds it
    can set :attr:`policy` first.
    """

    def __init__(
        self,
        store: Store,
        *,
        attempts: int = 5,
        backoff: float = 0.5,
        timeout: float = 5.0,
        policy: CallbackPolicy | None = None,
        max_in_flight: int = 256,
        per_host: int = 8,
        poll: float = 1.0,
    ) -> None:
        self.store = store
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.timeout = timeout
        self.policy = policy or CallbackPolicy()
        self.poll = poll
        self._max_in_flight = max_in_flight
        self._per_host = per_host
        self._hosts: dict[str, tuple[asyncio.Semaphore, int]] = {}  # netloc -> (gate, users)
        self._start_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._wakeup = asyncio.Event()
        self._stopping = asyncio.Event()
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # woken while their worker was busy: look again
        self._done: dict[str, int] = {}  # last seq each subscription's worker finished
        #: Counts failed attempts and dead letters when set.
        self.metrics: DeliveryCounts | None = None

    # -- life cycle (any thread) -----------------------------------------------------------

    def start(self) -> None:
        """Start the dispatcher's thread and event loop (idempotent)."""
        with self._start_lock:
            if self._thread is not None:
                return
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._run, name="semps-webhooks", daemon=True)
            self._thread.start()

    def publish(self, notes: Sequence[Note]) -> None:
        """Committed notifications: wake the dispatcher only when some subscription has a
        webhook (waking it reads the store on its thread; with no webhook at all, that was
        about 50 us an event of single posts). A webhook set since is found at the next
        :attr:`poll`."""
        if self.store.has_webhooks():
            self.wake()

    def wake(self) -> None:
        """New notifications may be waiting (never blocks)."""
        self.start()
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed: we are shutting down
            self._loop.call_soon_threadsafe(self._wakeup.set)

    def close(self) -> None:
        """Stop delivering; what was not delivered is delivered after a restart."""
        with self._start_lock:
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._stopping.set)
        thread.join(timeout=5)

    def replay(self, letter: DeadLetter) -> str | None:
        """Deliver a dead letter once more now (one attempt); drops it on success.

        Returns:
            ``None`` if it was delivered, else the error text.
        """
        hooks = {h.subscription: h for h in self.store.webhooks()}
        hook = hooks.get(letter.subscription) or Webhook(letter.subscription, letter.url, "", 0)
        page = self.store.notification_texts_after(letter.subscription, letter.seq - 1, 1)
        if not page or page[0][0] != letter.seq:
            msg = f"no notification {letter.seq} of subscription {letter.subscription!r}"
            raise NotFound(msg)
        error = self._call(self._attempt(hook, letter.seq, page[0][1].encode()))
        if error is None:
            self.store.drop_dead_letter(letter.id)
        return error

    def post(
        self, url: str, body: bytes, headers: dict[str, str]
    ) -> concurrent.futures.Future[str | None]:
        """One attempt to POST ``body`` to ``url`` from the dispatcher's loop (any thread),
        under the rules of a subscription's webhook: the SSRF policy on the URL and each
        redirect, the deadline, the in-flight limits. The future's result is ``None`` on a
        2xx, else the error text; retrying is the caller's (a Solid webhook channel)."""
        self.start()
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(self._once(url, body, headers), self._loop)

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` on the dispatcher's loop from another thread and wait for it."""
        self.start()
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout=self.timeout + 10)

    # -- the dispatcher's loop -------------------------------------------------------------

    def _run(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()

    async def _main(self) -> None:
        limits = httpx.Limits(max_connections=self._max_in_flight)
        # Requests go to an IP address with the name in Host/SNI; a TLS connection is kept
        # for one request only, so no connection verified for one name serves another.
        plain = httpx.AsyncClient(timeout=self.timeout, trust_env=False, limits=limits)
        tls_limits = httpx.Limits(max_connections=self._max_in_flight, max_keepalive_connections=0)
        tls = httpx.AsyncClient(timeout=self.timeout, trust_env=False, limits=tls_limits)
        self._clients = {"http": plain, "https": tls}
        self._in_flight = asyncio.Semaphore(self._max_in_flight)
        stopper = asyncio.create_task(self._stopping.wait())
        try:
            while not self._stopping.is_set():
                self._wakeup.clear()
                await self._schedule()
                waker = asyncio.create_task(self._wakeup.wait())
                await asyncio.wait(
                    {waker, stopper}, timeout=self.poll, return_when="FIRST_COMPLETED"
                )
                waker.cancel()
        finally:
            stopper.cancel()
            for task in list(self._workers.values()):
                task.cancel()
            await asyncio.gather(*self._workers.values(), return_exceptions=True)
            await plain.aclose()
            await tls.aclose()

    async def _schedule(self) -> None:
        """Start a worker for each webhook with pending notifications and none running
        (none once the dispatcher is stopping: a worker ending then may still ask)."""
        if self._stopping.is_set():
            return
        try:
            hooks = await asyncio.to_thread(self.store.pending_webhooks)
        except Exception:  # the store is closing or failed: try again at the next poll
            if not self._stopping.is_set() and threading.main_thread().is_alive():
                # (stopping: the loop's threads may be gone; the main thread gone: the
                # process is exiting, and its thread pools take no more work)
                _log.exception("cannot read the pending webhooks")
            return
        for hook in hooks:
            if hook.subscription in self._workers:
                self._again.add(hook.subscription)
                continue
            task = asyncio.create_task(self._drain(hook), name=f"webhook {hook.subscription}")
            self._workers[hook.subscription] = task

    async def _drain(self, hook: Webhook) -> None:
        """Deliver ``hook``'s pending notifications in seq order, one at a time."""
        sub = hook.subscription
        delivered = max(hook.delivered, self._done.get(sub, 0))
        try:
            while True:
                self._again.discard(sub)
                page = await asyncio.to_thread(
                    self.store.notification_texts_after, sub, delivered, PAGE
                )
                if not page and sub not in self._again:
                    return
                for seq, text in page:
                    await self._deliver(hook, seq, text.encode())
                    delivered = self._done[sub] = seq
        except asyncio.CancelledError:
            raise
        except Exception:  # a store failure: the next poll starts a new worker
            if threading.main_thread().is_alive():  # (else the process is exiting)
                _log.exception("webhook worker for %s failed", sub)
        finally:
            self._workers.pop(sub, None)

    async def _deliver(self, hook: Webhook, seq: int, body: bytes) -> None:
        """Try until delivered or ``attempts`` failures (then dead-letter); then mark it."""
        failed = 0
        while True:
            error = await self._attempt(hook, seq, body)
            if error is None:
                break
            failed += 1
            if self.metrics is not None:
                self.metrics.webhook_failures += 1
            if failed >= self.attempts:
                _log.error(
                    "webhook of %s: notification %d dead-lettered after %d attempts (%s): %s",
                    hook.subscription,
                    seq,
                    failed,
                    _host(hook.url),
                    error,
                )
                if self.metrics is not None:
                    self.metrics.webhooks_dead_lettered += 1
                await asyncio.to_thread(self.store.add_dead_letter, hook, seq, error, failed)
                break
            _log.warning(
                "webhook of %s: notification %d, attempt %d of %d failed (%s): %s",
                hook.subscription,
                seq,
                failed,
                self.attempts,
                _host(hook.url),
                error,
            )
            await asyncio.sleep(min(self.backoff * 2 ** (failed - 1), MAX_DELAY))
        await asyncio.to_thread(self.store.mark_delivered, hook.subscription, seq)

    async def _attempt(self, hook: Webhook, seq: int, body: bytes) -> str | None:
        """One delivery attempt: ``None`` on a 2xx, else the error text. Never raises."""
        headers = {
            "Content-Type": "application/json",
            "X-Semps-Signature": signature(hook.secret, body),
            "X-Semps-Delivery": f"{hook.subscription}/{seq}",
        }
        return await self._once(hook.url, body, headers)

    async def _once(self, url: str, body: bytes, headers: dict[str, str]) -> str | None:
        """One POST under the gates and the deadline: ``None`` or the error text."""
        try:
            async with self._host_gate(url), self._in_flight, asyncio.timeout(self.timeout):
                return await self._post(url, body, headers)
        except TimeoutError:
            return f"Timeout: no answer within {self.timeout:g} s"
        except UnsafeCallback as exc:
            return f"UnsafeCallback: {exc}"
        except socket.gaierror as exc:
            return f"DNSError: {exc}"
        except Exception as exc:  # any failure at all is retried, then dead-lettered
            return f"{type(exc).__name__}: {exc}"

    @contextlib.asynccontextmanager
    async def _host_gate(self, url: str) -> AsyncIterator[None]:
        """At most ``per_host`` requests in flight to the URL's host and port."""
        try:
            key = httpx.URL(url).netloc.decode("ascii", "replace").lower()
        except Exception:  # an unparsable URL fails in _post, with its message
            key = ""
        gate, users = self._hosts.get(key) or (asyncio.Semaphore(self._per_host), 0)
        self._hosts[key] = (gate, users + 1)
        try:
            async with gate:
                yield
        finally:
            gate, users = self._hosts[key]
            if users > 1:
                self._hosts[key] = (gate, users - 1)
            else:
                del self._hosts[key]

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> str | None:
        """POST ``body``, following redirects by hand so each target is checked."""
        location: str | httpx.URL = url
        for _ in range(MAX_REDIRECTS + 1):
            target = await self.policy.resolve(location)
            client = self._clients[target.url.scheme]
            extensions: dict[str, Any] = {}
            if target.url.scheme == "https" and target.host != str(target.address):
                extensions["sni_hostname"] = target.host
            request = client.build_request(
                "POST",
                target.request_url(),
                content=body,
                headers={**headers, "Host": target.host_header()},
                extensions=extensions,
            )
            response = await client.send(request, stream=True)
            await response.aclose()  # the answer's body is never read
            status = response.status_code
            if 200 <= status < 300:
                return None
            if status not in REDIRECTS or "location" not in response.headers:
                return f"HTTP {status}"
            location = target.url.join(response.headers["location"])
        return f"TooManyRedirects: more than {MAX_REDIRECTS} redirects"
