"""What the tables of :class:`~semps.broker.store.Store` share: its two SQLite connections,
their locks, and a read under the reading lock."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["Tables"]


class Tables:
    """The base of the Store's table mixins (:class:`~semps.broker.tokens.TokenTable`,
    :class:`~semps.broker.retention.RetentionTable`) and of the Store itself."""

    _w: sqlite3.Connection  # the writing connection, under _wlock
    _db: sqlite3.Connection  # the reading connection, under _lock
    _wlock: AbstractContextManager[Any]
    _lock: AbstractContextManager[Any]

    def _rows(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        """Every row ``sql`` selects, read on the reading connection."""
        with self._lock:
            return self._db.execute(sql, args).fetchall()
