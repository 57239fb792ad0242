"""What the tables of :class:`~semps.broker.sqlite_store.SQLiteStore` share: its two SQLite
connections, their locks, and a read under the reading lock."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from functools import cache
from typing import Any

__all__ = ["Tables", "delete_in", "insert_rows"]

#: Rows (or values) one statement takes at most; the rest go in statements of 128, 64, ...
#: 1, so there is one statement text per size.
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
    of CPU a row against 2.6 this way (2.0 and 1.7 without the other thread;
    ``bench/sqlite_inserts.py``).
    """
    for at, size in _chunks(len(rows)):
        values = [v for row in rows[at : at + size] for v in row]
        db.execute(_insert_statement(table, width, size, or_ignore), values)


def delete_in(
    db: sqlite3.Connection, sql: str, values: Sequence[object], args: Sequence[object] = ()
) -> None:
    """Run ``sql``, a ``DELETE`` ending in ``IN``, for ``values`` in chunks of 256, 128,
    ... 1 (a list of placeholders is appended; ``args`` are bound before them): one step a
    chunk, not one a value (see :func:`insert_rows`)."""
    for at, size in _chunks(len(values)):
        db.execute(_in_statement(sql, size), [*args, *values[at : at + size]])


def _chunks(n: int) -> Iterator[tuple[int, int]]:
    """(start, size) of the chunks of ``n`` items: 256 at a time, then halving."""
    at, size = 0, _CHUNK
    while at < n:
        while size > n - at:
            size //= 2
        yield at, size
        at += size


@cache
def _insert_statement(table: str, width: int, size: int, or_ignore: bool) -> str:
    """The statement's text (``table``: one of ours, never user input)."""
    row = "(" + ",".join("?" * width) + ")"
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    return f"{verb} INTO {table} VALUES " + ",".join([row] * size)


@cache
def _in_statement(sql: str, size: int) -> str:
    return f"{sql} ({','.join('?' * size)})"


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
