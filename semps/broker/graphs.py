"""The knowledge graph in the service: every change goes through here, one at a time.

:class:`GraphDesk` owns the service's :class:`~semps.graph.graph.KnowledgeGraph` (its
tables in the broker's SQLite file, on the store's writing connection). Each edit, whatever
door it comes through (``/graph``, a SPARQL Update, a retained event, an ontology edit):

1. waits its turn (one edit at a time, in arrival order: an edit is planned against the
   graph the previous one left);
2. is *planned* on the desk's own thread (parsed, its closure computed; nothing changes, so
   a refused edit leaves nothing behind) while events go on being matched;
3. goes into the pipeline as a :class:`~semps.broker.pipeline.Step`, after every event
   submitted before it: a worker computes its notifications on its replica, the change and
   its notifications commit in one transaction (:meth:`GraphDesk.write` runs inside it),
   the workers apply it, and the events submitted after it see it;
4. is answered once committed, with the graph's new version and how many notifications
   it made.

A refused edit changes nothing; one whose commit fails (a full disk) is rolled back, the
graph read back from the store, and the edit answered with the error.

Reads (``/query``, a SEPA subscription's current answers, ``GET /graph``, browsing) never
hold the edits' turn while they work: each reads a snapshot of the graph
(:meth:`~semps.graph.view.GraphView.snapshot`, taken in the turn once per version, between
two edits) on the desk's reader threads, while the edits go on. A principal may have
``max_queries_in_flight`` queries running at once; one more is refused with
:class:`~semps.errors.QueriesInFlight` (429).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from semps.broker.contracts import Store
from semps.broker.inflight import InFlight
from semps.broker.pipeline import Pipeline, Step
from semps.broker.replica import GraphSource
from semps.broker.worker import read_published
from semps.errors import (
    DocumentTooLarge,
    GraphError,
    HostileInputError,
    IngestError,
    UnsupportedMediaType,
)
from semps.graph.browse import Resources, describe
from semps.graph.change import GraphChange
from semps.graph.edit import plan_ontology
from semps.graph.formats import fresh_prefix, renamed, serialize
from semps.graph.graph import KnowledgeGraph
from semps.graph.view import GraphView
from semps.ingest.json_event import is_json_media_type
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.expansion import Expansion
from semps.ontology.store import OntologyStore

__all__ = ["SPARQL_UPDATE", "Applied", "GraphDesk", "update_text"]

log = logging.getLogger("semps.broker")
T = TypeVar("T")
R = TypeVar("R")

#: Threads reading snapshots of the graph (queries, exports), beside the edits' own.
READERS = 2

#: A graph document's refusals that are answered as an event's (413, 400, 415); its other
#: reading errors are the graph's (``bad_graph``, with line and column).
_AS_FOR_EVENTS = (DocumentTooLarge, HostileInputError, UnsupportedMediaType)

#: The media type of a SPARQL 1.1 Update (``POST /graph``, or published as an event).
SPARQL_UPDATE = "application/sparql-update"


@dataclass(frozen=True)
class Applied:
    """What an edit did: the graph's version after it, the triples it inserted and deleted
    and the inferred ones it added and removed, the notifications it made, and the event
    id its notifications name (``graph-<version>`` for an edit made through ``/graph``)."""

    version: int
    event: str
    notified: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """The answer of an edit over HTTP."""
        return {"version": self.version, **self.counts, "notified": self.notified}


@dataclass(frozen=True)
class _Planned:
    """An edit planned: its change, the ontology it brings, a retained event's document."""

    change: GraphChange
    expansion: Expansion | None = None
    document: tuple[str, bytes] | None = None
    logged: tuple[float, str, int] | None = None


