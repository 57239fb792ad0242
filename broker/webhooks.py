"""Webhook delivery: POST each notification to its subscription's callback URL.

Each request carries ``X-Semps-Signature: sha256=<hex HMAC-SHA256 of the body>`` under the
subscription's secret, and ``X-Semps-Delivery: <subscription>/<seq>``. A failed delivery is
retried with exponential backoff (``backoff * 2**attempt`` seconds) up to ``attempts`` times,
then moved to the dead-letter list (an admin can read and replay it) and the stream moves on.
Deliveries run on a small thread pool, one in flight per subscription, and retries wait by
schedule rather than by sleeping, so a slow or dead endpoint delays only its own
subscription.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from semps.broker.store import DeadLetter, Store, Webhook


def signature(secret: str, body: bytes) -> str:
    """The ``X-Semps-Signature`` header value for ``body``.

    Example:
        >>> signature("key", b"{}")[:15]
        'sha256=a777724d'
    """
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookDispatcher:
    """Background delivery of stored notifications to webhooks."""

    def __init__(
        self, store: Store, *, attempts: int = 5, backoff: float = 0.5, timeout: float = 5.0
    ) -> None:
        self.store = store
        self.attempts = attempts
        self.backoff = backoff
        self.timeout = timeout
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="semps-webhook")
        self._busy: set[str] = set()
        self._failures: dict[str, tuple[int, float]] = {}  # sub -> (failed attempts, next try)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="semps-webhooks", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """New notifications may be waiting."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(0.2)
            self._wake.clear()
            now = time.monotonic()
            for hook in self.store.webhooks():
                with self._lock:
                    failed, next_try = self._failures.get(hook.subscription, (0, 0.0))
                    if hook.subscription in self._busy or now < next_try:
                        continue
                    self._busy.add(hook.subscription)
                self._pool.submit(self._deliver_next, hook)

    def _deliver_next(self, hook: Webhook) -> None:
        try:
            pending = self.store.notifications_after(hook.subscription, hook.delivered, limit=50)
            for note in pending:
                error = self._post(hook, note.payload)
                if error is None:
                    self._failures.pop(hook.subscription, None)
                    self.store.mark_delivered(hook.subscription, note.seq)
                    continue
                failed = self._failures.get(hook.subscription, (0, 0.0))[0] + 1
                if failed >= self.attempts:
                    self.store.add_dead_letter(hook, note.seq, error, failed)
                    self.store.mark_delivered(hook.subscription, note.seq)
                    self._failures.pop(hook.subscription, None)
                    continue
                delay = self.backoff * 2 ** (failed - 1)
                self._failures[hook.subscription] = (failed, time.monotonic() + delay)
                return
        finally:
            with self._lock:
                self._busy.discard(hook.subscription)

    def _post(self, hook: Webhook, payload: dict[str, object]) -> str | None:
        """POST one notification; ``None`` on a 2xx, else the error text."""
        body = json.dumps(payload).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Semps-Signature": signature(hook.secret, body),
            "X-Semps-Delivery": f"{hook.subscription}/{payload.get('id')}",
        }
        try:
            response = httpx.post(hook.url, content=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"
        if 200 <= response.status_code < 300:
            return None
        return f"HTTP {response.status_code}"

    def replay(self, letter: DeadLetter) -> str | None:
        """Deliver a dead letter once more now; drops it on success. Returns the error."""
        hooks = {h.subscription: h for h in self.store.webhooks()}
        hook = hooks.get(letter.subscription) or Webhook(letter.subscription, letter.url, "", 0)
        note = self.store.notification(letter.subscription, letter.seq)
        error = self._post(hook, note.payload)
        if error is None:
            self.store.drop_dead_letter(letter.id)
        return error

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)
