"""Notification retention: a background pass that prunes what is stored past its bounds.

Stored notifications are kept per subscription by number (the newest ``count``) and by age
(``age`` seconds); a subscription may carry its own bounds (``?retain_count=`` and
``?retain_age=`` when it subscribes). The pass runs on its own thread every ``interval``
seconds, deleting in small transactions
(:meth:`~semps.broker.contracts.RetentionStore.prune`), so
publishing never waits behind it for more than one of them. A client resuming a stream
from a pruned seq simply gets the notifications that are left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from semps.broker.contracts import RetentionStore
from semps.broker.event_documents import EventDocumentTable
from semps.broker.notifications import NotificationTable

__all__ = ["Pruner", "RetentionPolicy", "RetentionTable"]

_log = logging.getLogger("semps.retention")
#: Seconds a pass sleeps between two of its deleting transactions (see :func:`_hand_over`).
_HAND_OVER = 0.0005


def _hand_over() -> None:
    """Between two deleting transactions of a pass: a commit waiting for the writer gets
    it now. A lock released and taken again at once by the same thread is seldom handed
    over (commits waited for almost the whole pass, 0.2-0.5 s, in bench/retention.py)."""
    time.sleep(_HAND_OVER)


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


class RetentionTable(NotificationTable, EventDocumentTable):
    """The retention methods of :class:`~semps.broker.sqlite_store.SQLiteStore`."""

    def set_retention(self, sub_id: str, count: int | None, age: float | None) -> None:
        """A subscription's own retention: notifications kept by number and by age in
        seconds (``None``: the service's default; 0: no bound)."""
        with self._wlock:
            self._w.execute(
                "UPDATE subscriptions SET retain_count = ?, retain_age = ? WHERE id = ?",
                (count, age, sub_id),
            )

    def retention(self, sub_id: str) -> tuple[int | None, float | None]:
        """A subscription's own (count, age) retention; ``None`` where it takes the default."""
        with self._lock:
            row = self._db.execute(
                "SELECT retain_count, retain_age FROM subscriptions WHERE id = ?", (sub_id,)
            ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def prune(self, count: int, age: float, *, now: float | None = None, chunk: int = 1000) -> int:
        """Delete stored notifications past retention; returns how many went.

        Each subscription keeps its newest ``count`` notifications and those younger than
        ``age`` seconds (its own bounds if it has them; 0: no bound). Deletions run in
        transactions of at most ``chunk`` rows, so a commit never waits behind more than one
        of them; events older than ``age`` leave the event log the same way.
        """
        now = time.time() if now is None else now
        with self._lock:
            own = {
                row[0]: (row[1], row[2])
                for row in self._db.execute(
                    "SELECT id, retain_count, retain_age FROM subscriptions "
                    "WHERE retain_count IS NOT NULL OR retain_age IS NOT NULL"
                )
            }
        # (subscription, below seq, before time, its first recent (seq, created) or None)
        tasks: list[tuple[str, int, float, tuple[int, float] | None]] = []
        with self._lock, self._reading():
            recent = self._recent_firsts()
        # Each subscription's first: its first indexed one, else its first recent one (rows
        # indexed meanwhile are found indexed). Read 1,000 subscriptions at a time, so the
        # readers (token checks, streams) never wait long behind a pass.
        lasts = list(self._last_seq.items())
        firsts: dict[str, tuple[tuple[int, float] | None, int]] = {}
        for at in range(0, len(lasts), 1000):
            with self._lock, self._reading():
                for sub_id, last in lasts[at : at + 1000]:
                    firsts[sub_id] = (self._first_indexed(sub_id) or recent.get(sub_id), last)
        for sub_id, (first, last) in firsts.items():
            if first is None:
                continue
            sub_count, sub_age = own.get(sub_id, (None, None))
            keep = count if sub_count is None else sub_count
            oldest = age if sub_age is None else sub_age
            hint = recent.get(sub_id)
            if keep > 0 and first[0] <= last - keep:
                tasks.append((sub_id, last - keep + 1, float("inf"), hint))
            if oldest > 0 and first[1] < now - oldest:
                tasks.append((sub_id, last + 1, now - oldest, hint))
        removed = self._delete(tasks, chunk)
        if age > 0:
            removed += self._prune_events(now - age, chunk)
        return removed

    def _delete(
        self, tasks: list[tuple[str, int, float, tuple[int, float] | None]], chunk: int
    ) -> int:
        """For each (subscription, seq, time, first recent): delete its notifications
        under ``seq`` created before ``time``, oldest first, at most ``chunk`` rows a
        transaction (several subscriptions share one, so small deletions do not cost an
        fsync each)."""
        removed = 0
        pending = list(reversed(tasks))
        while pending:
            done = 0
            with self._wlock:
                self._w.execute("BEGIN IMMEDIATE")
                try:
                    while pending and done < chunk:
                        sub_id, seq, before, hint = pending[-1]
                        room = chunk - done
                        deleted = self._delete_oldest(sub_id, seq, before, room, hint)
                        done += deleted
                        if deleted < room:  # nothing more to delete for this one
                            pending.pop()
                    self._w.execute("COMMIT")
                except Exception:
                    if self._w.in_transaction:
                        self._w.execute("ROLLBACK")
                    raise
            removed += done
            _hand_over()
        return removed

    def _prune_events(self, before: float, chunk: int) -> int:
        removed = 0
        while True:
            with self._wlock:
                cursor = self._w.execute(
                    "DELETE FROM events WHERE rowid IN "
                    "(SELECT rowid FROM events WHERE received < ? LIMIT ?)",
                    (before, chunk),
                )
            removed += cursor.rowcount
            if cursor.rowcount < chunk:
                with self._wlock:
                    self._prune_documents(before)
                return removed
            _hand_over()


class Pruner:
    """Runs :meth:`~semps.broker.contracts.RetentionStore.prune` every ``policy.interval``
    seconds on a daemon thread.

    Args:
        store: whose notifications are pruned.
        policy: the bounds (:meth:`configure` changes them).
        after_pass: called after each pass (the broker saves its counters there).
    """

    def __init__(
        self,
        store: RetentionStore,
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
