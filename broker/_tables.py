"""What the tables of :class:`~semps.broker.store.Store` share: its two SQLite connections,
their locks, and a read under the reading lock."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["Tables", "delete_in", "insert_rows"]

#: Rows one INSERT statement takes at most (then halves: 256, 128, ..., 1, one cached
#: statement per size).
_CHUNK = 256


def insert_rows(
    db: sqlite3.Connection,
    table: str,
    width: int,
    rows: Sequence[Sequence[object]],
    *,
    or_ignore: bool = False,
) -> None:
    """Insert ``rows`` of ``width`` values into ``table`` (``INSERT OR IGNORE`` with
    ``or_ignore``) with multi-row ``VALUES`` statements of 256, 128, ... 1 rows.

    Why not ``executemany``: it steps SQLite once per row, and releases and retakes the GIL
    around each step. With another thread of the process busy (the server's event loop),
    each retake can wait for that thread's switch interval: 3,150 rows a commit cost 9.6 us
    of CPU a row against 2.6 this way (2.0 and 1.7 without the other thread).
    """
    at, size = 0, _CHUNK
    while at < len(rows):
        while size > len(rows) - at:
            size //= 2
        values = [v for row in rows[at : at + size] for v in row]
        db.execute(_statement(table, width, size, or_ignore), values)
        at += size


def delete_in(
    db: sqlite3.Connection, sql: str, values: Sequence[object], args: Sequence[object] = ()
) -> None:
    """Run ``sql``, a ``DELETE`` ending in ``IN``, for ``values`` in chunks of 256, 128,
    ... 1 (a list of placeholders is appended; ``args`` are bound before them): one step a
    chunk, not one a value (see :func:`insert_rows`)."""
    at, size = 0, _CHUNK
    while at < len(values):
        while size > len(values) - at:
            size //= 2
        db.execute(_in_statement(sql, size), [*args, *values[at : at + size]])
        at += size


_in_statements: dict[tuple[str, int], str] = {}


def _in_statement(sql: str, size: int) -> str:
    found = _in_statements.get((sql, size))
    if found is None:
        found = _in_statements[(sql, size)] = f"{sql} ({','.join('?' * size)})"
    return found


_statements: dict[tuple[str, int, int, bool], str] = {}


def _statement(table: str, width: int, size: int, or_ignore: bool) -> str:
    """The statement's text, made once (``table``: one of ours, never user input)."""
    key = (table, width, size, or_ignore)
    found = _statements.get(key)
    if found is None:
        row = "(" + ",".join("?" * width) + ")"
        verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
        found = _statements[key] = f"{verb} INTO {table} VALUES " + ",".join([row] * size)
    return found


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
