"""The broker's persistent store: one SQLite file in WAL mode.

Tables: subscriptions, tokens, events (the log of accepted events), notifications (the
outbox: per-subscription increasing sequence numbers, so a client resuming with
``Last-Event-ID`` gets every later notification and none twice; appended in commit order
and indexed in bulk, see :mod:`semps.broker.notifications`). Events and their notifications
are committed in groups (:meth:`SQLiteStore.commit_events`: many events, one transaction, one
fsync) before their publishers are answered.

Two connections: one writes (serialised by its own lock), one reads, so readers (streams,
token checks) never wait behind a commit's fsync (WAL lets them read the last commit). The
token methods live in :mod:`semps.broker.tokens`, the retention methods in
:mod:`semps.broker.retention`, the file modes and sealed webhook secrets in
:mod:`semps.broker.at_rest`.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from semps.broker import contracts
from semps.broker._tables import insert_rows
from semps.broker.at_rest import SEALED_PREFIX, SecretBox, private_dir, private_files
from semps.broker.contracts import DeadLetter, EventRecord, Notification, Webhook
from semps.broker.event_documents import EVENT_DOCUMENTS_SCHEMA, EventDocumentTable
from semps.broker.notifications import INDEX_EVERY, NOTIFICATIONS_SCHEMA, NotificationTable, Row
from semps.broker.retention import RetentionTable
from semps.broker.tokens import TokenTable
from semps.errors import StoreError, existing
from semps.graph.graph import KnowledgeGraph
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion
from semps.sqlite_errors import storage_error

__all__ = ["WRITER_CACHE_KIB", "WRITER_CHECKPOINT", "SQLiteStore"]

#: The writing connection's page cache (KiB) and its WAL checkpoint interval (pages).
WRITER_CACHE_KIB = 65_536
WRITER_CHECKPOINT = 10_000

#: Columns added to ``subscriptions`` after its first release, added to older files on open.
_LATER_COLUMNS = (("suspended", "TEXT"), ("retain_count", "INTEGER"), ("retain_age", "REAL"))

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS subscriptions (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL, owner TEXT,
    name TEXT, created REAL NOT NULL, suspended TEXT, retain_count INTEGER, retain_age REAL);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, received REAL NOT NULL, media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL, matched INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY, role TEXT NOT NULL, subject TEXT NOT NULL, created REAL NOT NULL,
    id TEXT, expires REAL, revoked REAL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS matcher_state (kind TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS webhooks (
    subscription TEXT PRIMARY KEY, url TEXT NOT NULL, secret TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT, subscription TEXT NOT NULL, seq INTEGER NOT NULL,
    url TEXT NOT NULL, error TEXT NOT NULL, attempts INTEGER NOT NULL, created REAL NOT NULL);
"""
    + NOTIFICATIONS_SCHEMA
    + EVENT_DOCUMENTS_SCHEMA
)


#: Keeps an id counter (never lowered).
_KEEP_COUNTER = (
    "INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) "
    "DO UPDATE SET value = MAX(value, excluded.value)"
)


