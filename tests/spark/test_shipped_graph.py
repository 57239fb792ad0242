"""The knowledge graph as Spark ships it (semps.spark.shipped_graph): packed on the driver,
pickled as a broadcast is, and unpacked by a worker into a view that answers as the
driver's does (no Spark needed)."""

from __future__ import annotations

import pickle

from semps.graph.graph import KnowledgeGraph
from semps.ontology.compile import compile_axioms
from semps.spark.shipped_graph import ship_graph, unpacked_graph, worker_graph
from semps.terms import RDF_TYPE, RDFS, XSD, Literal

EX = "http://ex/"


def _edited_graph() -> KnowledgeGraph:
    """A graph under a subclass axiom, edited after its load: its view holds an overlay of
    recent changes (added and removed triples) besides its arrays."""
    expansion = compile_axioms([(EX + "Sensor", RDFS + "subClassOf", EX + "Point")])
    graph = KnowledgeGraph(expansion)
    graph.load([(EX + f"s{i}", RDF_TYPE, EX + "Sensor") for i in range(50)])
    graph.insert([(EX + "s1", EX + "value", Literal("80.6", XSD + "decimal"))])
    graph.delete([(EX + "s2", RDF_TYPE, EX + "Sensor")])
    return graph


def test_a_shipped_graph_unpacks_to_the_same_closure_and_asserted_triples() -> None:
    view = _edited_graph().view
    shipped = pickle.loads(pickle.dumps(ship_graph(view), protocol=pickle.HIGHEST_PROTOCOL))
    copy = unpacked_graph(shipped, view.expansion)
    assert sorted(copy.term_triples()) == sorted(view.term_triples())
    assert sorted(copy.term_triples(asserted_only=True)) == sorted(
        view.term_triples(asserted_only=True)
    )
    assert copy.contains((EX + "s1", RDF_TYPE, EX + "Point"))  # inferred, shipped
    assert not copy.contains((EX + "s2", RDF_TYPE, EX + "Point"))  # deleted with its cause
    assert list(copy.terms.by_id) == list(view.terms.by_id)  # ids as the driver numbered them
    assert (len(shipped), copy.version) == (len(view), view.version)


def test_a_worker_builds_one_view_per_shipped_graph() -> None:
    view = _edited_graph().view
    first, second = ship_graph(view), ship_graph(view)
    mine = worker_graph(first, view.expansion)
    assert mine is worker_graph(first, view.expansion)  # built once, kept
    assert worker_graph(second, view.expansion) is not mine  # another load: another view
    assert worker_graph(None, view.expansion) is None
