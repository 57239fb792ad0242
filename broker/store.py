"""The broker's persistent store: one SQLite file in WAL mode.

Tables: subscriptions, tokens, notifications (the outbox: per-subscription increasing
sequence numbers, so a client resuming with ``Last-Event-ID`` gets every later notification
and none twice). An event's notifications are committed in one transaction before the
publisher is answered.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from semps.errors import NotFound, StoreError
from semps.matcher.base import Subscription

ROLES = ("admin", "publisher", "subscriber")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL, owner TEXT,
    name TEXT, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY, role TEXT NOT NULL, subject TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS notifications (
    subscription TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL,
    payload TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (subscription, seq));
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS matcher_state (kind TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS webhooks (
    subscription TEXT PRIMARY KEY, url TEXT NOT NULL, secret TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT, subscription TEXT NOT NULL, seq INTEGER NOT NULL,
    url TEXT NOT NULL, error TEXT NOT NULL, attempts INTEGER NOT NULL, created REAL NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Webhook:
    """A subscription's callback: where to POST, the HMAC key, the last delivered seq."""

    subscription: str
    url: str
    secret: str
    delivered: int


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A notification whose webhook delivery gave up."""

    id: int
    subscription: str
    seq: int
    url: str
    error: str
    attempts: int


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a bearer token belongs to."""

    subject: str
    role: str


