"""The knowledge graph's durable form: tables in an SQLite database.

The graph lives in the same SQLite file as the broker's store (``semps.sqlite3`` in the
data directory), so the service commits a graph change and the notifications it causes in
one transaction, with one fsync. :class:`GraphStore` writes into a connection it is given
and never commits: the caller's transaction decides.

Tables (``graph_`` prefix):

- ``graph_meta``: the version, the fingerprint of the ontology the closure was computed
  under, the format.
- ``graph_terms``: every term by id, as N-Triples text.
- ``graph_segments``: the closure's base arrays by predicate (sorted ``subject << 32 |
  object`` keys as little-endian ``int64``, asserted flags as packed bits), in parts of at
  most :data:`PART` triples: 8.1 bytes a closure triple.
- ``graph_log``: small changes since the segments were written, one row per triple and
  its new state (absent, inferred, asserted); replayed on open, folded into the segments by
  :meth:`GraphStore.compact` (and by any large change).

A restart reads the terms, the segments and the log: the closure is never recomputed
(unless the ontology changed meanwhile).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

import numpy as np

from semps.errors import StoreError
from semps.graph.change import GraphChange, IntArray, count
from semps.graph.terms import decode, encode
from semps.graph.triples import COMPACT_AT, MASK, Segment
from semps.graph.view import GraphView
from semps.ontology.expansion import Expansion
from semps.sqlite_errors import storage_error

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_segments (
    p INTEGER NOT NULL, part INTEGER NOT NULL, keys BLOB NOT NULL, flags BLOB NOT NULL,
    PRIMARY KEY (p, part));
CREATE TABLE IF NOT EXISTS graph_log (
    seq INTEGER PRIMARY KEY, p INTEGER NOT NULL, key INTEGER NOT NULL, state INTEGER NOT NULL);
"""

#: Triples per segment row (a 32 MiB blob of keys at most).
PART = 1 << 22
#: A change touching more triples of a predicate than this rewrites its segment rather
#: than logging rows.
LOG_ROWS = COMPACT_AT
#: The log is folded into the segments once it holds this many rows.
LOG_MAX = 1 << 18
FORMAT = "1"
ABSENT, INFERRED, ASSERTED = 0, 1, 2


