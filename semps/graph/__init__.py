"""The knowledge graph: the facts (individuals) semps knows, beside the ontology.

Events are matched against what they add to the graph's answers; the graph is loaded in
bulk, edited with SPARQL 1.1 Update and the Graph Store Protocol's operations, kept closed
under the ontology incrementally, and stored in the data directory's SQLite file.

- :class:`KnowledgeGraph` (:mod:`.graph`): plan, commit, load, update, export.
- :class:`GraphView` (:mod:`.view`): the closure at one version, as matching reads it;
  replicas follow the main process's :class:`GraphChange` s.
- :func:`event_delta` (:mod:`.delta`): what an event adds to the closure.
- :class:`GraphPairs` (:mod:`.pairs`): the graph as the SPARQL evaluator reads it.
- :mod:`.gsp`: the Graph Store Protocol's operations on the default graph.
"""

from semps.graph.change import GraphChange
from semps.graph.delta import Delta, event_delta
from semps.graph.graph import DATABASE, KnowledgeGraph, connect
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView

__all__ = [
    "DATABASE",
    "Delta",
    "GraphChange",
    "GraphPairs",
    "GraphView",
    "KnowledgeGraph",
    "connect",
    "event_delta",
]