@dataclass(frozen=True, slots=True)
class Notification:
    """One stored notification."""

    subscription: str
    seq: int
    event: str
    payload: dict[str, object]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Store:
    """Thread-safe access to the broker's SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            msg = f"cannot open the store {path}: {exc}"
            raise StoreError(msg) from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- tokens ----------------------------------------------------------------------------

    def create_token(self, role: str, subject: str | None = None) -> str:
        """A new bearer token for ``role``; only its SHA-256 is stored."""
        if role not in ROLES:
            msg = f"unknown role {role!r} (use {', '.join(ROLES)})"
            raise StoreError(msg)
        token = secrets.token_urlsafe(24)
        subject = subject or f"{role}-{secrets.token_hex(4)}"
        with self._lock:
            self._db.execute(
                "INSERT INTO tokens VALUES (?, ?, ?, ?)",
                (_digest(token), role, subject, time.time()),
            )
        return token

    def principal(self, token: str) -> Principal | None:
        with self._lock:
            row = self._db.execute(
                "SELECT subject, role FROM tokens WHERE digest = ?", (_digest(token),)
            ).fetchone()
        return Principal(row[0], row[1]) if row else None

    # -- subscriptions ---------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self._db.execute(
                "INSERT INTO counters VALUES (?, 1) "
                "ON CONFLICT(name) DO UPDATE SET value = value + 1",
                (prefix,),
            )
            (value,) = self._db.execute(
                "SELECT value FROM counters WHERE name = ?", (prefix,)
            ).fetchone()
        return f"{prefix}{value}"

    def put_subscription(self, sub: Subscription) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "kind = excluded.kind, text = excluded.text, name = excluded.name",
                (sub.id, sub.kind, sub.text, sub.owner, sub.name, time.time()),
            )

    def delete_subscription(self, sub_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM subscriptions WHERE id = ?", (sub_id,))
            self._db.execute("DELETE FROM webhooks WHERE subscription = ?", (sub_id,))
            self._db.execute("DELETE FROM notifications WHERE subscription = ?", (sub_id,))

    def subscription(self, sub_id: str) -> Subscription:
        with self._lock:
            row = self._db.execute(
                "SELECT id, kind, text, owner, name FROM subscriptions WHERE id = ?", (sub_id,)
            ).fetchone()
        if row is None:
            msg = f"no subscription {sub_id!r}"
            raise NotFound(msg)
        return Subscription(*row)

    def subscriptions(self, owner: str | None = None) -> list[Subscription]:
        query = "SELECT id, kind, text, owner, name FROM subscriptions"
        args: tuple[str, ...] = ()
        if owner is not None:
            query += " WHERE owner = ?"
            args = (owner,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY created, id", args).fetchall()
        return [Subscription(*row) for row in rows]

    # -- notifications ---------------------------------------------------------------------

    def matcher_state(self, kind: str) -> dict[str, object] | None:
        """The detection state last stored for a matcher kind."""
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM matcher_state WHERE kind = ?", (kind,)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def add_notifications(
        self,
        event_id: str,
        payloads: Iterable[tuple[str, dict[str, object]]],
        states: dict[str, dict[str, object]] | None = None,
    ) -> int:
        """Store an event's notifications (and the matchers' detection state) in one
        transaction; returns how many notifications."""
        now = time.time()
        count = 0
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sub_id, payload in payloads:
                    (last,) = self._db.execute(
                        "SELECT COALESCE(MAX(seq), 0) FROM notifications WHERE subscription = ?",
                        (sub_id,),
                    ).fetchone()
                    payload = {**payload, "id": last + 1}
                    self._db.execute(
                        "INSERT INTO notifications VALUES (?, ?, ?, ?, ?)",
                        (sub_id, last + 1, event_id, json.dumps(payload), now),
                    )
                    count += 1
                for kind, state in (states or {}).items():
                    self._db.execute(
                        "INSERT INTO matcher_state VALUES (?, ?) "
                        "ON CONFLICT(kind) DO UPDATE SET state = excluded.state",
                        (kind, json.dumps(state)),
                    )
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK")
                msg = f"cannot store the notifications of event {event_id!r}: {exc}"
                raise StoreError(msg) from exc
        return count

    def notifications_after(self, sub_id: str, after: int, limit: int = 500) -> list[Notification]:
        with self._lock:
            rows = self._db.execute(
                "SELECT subscription, seq, event, payload FROM notifications "
                "WHERE subscription = ? AND seq > ? ORDER BY seq LIMIT ?",
                (sub_id, after, limit),
            ).fetchall()
        return [Notification(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    # -- webhooks --------------------------------------------------------------------------

    def set_webhook(self, sub_id: str, url: str) -> str:
        """Attach a callback URL to a subscription; returns its new HMAC secret."""
        secret = secrets.token_hex(16)
        with self._lock:
            self._db.execute(
                "INSERT INTO webhooks VALUES (?, ?, ?, 0) ON CONFLICT(subscription) DO UPDATE "
                "SET url = excluded.url, secret = excluded.secret",
                (sub_id, url, secret),
            )
        return secret

    def webhooks(self) -> list[Webhook]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM webhooks").fetchall()
        return [Webhook(*row) for row in rows]

    def webhook_backlog(self) -> int:
        """Notifications stored but not yet delivered to (or dead-lettered from) webhooks."""
        with self._lock:
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM notifications n JOIN webhooks w "
                "ON n.subscription = w.subscription WHERE n.seq > w.delivered"
            ).fetchone()
        return int(count)

    def mark_delivered(self, sub_id: str, seq: int) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE webhooks SET delivered = MAX(delivered, ?) WHERE subscription = ?",
                (seq, sub_id),
            )

    def add_dead_letter(self, hook: Webhook, seq: int, error: str, attempts: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO dead_letters (subscription, seq, url, error, attempts, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (hook.subscription, seq, hook.url, error, attempts, time.time()),
            )

    def dead_letters(self) -> list[DeadLetter]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, subscription, seq, url, error, attempts FROM dead_letters ORDER BY id"
            ).fetchall()
        return [DeadLetter(*row) for row in rows]

    def drop_dead_letter(self, letter_id: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM dead_letters WHERE id = ?", (letter_id,))

    def notification(self, sub_id: str, seq: int) -> Notification:
        found = self.notifications_after(sub_id, seq - 1, limit=1)
        if not found or found[0].seq != seq:
            msg = f"no notification {seq} of subscription {sub_id!r}"
            raise NotFound(msg)
        return found[0]
