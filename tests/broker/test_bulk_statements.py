"""Multi-row inserts and chunked ``IN`` deletes (what commits and retention use instead of
``executemany``) write and delete exactly the rows given, whatever their number."""

from __future__ import annotations

import sqlite3

import pytest

from semps.broker._tables import delete_in, insert_rows


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a TEXT, b REAL)")
    return db


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 255, 256, 257, 511, 600, 1000])
def test_every_row_is_inserted_once_in_order(n: int) -> None:
    db = _db()
    rows = [(k, f"v{k}", k / 2) for k in range(n)]
    insert_rows(db, "t", 3, rows)
    assert db.execute("SELECT k, a, b FROM t ORDER BY rowid").fetchall() == rows


def test_or_ignore_keeps_the_row_already_there() -> None:
    db = _db()
    insert_rows(db, "t", 3, [(1, "first", 0.0)])
    insert_rows(db, "t", 3, [(1, "second", 0.0), (2, "new", 0.0)], or_ignore=True)
    assert db.execute("SELECT k, a FROM t ORDER BY k").fetchall() == [(1, "first"), (2, "new")]
    with pytest.raises(sqlite3.IntegrityError):
        insert_rows(db, "t", 3, [(1, "again", 0.0)])


@pytest.mark.parametrize("n", [0, 1, 5, 256, 300, 777])
def test_delete_in_removes_exactly_the_values_given(n: int) -> None:
    db = _db()
    insert_rows(db, "t", 3, [(k, "x" if k % 2 else "y", 0.0) for k in range(1000)])
    gone = list(range(0, 2 * n, 2))[:n]  # even keys: a = 'y'
    delete_in(db, "DELETE FROM t WHERE a = ? AND k IN", gone, ("y",))
    left = {k for (k,) in db.execute("SELECT k FROM t")}
    assert left == set(range(1000)) - set(gone)
    delete_in(db, "DELETE FROM t WHERE a = ? AND k IN", [1, 3], ("y",))  # odd: a = 'x'
    assert {1, 3} <= {k for (k,) in db.execute("SELECT k FROM t")}
