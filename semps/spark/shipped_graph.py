"""The knowledge graph as Spark ships it (``semps spark match --graph``, ``semps spark stream
--graph``): built once on the driver, broadcast once, rebuilt once per Python worker.

A :class:`~semps.graph.view.GraphView` is a term table and, per predicate, sorted arrays of
``subject << 32 | object`` keys with their asserted flags. :func:`ship_graph` packs it as
exactly that: the terms in id order, and each predicate's two NumPy arrays (which pickle as
their raw bytes, 9 bytes a closure triple); the workers index the keys the other way round
(the ``os`` arrays) themselves instead of receiving them, and take the ontology from the
subscriptions' broadcast (:class:`~semps.spark.shipped_index.ShippedIndex`), which carries
it already (brick-kg-a: 13,844 closure triples and 4,366 terms pickle to 0.35 MB; its Brick
ontology's rules would add 0.85 MB). :func:`worker_graph` gives each Python worker its view
of a shipped graph, built on its first task and kept while the worker lives (workers are
reused between tasks and jobs), so the matcher's per-version state over it
(:class:`~semps.matcher.semantic.graphmatch.GraphMatching`) is built once too.
"""

from __future__ import annotations

import gc
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from semps._types import Term
from semps.graph.terms import TermTable
from semps.graph.view import GraphView
from semps.ontology.expansion import Expansion

if TYPE_CHECKING:
    from pyspark import Broadcast, SparkContext

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
#: One predicate's closure: (predicate id, sorted ``s << 32 | o`` keys, asserted flags).
Segment = tuple[int, IntArray, BoolArray]


@dataclass(frozen=True, eq=False)
class ShippedGraph:
    """A graph view packed for a broadcast.

    Attributes:
        token: names this graph (one per driver load): workers keep one view per token.
        terms: every term of the view's table, in id order.
        segments: each predicate's closure (:data:`Segment`).
        version: the view's version (the matcher's graph state is kept per version).
    """

    token: str
    terms: tuple[Term, ...]
    segments: tuple[Segment, ...]
    version: int = 1

    def __len__(self) -> int:
        return sum(len(keys) for _, keys, _ in self.segments)

    @property
    def nbytes(self) -> int:
        """The arrays' bytes (the terms not counted)."""
        return sum(keys.nbytes + flags.nbytes for _, keys, flags in self.segments)


def ship_graph(view: GraphView) -> ShippedGraph:
    """``view`` packed for a broadcast (its overlays merged in; the view is not changed).

    Example:
        >>> from semps.graph.graph import KnowledgeGraph
        >>> g = KnowledgeGraph()
        >>> _ = g.insert([("http://ex/a", "http://ex/p", "http://ex/b")])
        >>> shipped = ship_graph(g.view)
        >>> len(shipped), shipped.terms[-3:]
        (1, ('http://ex/a', 'http://ex/p', 'http://ex/b'))
        >>> unpacked_graph(shipped, g.view.expansion).objects_of("http://ex/a", "http://ex/p")
        ['http://ex/b']
    """
    segments = []
    for p in sorted(view.triples.predicates()):
        keys, flags = view.triples.segments[p].packed()
        segments.append((p, keys, flags))
    return ShippedGraph(
        uuid.uuid4().hex,
        tuple(view.terms.by_id),
        tuple(segments),
        max(1, view.version),
    )


def unpacked_graph(shipped: ShippedGraph, expansion: Expansion) -> GraphView:
    """A new view of a shipped graph, whose closure is under ``expansion``."""
    view = GraphView(expansion, TermTable(shipped.terms))
    for p, keys, flags in shipped.segments:
        view.triples.replace(p, keys, flags)
    view.version = shipped.version
    return view


#: This Python worker's view of the graph shipped last (by token).
_VIEWS: dict[str, GraphView] = {}


def worker_graph(shipped: ShippedGraph | None, expansion: Expansion) -> GraphView | None:
    """This Python worker's view of ``shipped`` (``None`` for none) under ``expansion`` (the
    ontology its closure was made under), built once per token (the view of an older token
    is dropped)."""
    if shipped is None:
        return None
    found = _VIEWS.get(shipped.token)
    if found is None:
        _VIEWS.clear()
        found = _VIEWS[shipped.token] = unpacked_graph(shipped, expansion)
        # Kept as long as the worker: out of the cyclic GC's later scans (its literals are
        # tuples), as the subscriptions' index is (semps.spark.shipped_index.worker_matchers).
        gc.collect()
        gc.freeze()
    return found


def broadcast_graph(
    context: SparkContext, graph: GraphView | None
) -> Broadcast[ShippedGraph] | None:
    """The knowledge graph packed (:func:`~semps.spark.shipped_graph.ship_graph`) and
    broadcast, once; ``None`` without one (or an empty one: events are then matched
    alone, as ``semps match`` does)."""
    if graph is None or graph.empty:
        return None
    return context.broadcast(ship_graph(graph))


def shipped_value(shipped: Broadcast[ShippedGraph] | None) -> ShippedGraph | None:
    """What ``shipped`` holds, read in a task (``None`` for no graph)."""
    return None if shipped is None else shipped.value


__all__ = [
    "ShippedGraph",
    "broadcast_graph",
    "ship_graph",
    "shipped_value",
    "unpacked_graph",
    "worker_graph",
]