class SQLiteStore(
    TokenTable, RetentionTable, NotificationTable, EventDocumentTable, contracts.Store
):
    """The :class:`~semps.broker.contracts.Store` contract over the broker's SQLite file
    (durable: each method commits, with an fsync, before it returns).

    ``index_every``: recent notifications that trigger indexing them (:mod:`.notifications`).
    """

    def __init__(self, path: Path, *, index_every: int = INDEX_EVERY) -> None:
        private_dir(path.parent)
        self.path = path
        self.index_every = index_every
        self._lock = threading.RLock()  # the reading connection
        self._wlock = threading.RLock()  # the writing connection
        try:
            self._w = self._connect(path)
            # The notifications' index takes its inserts at random pages: a cache that holds
            # it, and a checkpoint every WRITER_CHECKPOINT pages rather than after nearly
            # every commit (SQLite's 1,000), so a page written by many commits reaches the
            # database file once (at 10k subscriptions: 140 -> 95 us an event in commits of
            # 100, 60 in commits of 256; then the index went to bulk passes, see .notifications).
            self._w.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
            self._w.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT}")
            self._w.executescript(_SCHEMA)
            columns = {row[1] for row in self._w.execute("PRAGMA table_info(subscriptions)")}
            for column, sql_type in _LATER_COLUMNS:  # a data directory from before them
                if column not in columns:
                    self._w.execute(f"ALTER TABLE subscriptions ADD COLUMN {column} {sql_type}")
            self._migrate_tokens()
            self._db = self._connect(path)
            self._counters: dict[str, int] = {}
            self._open_notifications()
            private_files([path])
            self._box = SecretBox.from_dir(path.parent)
            self._seal_plain_secrets()
        except sqlite3.Error as exc:
            msg = f"cannot open the store {path}: {exc}"
            raise StoreError(msg) from exc

    def _seal_plain_secrets(self) -> None:
        """Seal the webhook secrets stored in clear before secrets were sealed."""
        rows = self._w.execute(
            "SELECT subscription, secret FROM webhooks WHERE secret NOT LIKE ?",
            (SEALED_PREFIX + "%",),
        ).fetchall()
        if not rows:
            return
        self._w.execute("PRAGMA secure_delete=ON")  # no copy of the clear text left behind
        for sub_id, secret in rows:
            self._w.execute(
                "UPDATE webhooks SET secret = ? WHERE subscription = ?",
                (self._box.seal(secret), sub_id),
            )
        self._w.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._w.execute("PRAGMA secure_delete=OFF")

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA busy_timeout=30000")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db

    def _rollback(self) -> None:
        """End a failed write's transaction (SQLite may have ended it already: a full disk)."""
        if self._w.in_transaction:
            try:
                self._w.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._wlock, self._lock:
            self._db.close()
            self._w.close()

    # -- subscriptions ---------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        """A new id ``<prefix><n>``; the counter is committed before it is returned, so no id
        is handed out twice, whatever becomes of the subscription."""
        return self.next_ids(prefix, 1)[0]

    def next_ids(self, prefix: str, count: int) -> list[str]:
        """``count`` new ids, the counter committed once for them all."""
        with self._wlock:
            ids = self.reserve_ids(prefix, count)
            self.keep_ids()
        return ids

    def reserve_ids(self, prefix: str, count: int) -> list[str]:
        """``count`` new ids, the counter kept by the next commit of subscriptions or
        :meth:`keep_ids` (a group's ids cost no commit of their own)."""
        with self._wlock:
            value = self._counters.get(prefix)
            if value is None:
                row = self._w.execute(
                    "SELECT value FROM counters WHERE name = ?", (prefix,)
                ).fetchone()
                value = row[0] if row else 0
            self._counters[prefix] = value + count
        return [f"{prefix}{value + i}" for i in range(1, count + 1)]

    def keep_ids(self) -> None:
        with self._wlock:
            try:
                self._w.executemany(_KEEP_COUNTER, list(self._counters.items()))
            except sqlite3.Error as exc:
                raise storage_error(exc, "cannot keep the id counter") from exc

    def put_subscriptions(self, subs: Sequence[Subscription]) -> None:
        """:meth:`put_subscription` for several, in one transaction."""
        now = time.time()
        with self._wlock:
            self._w.execute("BEGIN IMMEDIATE")
            try:
                self._w.executemany(
                    "INSERT INTO subscriptions (id, kind, text, owner, name, created) "
                    "VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, text = excluded.text, "
                    "name = excluded.name, suspended = NULL",
                    [(s.id, s.kind, s.text, s.owner, s.name, now) for s in subs],
                )
                self._w.executemany(_KEEP_COUNTER, list(self._counters.items()))
                self._w.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise storage_error(exc, f"cannot store {len(subs)} subscriptions") from exc

    def set_suspended(self, sub_id: str, reason: str | None) -> None:
        """Suspend a subscription with a reason its owner can read (``None``: resume)."""
        with self._wlock:
            self._w.execute("UPDATE subscriptions SET suspended = ? WHERE id = ?", (reason, sub_id))

    def delete_subscription(self, sub_id: str) -> None:
        with self._wlock:
            self._w.execute("BEGIN IMMEDIATE")
            try:
                self._w.execute("DELETE FROM subscriptions WHERE id = ?", (sub_id,))
                self._w.execute("DELETE FROM webhooks WHERE subscription = ?", (sub_id,))
                self._delete_notifications_of(sub_id)
                self._w.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise storage_error(exc, f"cannot delete subscription {sub_id!r}") from exc
            self._last_seq.pop(sub_id, None)
            self._last_time.pop(sub_id, None)

    def subscription(self, sub_id: str) -> Subscription:
        with self._lock:
            row = self._db.execute(
                "SELECT id, kind, text, owner, name FROM subscriptions WHERE id = ?", (sub_id,)
            ).fetchone()
        return Subscription(*existing(row, "subscription", sub_id))

    def subscriptions_with_status(
        self, owner: str | None = None
    ) -> list[tuple[Subscription, str | None]]:
        """Every subscription (of ``owner``) with its suspension reason (``None``: active),
        in creation order."""
        query = "SELECT id, kind, text, owner, name, suspended FROM subscriptions"
        args: tuple[str, ...] = ()
        if owner is not None:
            query += " WHERE owner = ?"
            args = (owner,)
        rows = self._rows(query + " ORDER BY rowid", args)
        return [(Subscription(*row[:5]), row[5]) for row in rows]

    # -- counts and saved counters ---------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """What is stored: subscriptions, tokens (active), notifications, webhooks, dead
        letters and events."""
        now = time.time()
        queries = {
            "subscriptions": ("SELECT COUNT(*) FROM subscriptions", ()),
            "tokens": (
                "SELECT COUNT(*) FROM tokens WHERE revoked IS NULL "
                "AND (expires IS NULL OR expires > ?)",
                (now,),
            ),
            "notifications_stored": ("SELECT COUNT(*) FROM notifications", ()),
            "webhooks": ("SELECT COUNT(*) FROM webhooks", ()),
            "dead_letters": ("SELECT COUNT(*) FROM dead_letters", ()),
            "events_stored": ("SELECT COUNT(*) FROM events", ()),
        }
        with self._lock:
            return {
                name: int(self._db.execute(sql, args).fetchone()[0])
                for name, (sql, args) in queries.items()
            }

    def save_counters(self, values: dict[str, int]) -> None:
        """Keep counters (metrics) across restarts, under ``metric:<name>``."""
        with self._wlock:
            self._w.executemany(
                "INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) "
                "DO UPDATE SET value = excluded.value",
                [(f"metric:{name}", int(value)) for name, value in values.items()],
            )

    def saved_counters(self) -> dict[str, int]:
        """The counters :meth:`save_counters` kept."""
        rows = self._rows("SELECT substr(name, 8), value FROM counters WHERE name LIKE 'metric:%'")
        return {str(name): int(value) for name, value in rows}

    # -- notifications ---------------------------------------------------------------------

    def matcher_state(self, kind: str) -> dict[str, object] | None:
        """The detection state last stored for a matcher kind."""
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM matcher_state WHERE kind = ?", (kind,)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def _commit(
        self, records: Sequence[EventRecord], saved: dict[str, str], within: Callable[[], None]
    ) -> list[list[tuple[str, int, str]]]:
        """Commit a group of accepted events with their notifications (and the matchers'
        detection state) in one transaction: one fsync for the group; ``within`` runs in
        it first (a knowledge graph change, see :meth:`open_graph`).

        Returns, per record, its notifications as (subscription id, seq, JSON text), the
        seqs numbered on from each subscription's last.
        """
        now = time.time()
        stamp = f"{now:.3f}"
        with self._wlock:
            last = self._last_seq
            seqs: dict[str, int] = {}
            rows: list[Row] = []
            out: list[list[tuple[str, int, str]]] = []
            row = self._first_row()
            for record in records:
                numbered = []
                event_id = record.id
                for sub_id, head in record.notes:
                    seq = seqs.get(sub_id)
                    seq = (last.get(sub_id, 0) if seq is None else seq) + 1
                    seqs[sub_id] = seq
                    text = f'{head},"id":{seq},"time":{stamp}}}'
                    rows.append((row, sub_id, seq, event_id, text, now))
                    numbered.append((sub_id, seq, text))
                    row += 1
                out.append(numbered)
            try:
                self._w.execute("BEGIN IMMEDIATE")
                within()
                insert_rows(
                    self._w,
                    "events",
                    5,
                    [
                        (r.id, r.received, r.media_type, r.size, len(r.notes))
                        for r in records
                        if r.logged
                    ],
                    or_ignore=True,
                )
                self._append_rows(rows)
                self._insert_documents(records)
                self._w.executemany(
                    "INSERT INTO matcher_state VALUES (?, ?) "
                    "ON CONFLICT(kind) DO UPDATE SET state = excluded.state",
                    list(saved.items()),
                )
                self._w.execute("COMMIT")
            except (sqlite3.Error, TypeError, ValueError) as exc:
                self._rollback()
                self._document_total = None  # counted again from what was committed
                what = f"cannot store {len(records)} events and their notifications"
                if isinstance(exc, sqlite3.Error):
                    raise storage_error(exc, what) from exc
                raise StoreError(f"{what}: {exc}") from exc
            except BaseException:  # within's own error (the graph's StoreError, ...)
                self._rollback()
                self._document_total = None
                raise
            self._rows_appended(len(rows))
            last.update(seqs)
            self._last_time.update(dict.fromkeys(seqs, now))
            self._index_due()
        return out

    def open_graph(
        self, expansion: Expansion, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[KnowledgeGraph, Path | None]:
        """The knowledge graph in this file's ``graph_*`` tables, on the writing connection
        (its changes commit with :meth:`commit_events`' transaction); the workers read the
        file. A graph closed under another ontology is closed again under ``expansion``
        and stored here.

        Raises:
            StoreError: the tables cannot be read or written.
        """
        with self._wlock:
            graph = KnowledgeGraph.open(self._w, expansion, limits=limits)
        return graph, self.path

    def notifications_after(self, sub_id: str, after: int, limit: int = 500) -> list[Notification]:
        with self._lock, self._reading():
            rows = list(
                self._read_after(sub_id, after, limit, "n.subscription, n.seq, n.event, n.payload")
            )
        return [Notification(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    # -- webhooks --------------------------------------------------------------------------

    def set_webhook(self, sub_id: str, url: str) -> str:
        """Attach a callback URL to a subscription; returns its new HMAC secret."""
        secret = secrets.token_hex(16)
        with self._wlock:
            try:
                self._w.execute(
                    "INSERT INTO webhooks VALUES (?, ?, ?, 0) ON CONFLICT(subscription) DO "
                    "UPDATE SET url = excluded.url, secret = excluded.secret",
                    (sub_id, url, self._box.seal(secret)),
                )
            except sqlite3.Error as exc:
                raise storage_error(exc, f"cannot store the webhook of {sub_id!r}") from exc
        return secret

    def webhooks(self) -> list[Webhook]:
        rows = self._rows("SELECT subscription, url, secret, delivered FROM webhooks")
        return [self._webhook(row) for row in rows]

    def _webhook(self, row: tuple[str, str, str, int]) -> Webhook:
        """A webhook row with its secret opened."""
        return Webhook(row[0], row[1], self._box.open(row[2]), row[3])

    def webhook_backlog(self) -> int:
        """Notifications stored but not yet delivered to (or dead-lettered from) webhooks."""
        with self._lock, self._reading():
            (indexed,) = self._db.execute(
                "SELECT COUNT(*) FROM webhooks w CROSS JOIN notification_index i "
                "ON i.subscription = w.subscription WHERE i.seq > w.delivered"
            ).fetchone()
            (recent,) = self._db.execute(
                "SELECT COUNT(*) FROM notifications n CROSS JOIN webhooks w "
                "ON w.subscription = n.subscription WHERE n.row > ? AND n.seq > w.delivered",
                (self._read_indexed(),),
            ).fetchone()
        return int(indexed) + int(recent)

    def mark_delivered(self, sub_id: str, seq: int) -> None:
        with self._wlock:
            self._w.execute(
                "UPDATE webhooks SET delivered = MAX(delivered, ?) WHERE subscription = ?",
                (seq, sub_id),
            )

    def add_dead_letter(self, hook: Webhook, seq: int, error: str, attempts: int) -> None:
        with self._wlock:
            self._w.execute(
                "INSERT INTO dead_letters (subscription, seq, url, error, attempts, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (hook.subscription, seq, hook.url, error, attempts, time.time()),
            )

    def dead_letters(self) -> list[DeadLetter]:
        rows = self._rows(
            "SELECT id, subscription, seq, url, error, attempts FROM dead_letters ORDER BY id"
        )
        return [DeadLetter(*row) for row in rows]

    def drop_dead_letter(self, letter_id: int) -> None:
        with self._wlock:
            self._w.execute("DELETE FROM dead_letters WHERE id = ?", (letter_id,))

    # -- streaming and delivery reads (raw JSON text, no json round-trip) -----------------

    def notification_texts_after(
        self, sub_id: str, after: int, limit: int = 200, max_bytes: int = 256 * 1024
    ) -> list[tuple[int, str]]:
        """Notifications of ``sub_id`` after seq ``after``, as (seq, JSON text), in seq
        order: one page of a stream's replay, at most ``limit`` of them and, past the first,
        at most ``max_bytes`` of text."""
        page: list[tuple[int, str]] = []
        size = 0
        with self._lock, self._reading():
            rows = self._read_after(sub_id, after, limit, "n.seq, n.payload")
            for seq, payload in rows:
                size += len(payload)
                if page and size > max_bytes:
                    break
                page.append((int(seq), str(payload)))
            rows.close()  # its statements end before the read does, even when stopped early
        return page

    def has_webhooks(self) -> bool:
        with self._lock:
            (found,) = self._db.execute("SELECT EXISTS (SELECT 1 FROM webhooks)").fetchone()
        return bool(found)

    def pending_webhooks(self) -> list[Webhook]:
        """The webhooks that have notifications after their last delivered seq."""
        with self._lock, self._reading():
            rows = self._db.execute(
                "SELECT w.subscription, w.url, w.secret, w.delivered, EXISTS (SELECT 1 "
                "FROM notification_index i WHERE i.subscription = w.subscription "
                "AND i.seq > w.delivered) FROM webhooks w"
            ).fetchall()
            # A webhook whose subscription's last seq is delivered has nothing pending; the
            # recent part is read (one pass) only when some other has nothing indexed.
            last = self._last_seq
            undecided = any(not r[4] and last.get(r[0], 0) > r[3] for r in rows)
            recent = self._recent_lasts() if undecided else {}
        return [self._webhook(row[:4]) for row in rows if row[4] or recent.get(row[0], 0) > row[3]]
