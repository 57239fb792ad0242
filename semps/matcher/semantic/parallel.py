"""Worker processes for phase 2/3: each holds a replica of the subscription index.

Per event, the parent runs counter filtering, plans the candidates with
:func:`~semps.matcher.semantic.plan.plan_partitions` and sends every worker its scan. Two
workers sharing a part claim candidates from opposite ends through a shared cursor pair
(``lo``, ``hi``) until they meet, so every candidate is verified exactly once. Batches of
events are split between the workers, each running phases 1 and 3 on its share.

The workers are :class:`semps.pool.Worker` processes. They are forked after the index is
built when the parent runs a single thread (:func:`semps.pool.context`): they inherit the
index copy-on-write (nothing is re-parsed or pickled) and then receive only batches of
events, and the ontology snapshot when it changes. Under threads (a web server) they are
spawned and rebuild their replica from the subscription texts. Either way the replicas are
kept in step by forwarding every add and remove.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any

from semps import pool
from semps.errors import IngestError, MatcherError
from semps.event import Event
from semps.gcpolicy import BatchCollector
from semps.ingest.sparql import parse_query
from semps.matcher.base import MatchContext
from semps.matcher.partab import EventParts
from semps.matcher.semantic._kernels import warm
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.count import count_lines, count_parts
from semps.matcher.semantic.index import SubscriptionIndex
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.plan import Scan, plan_partitions
from semps.matcher.semantic.verdicts import as_matches, verdicts_of
from semps.matcher.semantic.verify import EventBudget, verify
from semps.matcher.values import Match
from semps.ontology.expansion import Expansion

_CHUNK = 4  # candidates claimed per cursor move: fewer lock round trips


def _claim(cursors: Any, lock: Any, part: int, backward: bool) -> range:
    with lock:
        lo, hi = cursors[2 * part], cursors[2 * part + 1]
        if lo >= hi:
            return range(0)
        if backward:
            start = max(lo, hi - _CHUNK)
            cursors[2 * part + 1] = start
            return range(hi - 1, start - 1, -1)
        stop = min(hi, lo + _CHUNK)
        cursors[2 * part] = stop
        return range(lo, stop)


def _scan(
    index: SubscriptionIndex,
    task: dict[str, Any],
    cursors: Any,
    lock: Any,
    limit: int,
    budget: int,
) -> list[Match]:
    pairs = EventPairs(task["parts"])
    ids: list[str] = task["candidates"]
    scan: Scan = task["scan"]
    out: list[Match] = []
    event = EventBudget.of(budget)  # this worker's share of the event's candidates
    while True:
        claimed = _claim(cursors, lock, scan.part, scan.direction == "backward")
        if not claimed:
            return out
        for i in claimed:
            sub = index.subscriptions[ids[i]]
            verdict = verify(sub, pairs, limit, budget, event)
            if verdict is not None:
                detail = {"truncated": True} if verdict.truncated else {}
                out.append(Match(sub.id, task["event"], verdict.count, verdict.solutions, detail))


class _Replica:
    """A worker's index replica, answering the pool's requests (``add`` and ``remove``
    keep it in step; ``scan`` verifies a share of one event's candidates; ``match``,
    ``files``, ``count`` and ``lines`` answer a share of a batch)."""

    def __init__(
        self,
        cursors: Any,
        lock: Any,
        source: dict[str, str] | SubscriptionIndex,
        limit: int,
        budget: int,
    ) -> None:
        if isinstance(source, SubscriptionIndex):
            index = source  # forked: the parent's index, shared copy-on-write
        else:
            index = SubscriptionIndex()
            for sub_id, text in source.items():
                index.insert(compile_query(sub_id, parse_query(text)))
        gc.freeze()  # the replica is long-lived: keep the cyclic GC from rescanning it
        self.index, self.cursors, self.lock = index, cursors, lock
        self.limit, self.budget = limit, budget
        self.collector = BatchCollector()
        self.expansion: Expansion | None = None

    def __call__(self, request: tuple[str, Any]) -> Any:
        op, payload = request
        if op == "add":
            return self.index.insert(compile_query(payload[0], parse_query(payload[1])))
        if op == "remove":
            return self.index.delete(payload)
        if op == "scan":
            return _scan(self.index, payload, self.cursors, self.lock, self.limit, self.budget)
        *args, new_expansion = payload  # a batch: match, files, count or lines
        self.expansion = new_expansion if new_expansion is not None else self.expansion
        with self.collector.batch():  # the cyclic GC between batches, not during them
            return _batch(self.index, op, args, self.expansion, self.limit, self.budget)


def _replica(
    cursors: Any,
    lock: Any,
    source: dict[str, str] | SubscriptionIndex,
    limit: int,
    budget: int,
    progress: pool.Progress | None,
) -> _Replica:
    """A worker's handler (the pool's target)."""
    del progress
    return _Replica(cursors, lock, source, limit, budget)


def _batch(
    index: SubscriptionIndex,
    op: str,
    args: list[Any],
    expansion: Expansion | None,
    limit: int,
    budget: int,
) -> Any:
    """The reply to one batch request (``match``, ``files``, ``count`` or ``lines``)."""
    if op == "files":
        paths, base = args
        return _file_lines(index, paths, base, expansion, budget)
    (events,) = args
    contexts = [MatchContext(e, expansion) for e in events]
    if op == "lines":
        return count_lines(index, events, contexts, budget)
    if op == "count":
        return [count_parts(index, EventPairs(c.parts), budget) for c in contexts]
    results = []
    for event, context in zip(events, contexts, strict=True):
        verdicts = verdicts_of(index, EventPairs(context.parts), None, limit, budget)
        found = as_matches(event.id, verdicts)
        results.append([(m.subscription, m.count, m.solutions, dict(m.detail)) for m in found])
    return results


def _file_lines(
    index: SubscriptionIndex,
    paths: list[str],
    base: str | None,
    expansion: Expansion | None,
    budget: int,
) -> tuple[str, Any]:
    """Read, match and write the result lines of some event files: ``("lines", lines)``,
    or ``("error", message)`` for the first file that cannot be read."""
    from semps.ingest.rdf import read_events

    try:
        events = list(read_events(paths, base))
    except IngestError as exc:
        return ("error", str(exc))
    contexts = [MatchContext(e, expansion) for e in events]
    return ("lines", count_lines(index, events, contexts, budget))


class WorkerPool:
    """``n`` worker processes with index replicas and a shared cursor array.

    ``index`` is forked into the workers when the calling process may fork
    (:func:`semps.pool.can_fork`); otherwise they are spawned and parse ``texts``."""

    def __init__(
        self,
        n: int,
        texts: dict[str, str],
        limit: int,
        budget: int,
        index: SubscriptionIndex | None = None,
    ) -> None:
        forking = index is not None and pool.can_fork()
        ctx = pool.context(inherit=forking)
        source: dict[str, str] | SubscriptionIndex = texts
        if forking and index is not None:
            warm()  # the children inherit the compiled kernels
            index.id_ranks()  # and the id order output lines are written in
            index.families.tables()  # and the families as arrays
            source = index
        self.forked = forking
        self._sent: list[Expansion | None] = [None] * n
        self.n = n
        self.lock = ctx.Lock()
        self.cursors = ctx.RawArray("q", 2 * n)
        self.workers: list[pool.Worker] = []
        for _ in range(n):
            if forking:
                gc.freeze()  # keep the collector from touching (copying) the shared pages
            args = (self.cursors, self.lock, source, limit, budget)
            self.workers.append(pool.Worker(_replica, args, ctx=ctx, role="semantic"))

    def add(self, sub_id: str, text: str) -> None:
        for worker in self.workers:
            worker.post(("add", (sub_id, text)))

    def remove(self, sub_id: str) -> None:
        for worker in self.workers:
            worker.post(("remove", sub_id))

    def verify(self, parts: EventParts, candidates: list[str]) -> list[Match]:
        """Phase 2+3 for one event: every worker scans its share of ``candidates``."""
        scans = plan_partitions(len(candidates), self.n)
        for scan in scans:
            self.cursors[2 * scan.part] = scan.start
            self.cursors[2 * scan.part + 1] = scan.stop
        for scan in scans:
            task = {"parts": parts, "candidates": candidates, "scan": scan, "event": parts.event_id}
            self.workers[scan.worker].send(("scan", task))
        matches = [m for scan in scans for m in self._recv(scan.worker)]
        matches.sort(key=lambda m: m.subscription)
        return matches

    def match_many(self, events: Sequence[Event], expansion: Expansion) -> list[list[Match]]:
        """Closure and phases 1-3 for a batch: contiguous slices of the events, one per
        worker (results travel back as plain tuples: cheaper to pickle than matches)."""
        bounds = self._send("match", events, expansion)
        out: list[list[Match]] = []
        for w, start in enumerate(bounds[:-1]):
            for offset, rows in enumerate(self._recv(w)):
                event_id = events[start + offset].id
                out.append([Match(sub, event_id, c, sols, d) for sub, c, sols, d in rows])
        return out

    def count_many(self, events: Sequence[Event], expansion: Expansion) -> list[dict[str, int]]:
        """Closure and counts-only phases 1 and 3 for a batch, split as :meth:`match_many`."""
        bounds = self._send("count", events, expansion)
        return [counts for w in range(len(bounds) - 1) for counts in self._recv(w)]

    def lines_many(self, events: Sequence[Event], expansion: Expansion) -> list[str]:
        """:meth:`count_many` written as result lines by the workers (a line is cheaper to
        send back than its counts, and the JSON work is shared out too)."""
        bounds = self._send("lines", events, expansion)
        return [line for w in range(len(bounds) - 1) for line in self._recv(w)]

    def submit_files(
        self, paths: Sequence[str], base: str | None, expansion: Expansion
    ) -> Callable[[], list[str]]:
        """Start reading and matching event files (contiguous slices, one per worker); the
        returned function waits for their result lines, in order (raises IngestError for
        an unreadable file). Requests are a few paths: several may be in flight."""
        bounds = [len(paths) * i // self.n for i in range(self.n + 1)]
        for w in range(self.n):
            share = list(paths[bounds[w] : bounds[w + 1]])
            self.workers[w].send(("files", (share, base, self._fresh(w, expansion))))

        def collect() -> list[str]:
            answers = [self._recv(w) for w in range(self.n)]  # every worker, even on error
            for kind, value in answers:
                if kind == "error":
                    raise IngestError(value)
            return [line for _, lines in answers for line in lines]

        return collect

    def _send(self, op: str, events: Sequence[Event], expansion: Expansion) -> list[int]:
        """Contiguous slices of the events, one per worker."""
        bounds = [len(events) * i // self.n for i in range(self.n + 1)]
        for w in range(self.n):
            share = list(events[bounds[w] : bounds[w + 1]])
            self.workers[w].send((op, (share, self._fresh(w, expansion))))
        return bounds

    def _fresh(self, worker: int, expansion: Expansion) -> Expansion | None:
        """The ontology snapshot for a worker that has not seen this one, else ``None``."""
        fresh = None if self._sent[worker] is expansion else expansion
        self._sent[worker] = expansion
        return fresh

    def _recv(self, worker: int) -> Any:
        try:
            return self.workers[worker].recv()
        except pool.WorkerGone as exc:
            msg = f"semantic worker process {worker} died"
            raise MatcherError(msg) from exc

    def close(self) -> None:
        for worker in self.workers:
            worker.close(timeout=5)
