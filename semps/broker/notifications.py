"""The notifications' table in the store: appended in commit order, indexed in bulk.

Each stored notification is a row of ``notifications``, numbered (``row``) in the order it
was committed; ``notification_index`` maps (subscription, seq) to its row. A commit only
appends rows: the index is brought up to date later, for many commits at once, when
:attr:`NotificationTable.index_every` rows wait for it. The rows above the counter
``notifications:indexed`` are the *recent* part: a read of a subscription's notifications
takes the indexed ones through the index and the recent ones by scanning that part (at most
``index_every`` rows, about 0.3 ms), in one read transaction, so a read never sees a row
twice or misses one being indexed meanwhile. A subscription's seqs grow with its rows, so
its indexed notifications always come before its recent ones.

Why: a commit of a few hundred events inserts thousands of notifications for as many
subscriptions, each at its own place in a (subscription, seq) index, so each commit
rewrote thousands of index pages to the WAL (about 30 KB an event at 10k subscriptions).
Indexed in bulk, a page is written once for many commits: the broker's main process went
from 338 to 262-274 us of CPU an event in single posts, 102 to 85-88 in batches
(``bench/service.py --subs 10000``, side by side with the commit before).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Generator, Sequence
from typing import Any

from semps.broker._tables import Tables, delete_in, insert_rows
from semps.broker.contracts import Activity

__all__ = ["INDEX_EVERY", "NOTIFICATIONS_SCHEMA", "NotificationTable"]

_log = logging.getLogger("semps.store")

#: Recent rows that trigger indexing them (each indexing pass takes ~1 us a row).
INDEX_EVERY = 32_768

NOTIFICATIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    row INTEGER PRIMARY KEY, subscription TEXT NOT NULL, seq INTEGER NOT NULL,
    event TEXT NOT NULL, payload TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS notification_index (
    subscription TEXT NOT NULL, seq INTEGER NOT NULL, row INTEGER NOT NULL,
    PRIMARY KEY (subscription, seq)) WITHOUT ROWID;
"""

_INDEXED = "notifications:indexed"
#: A row to append: (row number, subscription, seq, event, payload, created), the row
#: numbered from :meth:`NotificationTable._first_row`.
Row = tuple[int, str, int, str, str, float]


