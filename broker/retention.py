"""Notification retention: a background pass that prunes what is stored past its bounds.

Stored notifications are kept per subscription by number (the newest ``count``) and by age
(``age`` seconds); a subscription may carry its own bounds (``?retain_count=`` and
``?retain_age=`` when it subscribes). The pass runs on its own thread every ``interval``
seconds, deleting in small transactions (:meth:`~semps.broker.store.Store.prune`), so
publishing never waits behind it for more than one of them. A client resuming a stream
from a pruned seq simply gets the notifications that are left.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from semps.broker.store import Store

__all__ = ["Pruner", "RetentionPolicy"]

_log = logging.getLogger("semps.retention")


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """The service's default bounds (0: no bound) and the time between two passes.

    Example:
        >>> RetentionPolicy(count=10, age=3600.0).interval
        60.0
    """

    count: int = 100_000
    age: float = 30 * 86400.0
    interval: float = 60.0

    def __post_init__(self) -> None:
        if self.count < 0 or self.age < 0 or self.interval <= 0:
            msg = f"retention bounds must be 0 or more and the interval positive: {self}"
            raise ValueError(msg)


class Pruner:
    """Runs :meth:`Store.prune` every ``policy.interval`` seconds on a daemon thread.

    Args:
        store: whose notifications are pruned.
        policy: the bounds (:meth:`configure` changes them).
        after_pass: called after each pass (the broker saves its counters there).
    """

    def __init__(
        self,
        store: Store,
        policy: RetentionPolicy | None = None,
        after_pass: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.policy = policy or RetentionPolicy()
        self.after_pass = after_pass
        self.pruned = 0
        self._stop = False
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def configure(self, policy: RetentionPolicy) -> None:
        """Use ``policy`` from now on (the next pass comes ``policy.interval`` from now)."""
        with self._wake:
            self.policy = policy
            self._wake.notify_all()

    def start(self) -> None:
        """Start the passes (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="semps-retention", daemon=True)
            self._thread.start()

    def run_once(self) -> int:
        """One pass now; returns how many notifications and events it deleted."""
        policy = self.policy
        removed = self.store.prune(policy.count, policy.age)
        self.pruned += removed
        if removed:
            _log.info("retention: pruned %d stored notifications and events", removed)
        return removed

    def _due(self) -> bool:
        """Wait for the next pass; ``False`` once closed."""
        with self._wake:
            policy = self.policy
            self._wake.wait(policy.interval)
            while not self._stop and self.policy is not policy:  # reconfigured: wait anew
                policy = self.policy
                self._wake.wait(policy.interval)
            return not self._stop

    def _run(self) -> None:
        while self._due():
            try:
                self.run_once()
                if self.after_pass is not None:
                    self.after_pass()
            except Exception:  # the store is closing or failed: try again at the next pass
                if self._stop:
                    return
                _log.exception("retention pass failed")

    def close(self) -> None:
        """Stop the passes (waits for a pass in progress)."""
        with self._wake:
            self._stop = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
