"""The matching worker: a process that reads events and matches them against its own copy of
every stateless matcher's index.

The broker starts one or more of these (:mod:`semps.broker.pipeline`) as
:class:`semps.pool.Worker` processes and sends each, one at a time, requests as tuples:

- ``("load", subscriptions, expansion, snapshots, write, graph, key)`` index these
  subscriptions (start-up, respawn; a :class:`~semps.broker.worker_load.Packed`), each
  matcher from the state it saved in the folder ``snapshots`` (a path or ``None``) under
  ``key`` brought up to date, or with what it persisted there (the semantic matcher's
  parses), rewritten when stale if ``write`` (one worker of the pool writes and saves the
  states), and read the knowledge graph from ``graph`` (a
  :class:`~semps.broker.replica.GraphSource`, or ``None``: none);
- ``("restore", snapshots, key)`` restore the matchers' states saved in the folder
  ``snapshots`` under ``key``, for the ``load`` that follows to bring up to date;
- ``("add", subscription, old_kind)`` index (or replace) one; ``old_kind`` names the matcher
  that held the id before when it changes kind (removed only once the new one is indexed);
- ``("add_many", subscriptions)`` index new ones, each accepted or refused on its own;
- ``("check", subscriptions)`` check new ones as ``add_many`` would index them, indexing
  none (each outcome); ``("index", subscriptions)`` index ones the workers checked (posted
  after the registration was answered: the broker drops its reply);
- ``("remove", subscription_id)``, ``("remove_many", ids)``, ``("ontology", expansion)``;
- ``("match", [(event_id, media_type, body), ...])`` read and match a batch of events
  against the knowledge graph's replica;
- ``("graph_notes", change, event_id, document)`` the notifications of a graph change on
  the replica before it (``document``: a retained event's ``(media type, body)``, or
  ``None``): one outcome as a batch gives, with the ids of the subscriptions that gained
  solutions last (:func:`~semps.broker.replica.change_notes`);
- ``("graph_apply", change, expansion)`` bring the replica to the change's version
  (``expansion``: the new ontology an ontology edit brought, or ``None``);
- ``("graph", source, expansion)`` read the knowledge graph from ``source`` (a
  :class:`~semps.broker.replica.GraphSource` or ``None``), closed under ``expansion``, the
  ontology events are matched under from then on.

Each gets one reply (:mod:`semps.pool`: a value, or the error raised in the broker). A
batch's value is one outcome per event: ``("ok", event_time, [(subscription id, payload
head), ...])`` (the payload head is the notification's JSON without its closing brace,
written by :mod:`semps.broker.payload`) or ``("error", packed exception)`` for an event
that could not be read.

While it works, the worker writes where it is into shared memory
(:class:`~semps.pool.Progress`): which event of the batch (the item), and which
subscription is being verified (the subject). The broker's watchdog reads it when a batch
overruns its time budget, kills the worker and knows whom to blame. Idle after a change,
the worker warms up the matchers' kernels.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

from semps import pool
from semps.broker.payload import verdict_heads
from semps.broker.replica import GraphSource, apply_change, change_notes
from semps.broker.state_saver import StateSaver
from semps.broker.worker_load import Loaded, Packed, load_all, restore_all
from semps.errors import NotFound, SempsError
from semps.event import Event
from semps.gcpolicy import SERVING_THRESHOLDS, BatchCollector, paused_gc
from semps.graph.change import GraphChange
from semps.graph.view import GraphView
from semps.ingest.json_event import is_json_media_type, read_json_event
from semps.ingest.rdf import read_event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion
from semps.terms import RDF_TYPE, XSD, Literal

#: Seconds the parses of new subscriptions wait, kept, before the writer writes them beside
#: the snapshot: a stream of single registrations leaves one part a second, not one per
#: group (each part also cost a listing of the folder: quadratic over a long stream).
EXTEND_AFTER = 1.0

#: Phases a worker reports in its progress (WARMING: compiling a matcher's kernels on its
#: first use, which the watchdog does not time).
IDLE, READING, MATCHING, WARMING = pool.IDLE, 1, 2, pool.UNTIMED
_log = logging.getLogger("semps.worker")


class Worker:
    """The state of one matching worker, and the handler of its requests (also usable in
    process, as the tests do)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, progress: pool.Progress | None = None):
        self.limits = limits
        self.progress = progress
        self.matchers: dict[str, Matcher] = {}
        self.expansion = Expansion()
        #: The knowledge graph's replica events are matched against (``None``: none).
        self.graph: GraphView | None = None
        self._warm: set[str] = set()
        self._collector = BatchCollector()
        #: The folder of the matchers' snapshots this worker extends (its pool's writer).
        self._extends: Path | None = None
        #: What the matchers keep of subscriptions added since, written when idle.
        self._unsaved: list[Callable[[], object]] = []
        self._unsaved_since = 0.0  # when the first of them was kept (by ``clock``)
        self.clock: Callable[[], float] = time.monotonic
        #: The matchers' saved states, kept by the pool's writer (``None``: not this one).
        self._saver: StateSaver | None = None
        #: By kind, what the states restored before ``load`` hold (``None``: left aside),
        #: and about how many objects they made (frozen).
        self._restored: dict[str, Mapping[str, str] | None] = {}
        self._made = 0

    def __call__(self, request: tuple[Any, ...]) -> Any:
        """The value of one request (see the module docstring)."""
        op = request[0]
        if op == "match":
            return self.match(request[1])
        if op == "add":
            return self.add(request[1], request[2])
        if op == "remove":
            return self.remove(request[1])
        if op == "add_many":
            return self.add_many(request[1])
        if op == "check":
            return self.check(request[1])
        if op == "index":
            return self.index(request[1])
        if op == "remove_many":
            for sub_id in request[1]:
                self.remove(sub_id)
            return None
        if op == "graph_notes":
            return self.graph_notes(request[1], request[2], request[3])
        if op == "graph_apply":
            return self.graph_apply(request[1], request[2])
        if op == "graph":
            return self.read_graph(request[1], request[2])
        if op == "ontology":
            self.expansion = request[1]
            return None
        if op == "restore":
            return self.restore(request[1], request[2])
        if op == "load":
            graph = request[5] if len(request) > 5 else None
            key = request[6] if len(request) > 6 else None
            return self.load(request[1], request[2], request[3], request[4], graph, key)
        msg = f"unknown worker request {op!r}"
        raise ValueError(msg)

    def idle(self) -> float | None:
        """Nothing waits: extend the snapshots with what was added (once the first of it
        waited :data:`EXTEND_AFTER`; until then only that is done), warm up now (loading
        the kernels takes about a second) rather than inside the next event's request,
        and on the writer save the states when due; the seconds after which to be called
        again (``None``: no need). A failure is ignored by the caller: the kernels then load
        on first use, and the next start parses or indexes what was not saved."""
        if self._unsaved:
            waited = self.clock() - self._unsaved_since
            if waited < EXTEND_AFTER:  # registrations may still come: one part for them all
                if self.progress is not None:
                    self.progress.at(IDLE, 0)
                return EXTEND_AFTER - waited
        while self._unsaved:
            self._unsaved.pop(0)()
        self.warm_up()
        for matcher in self.matchers.values():
            matcher.idle()
        saver = self._saver
        again = None if saver is None else saver.poll(self.matchers, self._untimed)
        if self.progress is not None:
            self.progress.at(IDLE, 0)
        return again

    def _untimed(self) -> None:
        if self.progress is not None:
            self.progress.at(WARMING, 0)

    def matcher(self, kind: str) -> Matcher:
        found = self.matchers.get(kind)
        if found is None:
            found = self.matchers[kind] = create_matcher(kind)
            found.limits = self.limits
            self._graph_ready([found])
        return found

    def load(
        self,
        subscriptions: Sequence[Subscription],
        expansion: Expansion,
        snapshots: Path | None = None,
        write_snapshots: bool = True,
        graph: GraphSource | None = None,
        key: bytes | None = None,
    ) -> Loaded:
        """Index ``subscriptions`` (a :class:`~semps.broker.worker_load.Packed` from the
        pipeline) with what the matchers saved or persisted in the folder ``snapshots``
        (:func:`~semps.broker.worker_load.load_all`; states under ``key``), and read the
        knowledge graph from ``graph``. The writer (``write_snapshots``) rewrites stale
        snapshots and saves the states when due (:mod:`semps.broker.state_saver`)."""
        self.expansion = expansion
        self._extends = snapshots if write_snapshots else None
        self.graph = graph.open(expansion) if graph is not None else None
        restored, self._restored = self._restored, {}
        with paused_gc():
            packed = Packed.of(subscriptions)
            outcomes = load_all(
                self.matcher, packed, restored, snapshots, key, write=write_snapshots
            )
            self._graph_ready()
            whole = all(o.restored for o in outcomes)
            # Frozen before the collector is back: it would walk every new object at once.
            self._collector.frozen(self._made + _settle(collect=not whole))
        self._made = 0
        changed = sum(o.changed for o in outcomes)
        if write_snapshots and snapshots is not None and key is not None:
            self._saver = StateSaver(snapshots, key)
            self._saver.loaded(whole, changed)
        return Loaded(
            whole and bool(outcomes), changed, sum(_size(m) for m in self.matchers.values())
        )

    def restore(self, folder: Path, key: bytes) -> list[str]:
        """Restore the matchers' states saved in ``folder`` under ``key`` (frozen at once)
        for the next :meth:`load` to bring up to date; the kinds restored."""
        with paused_gc():
            self._restored = restore_all(self.matcher, folder, key)
            self._made += _settle(collect=False)
        return [kind for kind, held in self._restored.items() if held is not None]

    def add(self, sub: Subscription, old_kind: str | None) -> None:
        self.matcher(sub.kind).add(sub)  # raises before anything changes
        self._changed(1)
        if old_kind is not None and old_kind != sub.kind and old_kind in self.matchers:
            self.remove_from(old_kind, sub.id)

    def add_many(self, subs: Sequence[Subscription], *, checked: bool = False) -> list[Any]:
        """Index new subscriptions; per subscription ``None`` or its packed error. The
        pool's writer keeps what the matchers persist of them, to extend their snapshots
        when idle (:meth:`~semps.matcher.base.Matcher.extending`). ``checked``: the
        workers checked them (:meth:`index`)."""
        outcomes = self._each(
            subs, lambda sub: self.matcher(sub.kind).add(sub), collect=not checked
        )
        self._changed(len(subs))
        return outcomes

    def check(self, subs: Sequence[Subscription]) -> list[Any]:
        """Check new subscriptions as :meth:`add_many` would index them, indexing none
        (:meth:`~semps.matcher.base.Matcher.check`: the semantic matcher keeps each
        compiled text for :meth:`index`): per subscription ``None`` or its packed error.
        The pool's writer keeps what the matchers persist of them, as :meth:`add_many`."""
        return self._each(subs, lambda sub: self.matcher(sub.kind).check(sub), collect=False)

    def _each(
        self,
        subs: Sequence[Subscription],
        step: Callable[[Subscription], None],
        *,
        collect: bool,
    ) -> list[Any]:
        """``step`` on each new subscription, the collector paused and each kind's
        :meth:`_extending` block entered: per subscription ``None`` or its packed error."""
        outcomes: list[Any] = []
        with ExitStack() as stack, paused_gc():
            self._extending(stack, subs)
            for sub in subs:
                try:
                    step(sub)
                    outcomes.append(None)
                except SempsError as exc:
                    outcomes.append(pool.pack_error(exc))
            if len(subs) > 1:  # the collector still paused: the new objects walked once
                _settle(collect=collect)
        return outcomes

    def index(self, subs: Sequence[Subscription]) -> int:
        """Index subscriptions the workers checked (:meth:`check`), answered before this
        runs; returns how many failed (none unless checking and indexing disagree: each
        is logged)."""
        failed = 0
        for sub, outcome in zip(subs, self.add_many(subs, checked=True), strict=True):
            if outcome is not None:
                failed += 1
                _log.error("subscription %s checked but not indexed: %s", sub.id, outcome)
        return failed

    def _extending(self, stack: ExitStack, subs: Sequence[Subscription]) -> None:
        """On the pool's writer, each kind's :meth:`~semps.matcher.base.Matcher.extending`
        block entered on ``stack``, its writing kept for :meth:`idle`."""
        if self._extends is None:
            return
        if not self._unsaved:
            self._unsaved_since = self.clock()
        kinds = subs.kinds if isinstance(subs, Packed) else [s.kind for s in subs]
        for kind in dict.fromkeys(kinds):
            with suppress(SempsError):  # an unknown kind: its add (or check) says so
                matcher = self.matcher(kind)
                path = self._extends / f"{kind}.snap"
                self._unsaved.append(stack.enter_context(matcher.extending(path)))

    def remove(self, sub_id: str) -> None:
        for kind in list(self.matchers):
            self.remove_from(kind, sub_id)
        self._changed(1)

    def _changed(self, count: int) -> None:
        """``count`` subscriptions were added or removed (the saved states age)."""
        if self._saver is not None:
            self._saver.note(count)

    def remove_from(self, kind: str, sub_id: str) -> None:
        try:
            self.matchers[kind].remove(sub_id)
        except NotFound:
            pass

    def graph_notes(
        self, change: GraphChange, event_id: str, document: tuple[str, bytes] | None
    ) -> tuple[Any, ...]:
        """The outcome of a graph change (see the module docstring): its notifications on
        the replica as it is before the change, or the error reading its event."""
        view = self.graph if self.graph is not None else GraphView(self.expansion)
        progress = self.progress
        watch = None
        if progress is not None:
            progress.at(WARMING, 0)  # untimed until a subscription is being evaluated

            def watch(sub_id: str) -> None:
                progress.at(MATCHING, 0)
                progress.watch(sub_id)

        self.warm_up()
        try:
            event = None if document is None else read_published(self.limits, event_id, *document)
        except SempsError as exc:
            return ("error", pool.pack_error(exc))
        notes, gained = change_notes(
            [m for m in self.matchers.values() if _size(m)],
            change,
            view,
            event,
            lambda e: MatchContext(e, self.expansion, watch=watch, limits=self.limits),
            self.limits,
            event_id=event_id,
            watch=watch,
        )
        if progress is not None:
            progress.at(IDLE, 0)
        return ("ok", None if event is None else event.time, notes, gained)

    def read_graph(self, source: GraphSource | None, expansion: Expansion) -> int:
        """Take the ontology and read the graph's replica; returns its version."""
        if self.progress is not None:
            self.progress.at(WARMING, 0)
        self.expansion = expansion
        self.graph = source.open(expansion) if source is not None else None
        self._graph_ready()
        _settle()
        return 0 if self.graph is None else self.graph.version

    def graph_apply(self, change: GraphChange, expansion: Expansion | None) -> int:
        """Bring the replica to ``change``'s version; returns it."""
        if self.graph is None:
            self.graph = GraphView(self.expansion)
        if self.progress is not None:
            self.progress.at(WARMING, 0)
        apply_change(self.graph, change, expansion)
        if expansion is not None:
            self.expansion = expansion
        self._graph_ready()
        if self.progress is not None:
            self.progress.at(IDLE, 0)
        return self.graph.version

    def _graph_ready(self, matchers: Iterable[Matcher] | None = None) -> None:
        """With a graph, have each matcher that reads graphs build its state for them now
        (a made-up event matched against the graph), untimed, and keep it in step with
        every subscription added after, instead of building it from every subscription
        inside the first event's time (2.4 s CPU at 10k subscriptions)."""
        graph = self.graph
        if graph is None or graph.empty:
            return
        context = MatchContext(_warm_up_event(0), self.expansion, limits=self.limits, graph=graph)
        for matcher in self.matchers.values() if matchers is None else matchers:
            if matcher.reads_graph:
                with suppress(SempsError):  # a made-up event: nothing to report
                    matcher.verdict_batch([context])

    def warm_up(self) -> None:
        """Run a made-up event (alone, and in a batch) through each matcher that has
        subscriptions and has not matched yet: its compiled kernels load or compile now,
        untimed, instead of inside the first real event's time budget."""
        for kind, matcher in self.matchers.items():
            if kind in self._warm or not _size(matcher):
                continue
            if self.progress is not None:
                self.progress.at(WARMING, 0)
            self._warm.add(kind)
            matcher.warm()
            for n in (1, 20):
                events = [_warm_up_event(i) for i in range(n)]
                contexts = [MatchContext(e, self.expansion, limits=self.limits) for e in events]
                try:
                    matcher.match_batch(contexts)
                except Exception:  # noqa: S112  (a made-up event: nothing to report)
                    continue

    def match(self, items: Sequence[tuple[str, str, bytes]]) -> list[tuple[Any, ...]]:
        """Read and match a batch; one outcome per item (see the module docstring), the
        cyclic GC scheduled around it (:class:`~semps.gcpolicy.BatchCollector`)."""
        progress = self.progress
        untimed = None if progress is None else lambda: progress.at(WARMING, 0)
        with self._collector.batch(untimed):  # a full collection: ~1 s at 100k subscriptions
            return self._match(items)

    def _match(self, items: Sequence[tuple[str, str, bytes]]) -> list[tuple[Any, ...]]:
        progress = self.progress
        events: list[Event] = []
        contexts: list[MatchContext] = []
        outcomes: list[tuple[Any, ...] | None] = []
        self.warm_up()
        watch = progress.watch if progress is not None else None
        graph = self.graph if self.graph is not None and not self.graph.empty else None
        # with a graph, the semantic matcher closes each event against it (its limits too)
        closing = graph is None and any(_size(m) for m in self.matchers.values())
        for i, (event_id, media_type, body) in enumerate(items):
            if progress is not None:
                progress.at(READING, i)
            try:
                event = read_published(self.limits, event_id, media_type, body)
                context = MatchContext(
                    event, self.expansion, watch=watch, limits=self.limits, graph=graph
                )
                if closing and event.triples:
                    context.parts  # noqa: B018  (the closure, here: its limit is per event)
            except SempsError as exc:
                outcomes.append(("error", pool.pack_error(exc)))
                continue
            events.append(event)
            contexts.append(context)
            outcomes.append(None)
        limits = self.limits
        found: list[list[tuple[str, str]]] = [[] for _ in events]
        for matcher in self.matchers.values():
            if not _size(matcher):
                continue
            if progress is not None:
                progress.at(MATCHING, 0)
            # a verdict shared by several subscriptions is rendered once
            for i, verdicts in enumerate(matcher.verdict_batch(contexts)):
                found[i] += verdict_heads(verdicts, events[i].id, limits)
        if progress is not None:
            progress.at(IDLE, 0)
        it = iter(zip(events, found, strict=True))
        results: list[tuple[Any, ...]] = []
        for outcome in outcomes:
            if outcome is not None:
                results.append(outcome)
                continue
            event, notes = next(it)
            results.append(("ok", event.time, notes))
        return results