class NotificationTable(Tables):
    """The notification methods of :class:`~semps.broker.sqlite_store.SQLiteStore` that know the
    table's two parts (see the module docstring)."""

    index_every: int = INDEX_EVERY
    _last_seq: dict[str, int]
    _next_row: int  # the next row number (rows are numbered by the store, never reused)
    _indexed: int  # every row up to this one is in the index
    #: When each subscription was last notified: set by commits, and at open for the recent
    #: part; an indexed one is looked up (and kept) when :meth:`activity` is asked.
    _last_time: dict[str, float]

    def _open_notifications(self) -> None:
        """Migrate a file from before the index (its notifications keyed by (subscription,
        seq)), then read where the rows and the index stand. On the writer, at open."""
        columns = {r[1] for r in self._w.execute("PRAGMA table_info(notifications)")}
        if "row" not in columns:
            self._migrate_notifications()
        self._indexed = _indexed_mark(self._w)
        (top,) = self._w.execute("SELECT MAX(row) FROM notifications").fetchone()
        self._next_row = max(self._indexed, top or 0) + 1
        last: dict[str, int] = dict(
            self._w.execute(
                "SELECT subscription, MAX(seq) FROM notification_index GROUP BY subscription"
            ).fetchall()
        )
        last.update(self._recent_lasts())  # a recent seq is above every indexed one
        self._last_seq = last
        self._last_time = self._recent_last_times()

    def _migrate_notifications(self) -> None:
        _log.info("indexing the stored notifications for this version (once)")
        w = self._w
        w.execute("BEGIN IMMEDIATE")
        try:
            w.execute("ALTER TABLE notifications RENAME TO notifications_before_index")
            for statement in NOTIFICATIONS_SCHEMA.split(";"):
                if statement.strip():
                    w.execute(statement)
            w.execute(
                "INSERT INTO notifications SELECT rowid, subscription, seq, event, payload, "
                "created FROM notifications_before_index ORDER BY rowid"
            )
            w.execute(
                "INSERT INTO notification_index SELECT subscription, seq, rowid "
                "FROM notifications_before_index ORDER BY subscription, seq"
            )
            (top,) = w.execute("SELECT MAX(row) FROM notifications").fetchone()
            w.execute("INSERT OR REPLACE INTO counters VALUES (?, ?)", (_INDEXED, top or 0))
            w.execute("DROP TABLE notifications_before_index")
            w.execute("COMMIT")
        except sqlite3.Error:
            if w.in_transaction:
                w.execute("ROLLBACK")
            raise

    # -- writing (under the writer's lock) ----------------------------------------------------

    def _first_row(self) -> int:
        """The number of the next row to append (the caller numbers its rows on from it)."""
        return self._next_row

    def _append_rows(self, rows: Sequence[Row]) -> None:
        """Append notifications inside the caller's transaction, numbered on from
        :meth:`_first_row`."""
        insert_rows(self._w, "notifications", 6, rows)

    def _rows_appended(self, count: int) -> None:
        """The caller's transaction with ``count`` appended rows committed."""
        self._next_row += count

    def _index_due(self) -> None:
        """Index the recent rows if :attr:`index_every` of them wait (their rows are
        committed already: a failure here is logged, and the next commit tries again)."""
        top = self._next_row - 1
        if top - self._indexed < self.index_every:
            return
        try:
            self._w.execute("BEGIN IMMEDIATE")
            self._w.execute(
                "INSERT INTO notification_index SELECT subscription, seq, row FROM notifications "
                "WHERE row > ? AND row <= ? ORDER BY subscription, seq",
                (self._indexed, top),
            )
            self._w.execute(
                "INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) "
                "DO UPDATE SET value = excluded.value",
                (_INDEXED, top),
            )
            self._w.execute("COMMIT")
            self._indexed = top
        except sqlite3.Error:
            if self._w.in_transaction:
                self._w.execute("ROLLBACK")
            _log.exception("cannot index the recent notifications (retried at the next commit)")

    def _delete_notifications_of(self, sub_id: str) -> None:
        """Every stored notification of ``sub_id``, inside the caller's transaction."""
        w = self._w
        w.execute(
            "DELETE FROM notifications WHERE row IN "
            "(SELECT row FROM notification_index WHERE subscription = ?)",
            (sub_id,),
        )
        w.execute("DELETE FROM notification_index WHERE subscription = ?", (sub_id,))
        w.execute(
            "DELETE FROM notifications WHERE row > ? AND subscription = ?",
            (self._indexed, sub_id),
        )

    def _delete_oldest(
        self,
        sub_id: str,
        below: int,
        before: float,
        limit: int,
        recent: tuple[int, float] | None,
    ) -> int:
        """Delete ``sub_id``'s oldest notifications (seq under ``below``, created before
        ``before``), at most ``limit``, inside the caller's transaction; ``recent``: (seq,
        created) of its first recent notification when the pass began (``None``: it had
        none; rows indexed since are found through the index, and rows stored since are
        never old enough to go)."""
        w = self._w
        cold = w.execute(
            "SELECT i.seq, i.row FROM notification_index i CROSS JOIN notifications n "
            "ON n.row = i.row WHERE i.subscription = ? AND i.seq < ? AND n.created < ? "
            "ORDER BY i.seq LIMIT ?",
            (sub_id, below, before, limit),
        ).fetchall()
        rows = [r for _, r in cold]
        if cold:
            delete_in(
                w,
                "DELETE FROM notification_index WHERE subscription = ? AND seq IN",
                [seq for seq, _ in cold],
                (sub_id,),
            )
        if len(rows) < limit and recent is not None and recent[0] < below and recent[1] < before:
            rows += [
                r
                for (r,) in w.execute(
                    "SELECT row FROM notifications WHERE row > ? AND subscription = ? "
                    "AND seq < ? AND created < ? ORDER BY row LIMIT ?",
                    (self._indexed, sub_id, below, before, limit - len(rows)),
                )
            ]
        delete_in(w, "DELETE FROM notifications WHERE row IN", rows)
        return len(rows)

    # -- reading (on the reading connection, in one read transaction) ------------------------

    def _read_indexed(self) -> int:
        """The last indexed row, as the reading connection's transaction sees it."""
        return _indexed_mark(self._db)

    def _read_after(
        self, sub_id: str, after: int, limit: int, columns: str
    ) -> Generator[tuple[Any, ...], None, None]:
        """``columns`` (of ``n``, the notifications) of ``sub_id``'s notifications after seq
        ``after``, in seq order, at most ``limit``: the indexed ones, then the recent ones.
        Iterate with the reading lock held, inside :meth:`_reading`."""
        db = self._db
        indexed = self._read_indexed()
        n = 0
        cursor = db.execute(
            f"SELECT {columns} FROM notification_index i CROSS JOIN notifications n "  # noqa: S608
            "ON n.row = i.row WHERE i.subscription = ? AND i.seq > ? ORDER BY i.seq LIMIT ?",
            (sub_id, after, limit),
        )
        try:
            for row in cursor:
                n += 1
                yield row
            if n < limit:
                cursor.close()
                cursor = db.execute(
                    f"SELECT {columns} FROM notifications n WHERE n.row > ? "  # noqa: S608
                    "AND n.subscription = ? AND n.seq > ? ORDER BY n.row LIMIT ?",
                    (indexed, sub_id, after, limit - n),
                )
                yield from cursor
        finally:
            cursor.close()

    def _reading(self) -> _ReadTransaction:
        """One read transaction on the reading connection (hold the reading lock)."""
        return _ReadTransaction(self._db)

    def _recent_firsts(self) -> dict[str, tuple[int, float]]:
        """(seq, created) of each subscription's first recent notification (in a read
        transaction)."""
        return {
            sub: (int(seq), float(created))
            for sub, _, seq, created in self._db.execute(
                "SELECT subscription, MIN(row), seq, created FROM notifications WHERE row > ? "
                "GROUP BY subscription",
                (self._read_indexed(),),
            )
        }

    def _first_indexed(self, sub_id: str) -> tuple[int, float] | None:
        """(seq, created) of ``sub_id``'s oldest indexed notification (in a read
        transaction)."""
        row = self._db.execute(
            "SELECT i.seq, n.created FROM notification_index i CROSS JOIN notifications n "
            "ON n.row = i.row WHERE i.subscription = ? ORDER BY i.seq LIMIT 1",
            (sub_id,),
        ).fetchone()
        return (int(row[0]), float(row[1])) if row else None

    def activity(self, sub_ids: Sequence[str]) -> dict[str, Activity]:
        """:class:`Activity` of each id: its last seq and time from memory, the time of one
        not notified since the store opened by one lookup in the index (an index point
        read each: bounded by the ids asked). The dictionaries are read without the
        writer's lock (a commit holds it through its fsync); each read is atomic."""
        found: dict[str, Activity] = {}
        missing: list[tuple[str, int]] = []
        for sub_id in sub_ids:
            seq = self._last_seq.get(sub_id, 0)
            when = self._last_time.get(sub_id)
            found[sub_id] = Activity(seq, when)
            if seq and when is None:
                missing.append((sub_id, seq))
        if missing:
            with self._lock, self._reading():
                for sub_id, seq in missing:
                    row = self._db.execute(
                        "SELECT n.created FROM notification_index i CROSS JOIN notifications n "
                        "ON n.row = i.row WHERE i.subscription = ? AND i.seq = ?",
                        (sub_id, seq),
                    ).fetchone()
                    if row is not None:  # None: pruned
                        when = self._last_time.setdefault(sub_id, float(row[0]))
                        found[sub_id] = Activity(seq, when)
        return found

    def _recent_last_times(self) -> dict[str, float]:
        """When each subscription with recent notifications got its last (in a read
        transaction; SQLite takes ``created`` from the row holding the ``MAX``)."""
        return {
            sub: float(created)
            for sub, _, created in self._db.execute(
                "SELECT subscription, MAX(seq), created FROM notifications WHERE row > ? "
                "GROUP BY subscription",
                (self._read_indexed(),),
            )
        }

    def _recent_lasts(self) -> dict[str, int]:
        """Each subscription's last recent seq (in a read transaction)."""
        return dict(
            self._db.execute(
                "SELECT subscription, MAX(seq) FROM notifications WHERE row > ? "
                "GROUP BY subscription",
                (self._read_indexed(),),
            ).fetchall()
        )


def _indexed_mark(db: sqlite3.Connection) -> int:
    """The last indexed row (0: none), as ``db`` sees it."""
    found = db.execute("SELECT value FROM counters WHERE name = ?", (_INDEXED,)).fetchone()
    return int(found[0]) if found else 0


class _ReadTransaction:
    """``with``: BEGIN ... COMMIT on a connection in autocommit mode (a WAL snapshot)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, *exc: object) -> None:
        if self._db.in_transaction:
            self._db.execute("COMMIT")