class GraphDesk:
    """The service's knowledge graph and the one way it changes (see the module docstring).

    Args:
        store: the broker's store (the graph's tables live in its file).
        ontology: the ontology store (its edits re-close the graph).
        limits: the limits edits are held to.
    """

    def __init__(self, store: Store, ontology: OntologyStore, limits: Limits = DEFAULT_LIMITS):
        self.store, self.ontology, self.limits = store, ontology, limits
        self.graph, self.path = store.open_graph(ontology.expansion(), limits)
        #: Held while a change commits, and while a starting worker reads the graph.
        self.commit_lock = threading.Lock()
        self.pipeline: Pipeline | None = None  # set by the broker once it is built
        self._planner = ThreadPoolExecutor(1, thread_name_prefix="semps-graph")
        self._readers = ThreadPoolExecutor(READERS, thread_name_prefix="semps-graph-read")
        self._turn: asyncio.Lock | None = None
        self._snapshot: tuple[GraphView, int, GraphView] | None = None  # live view, version
        self._queries = InFlight(limits.max_queries_in_flight)  # by principal
        self._resources: Resources | None = None  # the browsing index of one version

    @property
    def version(self) -> int:
        """The graph's last committed version."""
        return self.graph.version

    def close(self) -> None:
        self._readers.shutdown(wait=True, cancel_futures=True)
        self._planner.shutdown(wait=True, cancel_futures=True)

    # -- the workers' side ------------------------------------------------------------------

    @contextmanager
    def replica(self) -> Iterator[tuple[GraphSource | None, Expansion]]:
        """Where a starting worker reads the graph, and the ontology it is closed under;
        no change commits until the block ends."""
        with self.commit_lock:
            view = self.graph.view
            source = GraphSource(view.version, self.path, None if self.path else view)
            yield source, view.expansion

    def write(self, step: Step) -> None:
        """Apply a step's change to the graph and write it, inside the store's open
        transaction (:meth:`~semps.broker.contracts.NotificationLog.commit_events`)."""
        self.graph.apply(step.change, step.expansion)

    def restore(self, expansion: Expansion) -> None:
        """Read the graph back from the store after a failed commit (``expansion``: the
        ontology it was closed under before the change)."""
        if self.path is None:
            return  # in memory: the change applied or raised before changing anything
        try:
            self.graph, _ = self.store.open_graph(expansion, self.limits)
        except Exception:  # the service's graph is now unknown: say so loudly
            log.critical("cannot read the knowledge graph back after a failed commit")
            raise

    # -- edits ----------------------------------------------------------------------------

    async def update(self, text: str, *, event_id: str | None = None) -> Applied:
        """Run a SPARQL 1.1 Update (all of it, or nothing); with ``event_id``, it was
        published as an event (the event log keeps it, its notifications name it).

        Raises:
            UpdateSyntaxError, UnsupportedUpdateError, GraphLimitExceeded, GraphError:
                refused, nothing changed.
        """
        received = time.time()

        def plan(g: KnowledgeGraph) -> _Planned:
            change = g.plan_update(text)
            size = len(text.encode("utf-8", "replace"))
            logged = None if event_id is None else (received, SPARQL_UPDATE, size)
            return _Planned(change, logged=logged)

        return _done(await self._edit(plan, event_id))

    async def load(self, data: bytes, media_type: str | None, *, replace: bool) -> Applied:
        """Merge a document's triples in, or ``replace`` the graph's with them.

        Raises:
            GraphError: the document does not read (its ``line`` and ``column``), or the
                graph refuses its triples; DocumentTooLarge, HostileInputError,
                UnsupportedMediaType: as for an event; GraphLimitExceeded.
        """

        def plan(g: KnowledgeGraph) -> _Planned:
            try:
                return _Planned(g.plan_load(data, media_type=media_type, replace=replace))
            except IngestError as exc:
                if isinstance(exc, _AS_FOR_EVENTS):
                    raise
                raise GraphError(exc.detail, line=exc.line, column=exc.column) from None

        return _done(await self._edit(plan, None))

    async def clear(self) -> Applied:
        """Remove every triple."""
        return _done(await self._edit(lambda g: _Planned(g.plan_clear()), None))

    async def retain(self, event_id: str, media_type: str, body: bytes) -> Applied | None:
        """Keep an event's triples in the graph: the event is a change of the graph,
        notified as one (its notifications name ``event_id``). ``None`` when the graph
        holds them all already: the caller publishes it as any event.

        Raises:
            IngestError: the document does not read; GraphError: a JSON event, or
                triples the graph refuses (axioms, ``owl:sameAs``); GraphLimitExceeded.
        """
        if is_json_media_type(media_type):
            msg = "a JSON event holds no RDF triples to keep in the knowledge graph"
            raise GraphError(msg)
        limits = self.limits

        def plan(g: KnowledgeGraph) -> _Planned:
            event = read_published(limits, event_id, media_type, body)
            change = g.plan_insert(renamed(event.triples, fresh_prefix()))
            logged = (time.time(), media_type, len(body))
            return _Planned(change, document=(media_type, body), logged=logged)

        return await self._edit(plan, event_id, skip_empty=True)

    async def edit_ontology(self, edit: Callable[[], object]) -> Applied:
        """Edit the ontology (``edit`` changes the ontology store), then close the graph
        under the new ontology: one change, notified and committed like any other, that
        also brings the new ontology to the workers. The re-closing is planned before the
        ontology is written: when it passes a graph limit (``max_edit_inferred``,
        ``max_graph_triples``, ``graph_timeout``) the edit is refused whole, the ontology
        and the graph unchanged.

        Raises:
            GraphLimitExceeded: the re-closing passes a limit; OntologyError: the edit.
        """
        limits = self.limits

        def plan(g: KnowledgeGraph) -> _Planned:
            planned: list[_Planned] = []

            def check(expansion: Expansion) -> None:
                change = plan_ontology(g.view, expansion, limits=limits)
                planned.append(_Planned(change, expansion))

            with self.ontology.checking(check):
                edit()
            if not planned:  # the edit made no new version (nothing to re-close)
                expansion = self.ontology.expansion()
                return _Planned(plan_ontology(g.view, expansion, limits=limits), expansion)
            return planned[-1]

        return _done(await self._edit(plan, None, skip_empty=False))

    async def export(
        self, media_type: str, *, closure: bool = False, who: str | None = None
    ) -> bytes:
        """The graph's asserted triples (``closure``: all of them) as a document (one of
        ``who``'s queries in flight)."""
        return await self._read(lambda view: view_export(view, media_type, closure), who)

    async def info(self) -> dict[str, int]:
        """The graph's version and sizes: closure triples, asserted ones, terms."""

        def sizes(view: GraphView) -> dict[str, int]:
            asserted = sum(int(seg.packed()[1].sum()) for seg in view.triples.segments.values())
            return {
                "version": view.version,
                "triples": len(view),
                "asserted": asserted,
                "terms": len(view.terms),
            }

        return await self._read(sizes)

    async def resources(self, q: str, after: str | None, limit: int) -> dict[str, object]:
        """A page of the graph's subjects (:meth:`~semps.graph.browse.Resources.page`);
        the index is built once per graph version."""

        def page(view: GraphView) -> dict[str, object]:
            found = self._resources
            if found is None or found.version != view.version:
                found = self._resources = Resources(view)
            return found.page(q, after, limit)

        return await self._read(page)

    async def reading(self, work: Callable[[GraphView], T], *, who: str | None = None) -> T:
        """``work(view)`` on a snapshot of the graph (no change is applied to it while it
        reads; changes go on meanwhile), counted as one of ``who``'s queries in flight.

        Raises:
            QueriesInFlight: ``who`` has ``max_queries_in_flight`` running already.
        """
        return await self._read(work, who)

    async def registering(
        self,
        work: Callable[[GraphView], T],
        register: Callable[[], R],
        undo: Callable[[R], None],
        *,
        who: str | None = None,
    ) -> tuple[R, T]:
        """``work(view)`` on a snapshot, and ``register()`` run in the edits' turn at the
        snapshot's version: a change committed before is in ``work``'s result, a change
        after comes after ``register``. ``work`` runs first outside the turn (refused, it
        registers nothing); when a change came between, it runs again on the version
        ``register`` saw, and when that fails, ``undo(registered)`` is called.

        Raises:
            QueriesInFlight: ``who`` has ``max_queries_in_flight`` running already.
        """
        self._queries.take(who)
        try:
            view = await self.snapshot()
            result = await self._reader(work, view)

            def now() -> tuple[R, GraphView]:
                return register(), self._snapshot_now()

            registered, seen = await self._in_turn(lambda: self._on_desk(now))
            if seen is not view:
                try:
                    result = await self._reader(work, seen)
                except BaseException:
                    await asyncio.get_running_loop().run_in_executor(
                        self._planner, undo, registered
                    )
                    raise
            return registered, result
        finally:
            self._queries.give(who)

    async def describe(self, term: str, limit: int, offset: int) -> dict[str, object]:
        """A term's triples, asserted and inferred (:func:`~semps.graph.browse.describe`)."""
        return await self._read(lambda view: describe(view, term, limit, offset))

    # -- snapshots ----------------------------------------------------------------------------

    async def snapshot(self) -> GraphView:
        """The graph as the last committed change left it, for reading on any thread:
        taken in the edits' turn, once per version."""
        found = self._snapshot
        graph = self.graph
        if found is not None and found[0] is graph.view and found[1] == graph.version:
            return found[2]  # a change being applied now leaves this version's copy as it is
        return await self._in_turn(lambda: self._on_desk(self._snapshot_now))

    def _snapshot_now(self) -> GraphView:
        """The current version's snapshot (call in the edits' turn)."""
        view = self.graph.view
        found = self._snapshot
        if found is None or found[0] is not view or found[1] != view.version:
            found = self._snapshot = (view, view.version, view.snapshot())
        return found[2]

    async def _read(self, work: Callable[[GraphView], T], who: str | None = None) -> T:
        self._queries.take(who)
        try:
            return await self._reader(work, await self.snapshot())
        finally:
            self._queries.give(who)

    async def _reader(self, work: Callable[[GraphView], T], view: GraphView) -> T:
        """``work(view)`` on a reader thread. It runs to the end even when the caller goes
        away, and the caller waits for that end (so a principal's queries in flight are
        counted until their work ends, not until its client leaves)."""
        task = asyncio.get_running_loop().run_in_executor(self._readers, work, view)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await task
            raise

    # -- one at a time ----------------------------------------------------------------------

    async def _in_turn(self, work: Callable[[], Awaitable[T]]) -> T:
        """Await ``work()`` in the edits' turn. It runs to the end even when the caller
        goes away (a change half-way through the pipeline must finish before the next is
        planned)."""
        if self._turn is None:
            self._turn = asyncio.Lock()
        turn = self._turn

        async def locked() -> T:
            async with turn:
                return await work()

        return await asyncio.shield(asyncio.ensure_future(locked()))

    async def _on_desk(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the desk's own thread (planning: parsing, closing)."""
        return await asyncio.get_running_loop().run_in_executor(self._planner, work)

    async def _edit(
        self,
        plan: Callable[[KnowledgeGraph], _Planned],
        event_id: str | None,
        *,
        skip_empty: bool = True,
    ) -> Applied | None:
        async def edit() -> Applied | None:
            planned = await self._on_desk(lambda: plan(self.graph))
            change = planned.change
            if skip_empty and change.empty:
                if planned.document is not None:
                    return None  # a retained event adding nothing: publish it plainly
                return Applied(self.version, event_id or "", 0, _counts(change))
            return await self._through_pipeline(planned, event_id)

        return await self._in_turn(edit)

    async def _through_pipeline(self, planned: _Planned, event_id: str | None) -> Applied:
        assert self.pipeline is not None, "the broker sets the pipeline"
        change = planned.change
        loop = asyncio.get_running_loop()
        done: asyncio.Future[BaseException | int] = loop.create_future()
        step = Step(
            change,
            event_id or f"graph-{change.version}",
            planned.expansion,
            planned.document,
            planned.logged,
            done=(loop, done),
        )
        self.pipeline.submit_change(step)
        result = await done
        if isinstance(result, BaseException):
            raise result
        return Applied(change.version, step.event_id, result, _counts(change))

    @staticmethod
    def settle(step: Step, result: BaseException | int) -> None:
        """Answer a step's edit (from the commit thread): its error, or how many
        notifications it made."""
        loop, future = step.done

        def answer() -> None:
            if not future.done():
                future.set_result(result)

        try:
            loop.call_soon_threadsafe(answer)
        except RuntimeError:  # the loop is closed: nobody waits
            pass


def view_export(view: GraphView, media_type: str, closure: bool) -> bytes:
    """A view's asserted triples (``closure``: all of them) as a document."""
    return serialize(view.term_triples(asserted_only=not closure), media_type)


def update_text(body: bytes) -> str:
    """A SPARQL Update's text from a request body (UTF-8).

    Raises:
        GraphError: not UTF-8 (400).
    """
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"a SPARQL Update must be UTF-8 text: {exc}"
        raise GraphError(msg) from None


def _done(applied: Applied | None) -> Applied:
    """An edit's answer (only a retained event may have none)."""
    assert applied is not None
    return applied


def _counts(change: GraphChange) -> dict[str, int]:
    summary = change.summary()
    del summary["version"]
    return summary
