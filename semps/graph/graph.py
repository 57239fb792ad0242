"""KnowledgeGraph: the facts semps knows, under the ontology, kept durable and current.

The main process owns one: it *plans* each edit (a :class:`~semps.graph.change.GraphChange`
computed against the current version, nothing changed yet: a refused edit leaves no
trace), then *commits* it (written to SQLite in one transaction, applied to the in-memory
view). The service writes the change inside its own transaction with the notifications it
causes (:meth:`KnowledgeGraph.apply`), then ships the change to every worker's replica
(:meth:`~semps.graph.view.GraphView.apply`) in order with the events.

Example:
    >>> g = KnowledgeGraph()
    >>> change = g.update("INSERT DATA { <http://ex/a> <http://ex/p> <http://ex/b> }")
    >>> change.summary()
    {'version': 1, 'inserted': 1, 'deleted': 0, 'inferred_added': 0, 'inferred_removed': 0}
    >>> g.export("nt")
    b'<http://ex/a> <http://ex/p> <http://ex/b> .\\n'
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypedDict, Unpack

from semps._types import Triple
from semps.errors import GraphLimitExceeded, StoreError
from semps.graph.batch import BatchReader, TripleBatch
from semps.graph.change import GraphChange
from semps.graph.edit import plan_clear, plan_edit, plan_load, plan_ontology
from semps.graph.formats import serialize
from semps.graph.rules import IdRules, id_rules
from semps.graph.store import GraphStore, fingerprint
from semps.graph.terms import TermTable
from semps.graph.triples import TripleSet
from semps.graph.update import plan_update
from semps.graph.view import GraphView
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.expansion import Expansion

#: The data directory's SQLite file (the broker's store): the graph's tables live there.
DATABASE = "semps.sqlite3"

Tick = Callable[[int], object]


class LoadOptions(TypedDict, total=False):
    """How :meth:`KnowledgeGraph.plan_load` reads a bulk load (a document's media type,
    file name and base IRI) and applies it (``replace``, ``tick``), for the methods that
    pass them along."""

    media_type: str | None
    filename: str | None
    base: str | None
    replace: bool
    tick: Tick | None


def connect(path: Path) -> sqlite3.Connection:
    """A connection to an SQLite file as the broker opens it (WAL, full sync, explicit
    transactions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
    except sqlite3.Error as exc:
        msg = f"cannot open {path}: {exc}"
        raise StoreError(msg) from exc
    return conn


class KnowledgeGraph:
    """The knowledge graph: a :class:`GraphView` being edited, persisted when given an
    SQLite connection (:meth:`open`).

    Args:
        expansion: the ontology (its rules close the graph).
        limits: the limits edits are held to.
    """

    def __init__(self, expansion: Expansion | None = None, *, limits: Limits = DEFAULT_LIMITS):
        self.view = GraphView(expansion)
        self.limits = limits
        self.store: GraphStore | None = None

    @classmethod
    def open(
        cls,
        conn: sqlite3.Connection,
        expansion: Expansion | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        tick: Tick | None = None,
        write: bool = True,
    ) -> KnowledgeGraph:
        """The graph stored in ``conn`` (created empty if none). When it was closed under
        another ontology than ``expansion``, its closure is recomputed, and stored (once)
        unless ``write`` is false (a reader: the recompute stays in memory).

        Raises:
            StoreError: the tables cannot be read or written.
        """
        expansion = expansion if expansion is not None else Expansion()
        graph = cls.__new__(cls)
        graph.limits = limits
        graph.store = store = GraphStore(conn)
        graph.view = view = GraphView.__new__(GraphView)
        view.terms, view.triples, view.expansion = TermTable(), TripleSet(), Expansion()
        view.rules = IdRules(type=-1)  # until the ontology is taken below
        store.read(view)
        if store.meta("ontology") == fingerprint(expansion):
            graph._adopt(expansion, write)
            return graph
        try:  # at start-up the size bounds hold, not the clock (a loaded machine starts)
            change = plan_ontology(view, expansion, limits=limits, tick=tick, timed=False)
        except GraphLimitExceeded as exc:
            raise GraphLimitExceeded(_refusal(conn, exc)) from exc
        if write:
            graph.commit(change, expansion)
        else:
            view.apply(change, expansion)
        return graph

    def _adopt(self, expansion: Expansion, write: bool = True) -> None:
        """Take ``expansion``'s rules as they are (the closure already follows them); new
        terms they name are stored (when ``write``)."""
        view = self.view
        first = len(view.terms)
        view.expansion = expansion
        view.rules = id_rules(expansion, view.terms)
        if write and self.store is not None and len(view.terms) > first:
            self._transaction(lambda: self._store_terms(first))

    def _store_terms(self, first: int) -> None:
        from semps.graph.terms import encode

        assert self.store is not None
        self.store.conn.executemany(
            "INSERT INTO graph_terms VALUES (?, ?)",
            ((first + i, encode(t)) for i, t in enumerate(self.view.terms.since(first))),
        )

    # -- reading ----------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The version (every committed change adds one)."""
        return self.view.version

    def __len__(self) -> int:
        return len(self.view)

    def export(self, media_type: str = "text/turtle", *, closure: bool = False) -> bytes:
        """The asserted triples (``closure``: every triple, inferred ones too) as a
        document (Graph Store Protocol ``GET``)."""
        return serialize(self.view.term_triples(asserted_only=not closure), media_type)

    # -- planning (nothing changes) ----------------------------------------------------------

    def plan_update(self, text: str, *, base: str | None = None) -> GraphChange:
        """The change a SPARQL 1.1 Update makes (:func:`~semps.graph.update.plan_update`)."""
        return plan_update(self.view, text, base=base, limits=self.limits)

    def plan_insert(self, triples: Sequence[Triple], delete: Sequence[Triple] = ()) -> GraphChange:
        """The change of deleting ``delete`` then inserting ``triples``."""
        return plan_edit(self.view, triples, delete, limits=self.limits, note="edit")

    def plan_load(
        self,
        data: bytes | Sequence[Triple] | TripleBatch,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        base: str | None = None,
        replace: bool = False,
        tick: Tick | None = None,
    ) -> GraphChange:
        """The change of a bulk load (a document's bytes, triples, or a batch read by
        :class:`~semps.graph.batch.BatchReader`), merged in or replacing the asserted
        triples (Graph Store Protocol ``POST`` / ``PUT``)."""
        if isinstance(data, bytes):
            reader = BatchReader(self.limits)
            reader.read(data, media_type=media_type, filename=filename, base=base)
            data = reader.batch()
        note = "replace" if replace else "load"
        return plan_load(self.view, data, replace=replace, limits=self.limits, tick=tick, note=note)

    def plan_clear(self) -> GraphChange:
        """The change of removing everything (Graph Store Protocol ``DELETE``)."""
        return plan_clear(self.view)

    # -- committing --------------------------------------------------------------------------

    def apply(self, change: GraphChange, expansion: Expansion | None = None) -> None:
        """Apply a planned change to the view and write it to the store inside the
        caller's open transaction (not committed here). If that transaction then fails,
        :meth:`reload` the graph."""
        self.view.apply(change, expansion)
        if self.store is not None:
            self.store.write(change, self.view)
            if expansion is not None:
                self.store.set_meta("ontology", fingerprint(expansion))

    def commit(self, change: GraphChange, expansion: Expansion | None = None) -> GraphChange:
        """Apply a planned change and commit it (one SQLite transaction, one fsync)."""
        if self.store is None:
            self.view.apply(change, expansion)
            return change
        try:
            self._transaction(lambda: self.apply(change, expansion))
        except BaseException:
            self.reload()
            raise
        return change

    def _transaction(self, work: Callable[[], None]) -> None:
        assert self.store is not None
        conn = self.store.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            work()
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.rollback()
            msg = f"cannot commit the knowledge graph: {exc}"
            raise StoreError(msg) from exc
        except BaseException:
            conn.rollback()
            raise

    def reload(self) -> None:
        """Read the graph back from the store (after a failed transaction)."""
        if self.store is None:
            return
        expansion = self.view.expansion
        fresh = KnowledgeGraph.open(self.store.conn, expansion, limits=self.limits)
        self.view = fresh.view

    def compact(self) -> int:
        """Fold the store's log of small changes into its segments; the rows folded."""
        if self.store is None:
            return 0
        found = [0]

        def work() -> None:
            assert self.store is not None
            found[0] = self.store.compact(self.view)

        self._transaction(work)
        return found[0]

    # -- plan and commit ---------------------------------------------------------------------

    def update(self, text: str, *, base: str | None = None) -> GraphChange:
        """Run a SPARQL 1.1 Update (all or nothing) and commit it."""
        return self.commit(self.plan_update(text, base=base))

    def insert(self, triples: Sequence[Triple]) -> GraphChange:
        """Insert asserted triples and commit."""
        return self.commit(self.plan_insert(triples))

    def delete(self, triples: Sequence[Triple]) -> GraphChange:
        """Delete asserted triples (what they alone derived goes too) and commit."""
        return self.commit(self.plan_insert((), triples))

    def load(
        self, data: bytes | Sequence[Triple] | TripleBatch, **options: Unpack[LoadOptions]
    ) -> GraphChange:
        """Bulk-load a document (or triples) and commit (``options`` as
        :meth:`plan_load`'s)."""
        return self.commit(self.plan_load(data, **options))

    def clear(self) -> GraphChange:
        """Remove every triple and commit."""
        return self.commit(self.plan_clear())

    def set_ontology(self, expansion: Expansion, *, tick: Tick | None = None) -> GraphChange:
        """Close the graph under a new ontology (a recompute from the asserted triples)
        and commit; the change lists what the new rules add and remove.

        Raises:
            GraphLimitExceeded: the recompute passes a limit (nothing changed).
        """
        change = plan_ontology(self.view, expansion, limits=self.limits, tick=tick)
        return self.commit(change, expansion)


def _refusal(conn: sqlite3.Connection, exc: GraphLimitExceeded) -> str:
    """What to do when the stored graph cannot be closed under the stored ontology."""
    found = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
    where = Path(found[0]).parent if found and found[0] else "DIR"
    return (
        f"the knowledge graph stored in {where} cannot be closed under the ontology within "
        f"the limits: {exc.detail}. Start with that limit raised, or empty the ontology "
        f"with `semps ontology reset --data-dir {where}` (the old file is kept beside it)"
    )
