"""Worker processes matching event files against a knowledge graph (``semps match --graph
--workers N``), on :mod:`semps.pool` (the one way semps runs work in other processes).

Forked once the subscriptions are indexed and the graph is loaded, while the process runs
one thread: each worker inherits the index, the graph's closure (NumPy arrays, shared
copy-on-write) and the matcher's graph state, reads its share of each batch of files
itself, and answers with their result lines. Batches are split in contiguous slices, so the
lines come back in order.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from semps import pool
from semps.errors import MatcherError
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


def _handler(
    matcher: _Matching, view: GraphView, expansion: Expansion, progress: pool.Progress | None
) -> Callable[[tuple[list[str], str | None]], list[str]]:
    """A worker's handler (the pool's target): ``(paths, base)`` -> the files' result lines
    (an IngestError for an unreadable file or an event past a limit goes back to the
    parent)."""
    from semps.ingest.rdf import read_events

    del progress
    gc.freeze()
    collector = BatchCollector()

    def files(request: tuple[list[str], str | None]) -> list[str]:
        paths, base = request
        events = list(read_events(paths, base))
        contexts = [MatchContext(e, expansion, graph=view) for e in events]
        with collector.batch():
            return matcher.result_lines(contexts)

    return files


class GraphPool:
    """``n`` forked workers matching files against one graph version."""

    def __init__(self, n: int, matcher: _Matching, view: GraphView, expansion: Expansion) -> None:
        if not pool.can_fork():
            msg = "matching against a graph with several workers needs a single-threaded fork"
            raise MatcherError(msg)
        matcher.graph_matching()  # built before the fork: the workers inherit it
        gc.freeze()
        self.n = n
        self.workers = pool.start_workers(
            n, _handler, (matcher, view, expansion), inherit=True, role="graph matching"
        )

    def submit_files(self, paths: Sequence[str], base: str | None) -> Callable[[], list[str]]:
        """Start matching the files (a slice per worker); the returned function waits for
        their lines, in order (IngestError for an unreadable file)."""
        bounds = [len(paths) * i // self.n for i in range(self.n + 1)]
        for w, worker in enumerate(self.workers):
            worker.send((list(paths[bounds[w] : bounds[w + 1]]), base))

        def collect() -> list[str]:
            answers: list[Any] = []
            failure: BaseException | None = None
            for worker in self.workers:  # every reply read, so the pipes stay in step
                try:
                    answers.append(worker.recv())
                except pool.WorkerGone as exc:
                    raise MatcherError(str(exc)) from exc
                except Exception as exc:  # the worker's error, re-raised below
                    failure = failure or exc
            if failure is not None:
                raise failure
            return [line for lines in answers for line in lines]

        return collect

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
