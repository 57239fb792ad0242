"""What an event adds to the closure of the knowledge graph: ``Delta(E) = closure(O+K+E) -
closure(O+K)``, computed from the event's triples against the materialised closure of K
(never a copy of K, never a recompute).

Two steps. The event is first closed on its own (:func:`~semps.ontology.closure.close`, exactly as
without a graph: its schema triples, ``owl:sameAs`` between its own nodes, the same limit
and error). Then what that closure holds beyond K is closed *semi-naively* against K
(:meth:`~semps.graph.reason.Reasoner.add`): a new triple joins K's triples (a sensor's
class from the event, its equipment from K; a tag from K, the class it completes from the
event), and only what K did not hold goes on. So the work is what the event brings, and the
result is exactly the new triples.

An event's own ``owl:sameAs`` triples are closed within the event only (they do not copy
the graph's triples about the nodes they equate); the graph itself refuses ``owl:sameAs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from semps._types import Term, Triple
from semps.graph.local import LocalTerms
from semps.graph.reason import Reasoner, TooMany, Working
from semps.graph.view import GraphView
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.closure import close, too_many

IdTriple = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Delta:
    """An event's new closure triples, as ids (:attr:`terms` gives their terms: ids past the
    graph's table are the event's own new terms)."""

    triples: tuple[IdTriple, ...]
    terms: LocalTerms

    def __len__(self) -> int:
        return len(self.triples)

    def term_triples(self) -> list[Triple]:
        """The new triples as terms."""
        return self.terms.triples(self.triples)


def event_delta(
    view: GraphView, triples: Sequence[Triple], *, limits: Limits = DEFAULT_LIMITS
) -> Delta:
    """``closure(O+K+E) - closure(O+K)`` for an event of ``triples``.

    Raises:
        EventLimitExceeded: the event closes to more than
            ``limits.closure_limit(len(triples))`` triples, on its own or against the
            graph (the error an event without a graph gets).

    Example:
        >>> from semps.graph.graph import KnowledgeGraph
        >>> from semps.ontology.compile import compile_axioms
        >>> from semps.terms import RDF_TYPE, RDFS
        >>> ex = "http://ex/"
        >>> g = KnowledgeGraph(compile_axioms([(ex + "reads", RDFS + "domain", ex + "Sensor")]))
        >>> _ = g.insert([(ex + "s1", RDF_TYPE, ex + "Sensor")])
        >>> event = [(ex + "s1", ex + "reads", ex + "v"), (ex + "s2", ex + "reads", ex + "v")]
        >>> for t in sorted(event_delta(g.view, event).term_triples()):  # s1: a Sensor already
        ...     print(*(x.removeprefix(ex) for x in t))
        s1 reads v
        s2 reads v
        s2 http://www.w3.org/1999/02/22-rdf-syntax-ns#type Sensor
    """
    own = close(view.expansion, triples, limits=limits)
    local = LocalTerms(view.terms)
    ids = local.ids(own)
    limit = limits.closure_limit(len(triples))
    reasoner = Reasoner(view.rules, Working(view.triples, local.kind, local.first))
    try:
        found = reasoner.add(ids, limit)
    except TooMany as exc:
        raise too_many(exc.limit) from None
    return Delta(tuple(found), local)


def delta_terms(delta: Delta) -> list[Term]:
    """The terms the event brings that the graph has never seen."""
    return list(delta.terms.new)
