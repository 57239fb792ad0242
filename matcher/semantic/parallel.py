"""Worker processes for phase 2/3: each holds a replica of the subscription index.

Per event, the parent runs counter filtering, plans the candidates with
:func:`~semps.matcher.semantic.plan.plan_partitions` and sends every worker its scan. Two
workers sharing a part claim candidates from opposite ends through a shared cursor pair
(``lo``, ``hi``) until they meet, so every candidate is verified exactly once. Batches of
events are split between the workers, each running phases 1 and 3 on its share.

Processes are started with ``spawn`` (safe under the threads of a web server); the index
replicas are kept in step by forwarding every add and remove.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from semps.errors import MatcherError
from semps.ingest.event import Event
from semps.ingest.partab import EventParts
from semps.ingest.sparql import parse_query
from semps.matcher.base import Match, MatchContext
from semps.matcher.semantic.compiled import compile_query
from semps.matcher.semantic.index import EventPairs, SubscriptionIndex
from semps.matcher.semantic.plan import Scan, plan_partitions
from semps.matcher.semantic.verify import verify
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
    index: SubscriptionIndex, task: dict[str, Any], cursors: Any, lock: Any, limit: int
) -> list[Match]:
    pairs = EventPairs(task["parts"])
    ids: list[str] = task["candidates"]
    scan: Scan = task["scan"]
    out: list[Match] = []
    while True:
        claimed = _claim(cursors, lock, scan.part, scan.direction == "backward")
        if not claimed:
            return out
        for i in claimed:
            sub = index.subscriptions[ids[i]]
            verdict = verify(sub, pairs, limit)
            if verdict is not None:
                out.append(Match(sub.id, task["event"], verdict.count, verdict.solutions))


def _worker(conn: Connection, cursors: Any, lock: Any, texts: dict[str, str], limit: int) -> None:
    from semps.matcher.semantic.matcher import match_parts

    index = SubscriptionIndex()
    for sub_id, text in texts.items():
        index.insert(compile_query(sub_id, parse_query(text)))
    gc.freeze()  # the replica is long-lived: keep the cyclic GC from rescanning it
    while True:
        op, payload = conn.recv()
        if op == "stop":
            return
        if op == "add":
            index.insert(compile_query(payload[0], parse_query(payload[1])))
        elif op == "remove":
            index.delete(payload)
        elif op == "scan":
            conn.send(_scan(index, payload, cursors, lock, limit))
        elif op == "match":
            events, expansion = payload
            results = []
            for event in events:
                parts = MatchContext(event, expansion).parts
                found = match_parts(index, EventPairs(parts), event.id, None, limit)
                results.append([(m.subscription, m.count, m.solutions) for m in found])
            conn.send(results)


class WorkerPool:
    """``n`` worker processes with index replicas and a shared cursor array."""

    def __init__(self, n: int, texts: dict[str, str], limit: int) -> None:
        ctx = mp.get_context("spawn")
        self.n = n
        self.lock = ctx.Lock()
        self.cursors = ctx.RawArray("q", 2 * n)
        self.conns: list[Connection] = []
        self.procs = []
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(
                target=_worker, args=(child, self.cursors, self.lock, texts, limit), daemon=True
            )
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def add(self, sub_id: str, text: str) -> None:
        for conn in self.conns:
            conn.send(("add", (sub_id, text)))

    def remove(self, sub_id: str) -> None:
        for conn in self.conns:
            conn.send(("remove", sub_id))

    def verify(self, parts: EventParts, candidates: list[str]) -> list[Match]:
        """Phase 2+3 for one event: every worker scans its share of ``candidates``."""
        scans = plan_partitions(len(candidates), self.n)
        for scan in scans:
            self.cursors[2 * scan.part] = scan.start
            self.cursors[2 * scan.part + 1] = scan.stop
        for scan in scans:
            task = {"parts": parts, "candidates": candidates, "scan": scan, "event": parts.event_id}
            self.conns[scan.worker].send(("scan", task))
        matches = [m for scan in scans for m in self._recv(scan.worker)]
        matches.sort(key=lambda m: m.subscription)
        return matches

    def match_many(self, events: Sequence[Event], expansion: Expansion) -> list[list[Match]]:
        """Closure and phases 1-3 for a batch: contiguous slices of the events, one per
        worker (results travel back as plain tuples: cheaper to pickle than matches)."""
        bounds = [len(events) * i // self.n for i in range(self.n + 1)]
        for w in range(self.n):
            self.conns[w].send(("match", (list(events[bounds[w] : bounds[w + 1]]), expansion)))
        out: list[list[Match]] = []
        for w, start in enumerate(bounds[:-1]):
            for offset, rows in enumerate(self._recv(w)):
                event_id = events[start + offset].id
                out.append([Match(sub, event_id, count, sols) for sub, count, sols in rows])
        return out

    def _recv(self, worker: int) -> Any:
        try:
            return self.conns[worker].recv()
        except EOFError as exc:
            msg = f"semantic worker process {worker} died"
            raise MatcherError(msg) from exc

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop", None))
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