def fingerprint(expansion: Expansion) -> str:
    """A digest of an ontology's rule tables (equal tables, equal digests)."""
    names = ("properties", "classes", "domains", "ranges", "svf", "has_value", "class_values")
    tables: dict[str, object] = {
        name: sorted(
            (repr(k), repr(sorted(map(repr, v)))) for k, v in getattr(expansion, name).items()
        )
        for name in (*names, "members", "avf")
    }
    tables["transitive"] = sorted(expansion.transitive)
    text = json.dumps(tables, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class GraphStore:
    """The graph's tables in an SQLite connection (see the module docstring).

    The methods that write (:meth:`write`, :meth:`compact`, :meth:`set_meta`) run inside
    the caller's transaction and do not commit.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        try:
            conn.executescript(SCHEMA)
        except sqlite3.Error as exc:
            msg = f"cannot create the knowledge graph's tables: {exc}"
            raise StoreError(msg) from exc

    # -- reading ------------------------------------------------------------------------------

    def meta(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM graph_meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, name: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO graph_meta VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value),
        )

    def read(self, view: GraphView) -> None:
        """Fill an empty view with the stored graph (terms, segments, then the log)."""
        try:
            rows = self.conn.execute("SELECT id, term FROM graph_terms ORDER BY id").fetchall()
            for expected, (term_id, text) in enumerate(rows):
                if term_id != expected:
                    msg = f"the knowledge graph's term {expected} is missing"
                    raise StoreError(msg)
                view.terms.intern(decode(text))
            parts: dict[int, list[tuple[bytes, bytes, int]]] = {}
            for p, _, keys, flags in self.conn.execute(
                "SELECT p, part, keys, flags FROM graph_segments ORDER BY p, part"
            ):
                parts.setdefault(p, []).append((keys, flags, len(keys) // 8))
            for p, chunks in parts.items():
                so = np.concatenate([np.frombuffer(k, dtype="<i8") for k, _, _ in chunks])
                flags = np.concatenate(
                    [
                        np.unpackbits(np.frombuffer(f, np.uint8))[:n].astype(np.bool_)
                        for _, f, n in chunks
                    ]
                )
                view.triples.segments[p] = Segment(so.astype(np.int64), flags)
            for p, key, state in self.conn.execute(
                "SELECT p, key, state FROM graph_log ORDER BY seq"
            ):
                s, o = key >> 32, key & MASK
                if state == ABSENT:
                    view.triples.remove(p, s, o)
                else:
                    if not view.triples.add(p, s, o, state == ASSERTED) and state == INFERRED:
                        view.triples.set_asserted(p, s, o, False)
            view.triples.compact()
            version = self.meta("version")
            view.version = int(version) if version is not None else 0
        except (sqlite3.Error, ValueError) as exc:
            msg = f"cannot read the knowledge graph: {exc}"
            raise StoreError(msg) from exc

    def log_rows(self) -> int:
        """Rows in the log (changes not yet folded into the segments)."""
        return int(self.conn.execute("SELECT count(*) FROM graph_log").fetchone()[0])

    def size(self) -> dict[str, int]:
        """Bytes the graph's tables hold (payload: keys, flags and term texts)."""
        q = self.conn.execute
        segments = q("SELECT coalesce(sum(length(keys) + length(flags)), 0) FROM graph_segments")
        terms = q("SELECT coalesce(sum(length(term)), 0), count(*) FROM graph_terms").fetchone()
        return {
            "segment_bytes": int(segments.fetchone()[0]),
            "term_bytes": int(terms[0]),
            "terms": int(terms[1]),
            "log_rows": self.log_rows(),
        }

    # -- writing ------------------------------------------------------------------------------

    def write(self, change: GraphChange, view: GraphView) -> None:
        """Write ``change`` (``view`` has it applied already): its new terms, then per
        predicate log rows, or the predicate's whole segment when the change is large; the
        log folded in when it grows past :data:`LOG_MAX`."""
        if view.version != change.version:
            msg = f"the view is at version {view.version}, the change makes {change.version}"
            raise StoreError(msg)
        try:
            self._write(change, view)
        except sqlite3.Error as exc:  # a full disk is 507, another failure 503: not the edit's
            raise storage_error(exc, "cannot write the knowledge graph") from exc

    def _write(self, change: GraphChange, view: GraphView) -> None:
        q = self.conn
        q.executemany(
            "INSERT INTO graph_terms VALUES (?, ?)",
            ((change.first_term + i, encode(t)) for i, t in enumerate(change.new_terms)),
        )
        parts = (change.added, change.removed, change.asserted, change.unasserted)
        touched = sorted(set().union(*parts))
        large = change.ontology or change_size(change) > LOG_MAX // 4  # a bulk load
        whole, rows = [], []
        for p in touched:
            n = sum(len(part.get(p, ())) for part in parts)
            if n > LOG_ROWS or large:
                whole.append(p)
            else:
                rows.extend(self._log_rows(p, change, view))
        for p in whole:
            self._write_segment(p, view)
        q.executemany("INSERT INTO graph_log (p, key, state) VALUES (?, ?, ?)", rows)
        self.set_meta("version", str(change.version))
        self.set_meta("format", FORMAT)
        if self.log_rows() > LOG_MAX:
            self.compact(view)

    @staticmethod
    def _log_rows(p: int, change: GraphChange, view: GraphView) -> list[tuple[int, int, int]]:
        keys: set[int] = set()
        none = np.zeros(0, dtype=np.int64)
        for part in (change.added, change.removed, change.asserted, change.unasserted):
            keys.update(part.get(p, none).tolist())
        seg = view.triples.segments.get(p)
        out = []
        for key in sorted(keys):
            s, o = key >> 32, key & MASK
            if seg is None or not seg.has(s, o):
                state = ABSENT
            else:
                state = ASSERTED if seg.is_asserted(s, o) else INFERRED
            out.append((p, key, state))
        return out

    def _write_segment(self, p: int, view: GraphView) -> None:
        q = self.conn
        q.execute("DELETE FROM graph_segments WHERE p = ?", (p,))
        q.execute("DELETE FROM graph_log WHERE p = ?", (p,))
        seg = view.triples.segments.get(p)
        if seg is None:
            return
        so, flags = seg.packed()
        for part, start in enumerate(range(0, len(so), PART)):
            keys: IntArray = so[start : start + PART]
            q.execute(
                "INSERT INTO graph_segments VALUES (?, ?, ?, ?)",
                (
                    p,
                    part,
                    keys.astype("<i8").tobytes(),
                    np.packbits(flags[start : start + PART]).tobytes(),
                ),
            )

    def write_all(self, view: GraphView) -> None:
        """Write the whole view (terms, every segment, the version), replacing what the
        tables held."""
        q = self.conn
        try:
            q.execute("DELETE FROM graph_terms")
            q.execute("DELETE FROM graph_segments")
            q.execute("DELETE FROM graph_log")
            q.executemany(
                "INSERT INTO graph_terms VALUES (?, ?)",
                ((i, encode(t)) for i, t in enumerate(view.terms.by_id)),
            )
            for p in view.triples.segments:
                self._write_segment(p, view)
            self.set_meta("version", str(view.version))
            self.set_meta("format", FORMAT)
        except sqlite3.Error as exc:  # a full disk is 507, another failure 503: not the edit's
            raise storage_error(exc, "cannot write the knowledge graph") from exc

    def compact(self, view: GraphView) -> int:
        """Fold the log into the segments (rewriting the predicates it names); the rows
        folded."""
        q = self.conn
        predicates = [p for (p,) in q.execute("SELECT DISTINCT p FROM graph_log")]
        rows = self.log_rows()
        for p in predicates:
            self._write_segment(p, view)
        return rows


def change_size(change: GraphChange) -> int:
    """Triples a change names (added, removed, re-flagged)."""
    return sum(
        count(part) for part in (change.added, change.removed, change.asserted, change.unasserted)
    )
