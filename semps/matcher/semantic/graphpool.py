"""Worker processes matching event files against a knowledge graph (``semps match --graph
--workers N``).

Forked once the subscriptions are indexed and the graph is loaded, while the process runs
one thread: each worker inherits the index, the graph's closure (NumPy arrays, shared
copy-on-write) and the matcher's graph state, reads its share of each batch of files
itself, and writes their result lines. Batches are split in contiguous slices, so the lines
come back in order.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any, Protocol

from semps.errors import IngestError, MatcherError
from semps.gcpolicy import BatchCollector
from semps.graph.view import GraphView
from semps.matcher.base import MatchContext
from semps.ontology.expansion import Expansion


class _Matching(Protocol):
    """What the workers need of the semantic matcher."""

    def graph_matching(self) -> object:
        """Set up matching against graphs (before the fork)."""
        ...

    def result_lines(self, contexts: Sequence[MatchContext]) -> list[str]:
        """The output lines of a batch."""
        ...


def _serve(conn: Connection, matcher: _Matching, view: GraphView, expansion: Expansion) -> None:
    from semps.ingest.rdf import read_events

    gc.freeze()
    collector = BatchCollector()
    while True:
        op, payload = conn.recv()
        if op == "stop":
            return
        paths, base = payload
        try:
            events = list(read_events(paths, base))
        except IngestError as exc:
            conn.send(("error", str(exc)))
            continue
        contexts = [MatchContext(e, expansion, graph=view) for e in events]
        try:
            with collector.batch():
                conn.send(("lines", matcher.result_lines(contexts)))
        except IngestError as exc:  # an event past a limit
            conn.send(("error", str(exc)))


class GraphPool:
    """``n`` forked workers matching files against one graph version."""

    def __init__(self, n: int, matcher: _Matching, view: GraphView, expansion: Expansion) -> None:
        if threading.active_count() != 1 or "fork" not in mp.get_all_start_methods():
            msg = "matching against a graph with several workers needs a single-threaded fork"
            raise MatcherError(msg)
        matcher.graph_matching()  # built before the fork: the workers inherit it
        ctx: Any = mp.get_context("fork")
        self.n = n
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        gc.freeze()
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, matcher, view, expansion), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def submit_files(self, paths: Sequence[str], base: str | None) -> Callable[[], list[str]]:
        """Start matching the files (a slice per worker); the returned function waits for
        their lines, in order (IngestError for an unreadable file)."""
        bounds = [len(paths) * i // self.n for i in range(self.n + 1)]
        for w in range(self.n):
            self.conns[w].send(("files", (list(paths[bounds[w] : bounds[w + 1]]), base)))

        def collect() -> list[str]:
            answers = [self._recv(w) for w in range(self.n)]
            for kind, value in answers:
                if kind == "error":
                    raise IngestError(value)
            return [line for _, lines in answers for line in lines]

        return collect

    def _recv(self, worker: int) -> Any:
        try:
            return self.conns[worker].recv()
        except EOFError as exc:
            msg = f"graph matching worker {worker} died"
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