def read_published(limits: Limits, event_id: str, media_type: str, body: bytes) -> Event:
    """A published document as an event: a JSON event (content, region) or RDF, read within
    ``limits`` (size, nesting, closure).

    Raises:
        IngestError: the document does not read, or passes a limit.
    """
    if is_json_media_type(media_type):
        return read_json_event(body, event_id=event_id, max_bytes=limits.max_event_bytes)
    return read_event(
        body,
        event_id=event_id,
        media_type=media_type,
        max_bytes=limits.max_event_bytes,
        limits=limits,
    )


def _warm_up_event(i: int) -> Event:
    node = f"urn:semps:warm-up:{i}"
    one = Literal(str(i), XSD + "integer")
    triples = ((node, RDF_TYPE, node + "/C"), (node, node + "/p", one))
    return Event(f"semps-warm-up-{i}", triples, {"a": float(i)}, {"a": (0.0, float(i))})


def _settle(*, collect: bool = True) -> int:
    """Move the index built so far out of the cyclic GC's sight: a full collection would
    otherwise walk every subscription's objects, and the events' short-lived tuples trigger
    collections often (to_partab: 260 us an event with the GC walking a 10k index, 114 us
    without). Without ``collect``, for checking and indexing new subscriptions, which leave
    no cyclic garbage (tests/broker/test_registration_apart.py), the new objects are not
    walked first (a fifth to a third of the work). Returns about how many objects were
    made since the last collection (``gc.get_count()``, exact while the collector was
    paused), all frozen now."""
    made = gc.get_count()[0]
    if collect:
        gc.collect()
    gc.freeze()
    return made


def _size(matcher: Matcher) -> int:
    return len(matcher) if hasattr(matcher, "__len__") else 1


def serving(limits: Limits, progress: pool.Progress | None) -> Worker:
    """The handler of a matching worker process (:class:`semps.pool.Worker`'s target)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    gc.set_threshold(*SERVING_THRESHOLDS)  # events allocate many small tuples, none cyclic
    return Worker(limits, progress)


def start_worker(limits: Limits) -> pool.Worker:
    """A matching worker process (spawned: the broker runs threads) with its progress."""
    return pool.Worker(
        serving, (limits,), ctx=pool.context(inherit=False), role="matching", progress=True
    )
