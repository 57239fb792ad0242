"""The event documents of :class:`~semps.broker.sqlite_store.SQLiteStore`: one row per
published event (its bytes, publisher, media type and the subscriptions it notified),
written in the transaction that commits the event, and bounded: past
:data:`~semps.broker.contracts.EVENT_DOCUMENT_BYTES` in all, the oldest rows go in that same
transaction; the retention pass drops those older than ``retain_age`` with the event log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from semps.broker.contracts import EVENT_DOCUMENT_BYTES, EventRecord, StoredEvent
from semps.errors import existing

EVENT_DOCUMENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS event_documents (
    id TEXT PRIMARY KEY, publisher TEXT NOT NULL, received REAL NOT NULL,
    media_type TEXT NOT NULL, body BLOB NOT NULL, notified TEXT NOT NULL);
"""


class EventDocumentTable:
    """The event document methods of the SQLite store (see the module docstring)."""

    _w: sqlite3.Connection
    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]
    document_bytes: int = EVENT_DOCUMENT_BYTES
    _document_total: int | None = None

    def _insert_documents(self, records: Sequence[EventRecord]) -> None:
        """Store the records' documents (inside the caller's transaction), then drop the
        oldest while the total passes the bound."""
        rows = [
            (
                r.id,
                r.publisher,
                r.received,
                r.media_type,
                r.body,
                json.dumps(sorted({sub for sub, _ in r.notes})),
            )
            for r in records
            if r.body and len(r.body) <= self.document_bytes
        ]
        if not rows:
            return
        if self._document_total is None:
            found = self._w.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM event_documents")
            self._document_total = int(found.fetchone()[0])
        cursor = self._w.executemany(
            "INSERT OR IGNORE INTO event_documents VALUES (?, ?, ?, ?, ?, ?)", rows
        )
        if cursor.rowcount:
            self._document_total += sum(len(r[4]) for r in rows)
        while self._document_total > self.document_bytes:
            oldest = self._w.execute(
                "SELECT rowid, LENGTH(body) FROM event_documents ORDER BY rowid LIMIT 64"
            ).fetchall()
            for rowid, size in oldest:
                if self._document_total <= self.document_bytes:
                    break
                self._w.execute("DELETE FROM event_documents WHERE rowid = ?", (rowid,))
                self._document_total -= size

    def _prune_documents(self, before: float) -> int:
        """Drop the documents received before ``before`` (the retention pass)."""
        cursor = self._w.execute("DELETE FROM event_documents WHERE received < ?", (before,))
        self._document_total = None  # counted again at the next commit
        return cursor.rowcount

    def event_document(self, event_id: str) -> StoredEvent:
        """The stored document of an event (NotFound: none, or no longer kept)."""
        with self._lock:
            row = self._db.execute(
                "SELECT publisher, received, media_type, body, notified FROM event_documents "
                "WHERE id = ?",
                (event_id,),
            ).fetchone()
        publisher, received, media_type, body, notified = existing(row, "event", event_id)
        return StoredEvent(
            event_id, publisher, received, media_type, bytes(body), tuple(json.loads(notified))
        )
