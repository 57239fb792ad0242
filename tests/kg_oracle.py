"""The knowledge-graph oracle: what an event adds to a subscription's answers over a graph,
and how an update of the graph changes them, computed by brute force with engines
independent of semps (owlrl for the closure, pyoxigraph for SPARQL).

Semantics (issue 33), for an ontology O, a knowledge graph K, an event E and a query Q::

    added(Q, E)        = sols(Q, closure(O+K+E)) - sols(Q, closure(O+K))
    change(Q, K -> K') = (sols(Q, closure(O+K')) - sols(Q, closure(O+K)),    # added
                          sols(Q, closure(O+K)) - sols(Q, closure(O+K')))    # removed

with ``-`` the multiset difference (:class:`collections.Counter`). A solution is a frozen
mapping of the projected variables bound in it to their terms (semps' terms: ``str`` IRIs,
``"_:label"`` blank nodes, :class:`semps.terms.Literal`); an ASK query's answer is one
empty solution when true, none when false. The event's blank nodes are renamed apart from
the graph's (an RDF merge).

The closure is owlrl's OWL 2 RL closure without axiomatic triples (as for the shared
workloads' oracles), computed by :mod:`kg_owlrl`. semps supports the OWL 2 RL rules listed
in ``semps/ontology/expansion.py``; owlrl applies more. Of what owlrl adds, the oracle
keeps only what semps claims (:func:`claimed`), so the two are compared on the same terms:

- eq-ref (``x owl:sameAs x`` for every node): dropped;
- datatype facts (dt-type1/2: ``"1"^^xsd:integer rdf:type xsd:integer``, datatype
  declarations), cls-thing, cls-nothing1, prp-ap (facts about ``owl:Thing``,
  ``owl:Nothing`` and the annotation properties): facts about literals and about the
  RDF/RDFS/OWL/XSD vocabulary are dropped;
- ``x rdf:type owl:Thing`` (scm-cls makes every declared class a subclass of owl:Thing,
  then cax-sco): dropped: semps never types a node with owl:Thing;
- generalised triples with a literal subject (prp-inv, prp-symp or prp-rng over a literal
  object): dropped: an RDF graph cannot hold them and no query sees them;
- owlrl's inconsistency reports (cax-dw, prp-irp, ...: ``err:ErrorMessage`` nodes): dropped;
- the rules that make ``owl:sameAs`` (prp-fp, prp-ifp, prp-key, cls-maxc2, cls-maxqc3/4)
  and property chains (prp-spo2), which semps does not support, are kept: the random
  ontologies (:mod:`kg_strategies`) never use them, and the Brick ontology of
  ``brick-kg-a`` declares none (``tests/conformance/test_brick_kg_oracle.py`` checks it).

pyoxigraph evaluates the queries (it passes the W3C SPARQL suites). Where it departs from
SPARQL 1.1, callers give it a rewritten text (:class:`kg_strategies.Query` has
``oracle_text``): an alternative path ``X (P|Q) Y`` is a multiset Union (section 18.5,
``eval(Path(X, alt(P,Q), Y)) = Union(...)``), which pyoxigraph answers as a set, so the
oracle is given ``{ X P Y } UNION { X Q Y }``. ``tests/graph/test_kg_oracle.py`` shows each
difference found between pyoxigraph and rdflib, with the reasoning from the specification.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation

import pyoxigraph as ox
import rdflib
from kg_owlrl import OwlrlClosure, RdfTriple, cached
from owlrl.Namespaces import ERRNS
from rdflib import OWL, RDF, BNode, URIRef
from semps_test_support import from_oxigraph

from semps.terms import XSD, Literal

Triple = tuple[object, object, object]
Solution = frozenset[tuple[str, object]]
Solutions = Counter  # Counter[Solution]

VOCABULARY = (str(RDF), "http://www.w3.org/2000/01/rdf-schema#", str(OWL), XSD)
_NUMBERS = {
    XSD + n
    for n in (
        "integer decimal double float int long short byte nonNegativeInteger "
        "positiveInteger nonPositiveInteger negativeInteger unsignedLong unsignedInt "
        "unsignedShort unsignedByte"
    ).split()
}


# -- terms ------------------------------------------------------------------------------------


def to_rdflib(term: object, bnodes: str = "") -> rdflib.term.Node:
    """A semps term (or an rdflib one, unchanged) as rdflib's; blank node labels get the
    ``bnodes`` prefix (to rename an event's apart from the graph's)."""
    if isinstance(term, rdflib.term.Node):
        return BNode(bnodes + term) if bnodes and isinstance(term, BNode) else term
    if isinstance(term, Literal):
        if term.lang:
            return rdflib.Literal(term.lexical, lang=term.lang, normalize=False)
        if term.datatype == XSD + "string":  # rdflib tells "x" from "x"^^xsd:string
            return rdflib.Literal(term.lexical, normalize=False)
        return rdflib.Literal(term.lexical, datatype=URIRef(term.datatype), normalize=False)
    text = str(term)
    return BNode(bnodes + text[2:]) if text.startswith("_:") else URIRef(text)


def rdflib_triples(triples: Iterable[Triple], bnodes: str = "") -> list[RdfTriple]:
    return [(to_rdflib(s, bnodes), to_rdflib(p), to_rdflib(o, bnodes)) for s, p, o in triples]


def from_rdflib(term: rdflib.term.Node) -> object:
    """An rdflib term as semps' (``str`` IRI, ``"_:label"``, :class:`Literal`)."""
    if isinstance(term, rdflib.Literal):
        if term.language:
            return Literal(str(term), lang=term.language)
        return Literal(str(term), str(term.datatype) if term.datatype else None)
    if isinstance(term, BNode):
        return "_:" + str(term)
    return str(term)


def _ox(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(term, rdflib.Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        datatype = ox.NamedNode(str(term.datatype or XSD + "string"))
        return ox.Literal(str(term), datatype=datatype)
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    return ox.NamedNode(str(term))


def claimed(triple: RdfTriple) -> bool:
    """Whether a closure triple is one semps claims to derive (see the module's text)."""
    s, p, o = triple
    if isinstance(s, rdflib.Literal) or not isinstance(p, URIRef):
        return False
    if p == OWL.sameAs and s == o:
        return False
    if isinstance(s, URIRef) and str(s).startswith(VOCABULARY):
        return False
    if p == RDF.type and o in (OWL.Thing, ERRNS.ErrorMessage):
        return False
    return not str(p).startswith(str(ERRNS))


def quads(triples: Iterable[RdfTriple]) -> list[ox.Quad]:
    """The claimed triples as pyoxigraph quads of the default graph."""
    return [ox.Quad(_ox(s), _ox(p), _ox(o)) for s, p, o in triples if claimed((s, p, o))]


# -- solutions --------------------------------------------------------------------------------


def solutions(store: ox.Store, text: str) -> Solutions:
    """The multiset of ``text``'s solutions over ``store`` (ASK: one empty solution if true)."""
    result = store.query(text)
    if isinstance(result, ox.QueryBoolean):
        return Counter([frozenset()]) if bool(result) else Counter()
    if not isinstance(result, ox.QuerySolutions):
        msg = f"not a SELECT or ASK query: {text}"
        raise TypeError(msg)
    names = [v.value for v in result.variables]
    return Counter(
        frozenset((n, from_oxigraph(row[n])) for n in names if row[n] is not None) for row in result
    )


def canonical_term(term: object) -> object:
    """A term as the comparisons see it: numbers, booleans, dates and date-times by value
    with their datatype (engines write ``"6.63e+01"^^xsd:double`` as ``"66.3"``), language
    tags lower-cased, every blank node as ``"_:"`` (labels are the engine's own)."""
    if isinstance(term, str):
        return "_:" if term.startswith("_:") else term
    if not isinstance(term, Literal):
        return term
    value = _value(term)
    return (term.datatype, value) if value is not None else term


def _value(term: Literal) -> object:
    text, datatype = term.lexical.strip(), term.datatype
    try:
        if datatype in (XSD + "double", XSD + "float"):
            return float(text)
        if datatype in _NUMBERS:
            return Decimal(text)
        if datatype == XSD + "boolean":
            return text in ("true", "1")
        if datatype == XSD + "dateTime":
            return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if datatype == XSD + "date":
            return datetime.date.fromisoformat(text[:10]), text[10:].replace("Z", "+00:00")
    except (ValueError, InvalidOperation):
        return None
    return None


def canonical(solution: Iterable[tuple[str, object]]) -> Solution:
    return frozenset((name, canonical_term(term)) for name, term in solution)


def canonical_counter(found: Mapping[Solution, int]) -> Counter:
    """A multiset of solutions with each term canonical (:func:`canonical_term`)."""
    out: Counter = Counter()
    for solution, count in found.items():
        if count > 0:
            out[canonical(solution)] += count
    return out


# -- the oracle -------------------------------------------------------------------------------


class GraphOracle:
    """An ontology and a knowledge graph, closed once by owlrl; each event is added to the
    closure (semi-naively, with owlrl's rules), queried and taken out again.

    ``cache``: keep the ontology's closure in the user's cache under that key (owlrl takes
    minutes over a large ontology; :func:`kg_owlrl.cached`): a name that changes with the
    ontology, such as its file's digest (its blank nodes differ from one parse to the next).
    """

    def __init__(
        self, ontology: Iterable[Triple], graph: Iterable[Triple], *, cache: str | None = None
    ) -> None:
        schema = rdflib_triples(ontology)
        self.closure = cached(cache, schema) if cache else OwlrlClosure(schema)
        self.closure.add(rdflib_triples(graph))
        self.store = ox.Store()
        self.store.bulk_extend(quads(self.closure.graph))
        self._before: dict[str, Solutions] = {}

    def before(self, text: str) -> Solutions:
        """``text``'s solutions over closure(O+K)."""
        if text not in self._before:
            self._before[text] = solutions(self.store, text)
        return self._before[text]

    def added(
        self, event: Iterable[Triple], queries: Mapping[str, str], *, label: str = "ev"
    ) -> dict[str, Solutions]:
        """Per query id, the solutions ``event`` adds (only the queries it adds some to);
        the event's blank nodes are renamed apart with the ``label`` prefix."""
        before = {qid: self.before(text) for qid, text in queries.items()}
        new = self.closure.add(rdflib_triples(event, bnodes=label + "x"))
        new_quads = quads(new)
        self.store.extend(new_quads)
        try:
            found = {}
            for qid, text in queries.items():
                diff = solutions(self.store, text) - before[qid]
                if diff:
                    found[qid] = diff
            return found
        finally:
            for q in new_quads:
                self.store.remove(q)
            self.closure.undo(new)


def closed_store(ontology: Iterable[Triple], graph: Iterable[Triple]) -> ox.Store:
    """A pyoxigraph store of the claimed owlrl closure of ontology + graph (afresh)."""
    closure = OwlrlClosure([*rdflib_triples(ontology), *rdflib_triples(graph)])
    store = ox.Store()
    store.bulk_extend(quads(closure.graph))
    return store


def added(
    ontology: Iterable[Triple], graph: Iterable[Triple], event: Iterable[Triple], text: str
) -> Solutions:
    """``sols(Q, closure(O+K+E)) - sols(Q, closure(O+K))`` (owlrl afresh for each side)."""
    ontology, graph = list(ontology), list(graph)
    before = solutions(closed_store(ontology, graph), text)
    merged = [*rdflib_triples(graph), *rdflib_triples(event, bnodes="evx")]
    return solutions(closed_store(ontology, merged), text) - before


def expected_change(
    ontology: Iterable[Triple], before: Iterable[Triple], after: Iterable[Triple], text: str
) -> tuple[Solutions, Solutions]:
    """(added, removed): the solutions of ``text`` an update of the graph from ``before``
    to ``after`` adds and removes (blank nodes of ``before`` and ``after`` with the same
    label are the same node)."""
    ((found,),) = [
        step.values() for step in expected_changes(ontology, [before, after], {"q": text})
    ]
    return found


def expected_changes(
    ontology: Iterable[Triple], graphs: Sequence[Iterable[Triple]], queries: Mapping[str, str]
) -> list[dict[str, tuple[Solutions, Solutions]]]:
    """For each step from one graph of ``graphs`` to the next (the graph before the first
    update, then after each), per query id, :func:`expected_change` (each graph closed once)."""
    ontology = list(ontology)
    answers = []
    for graph in graphs:
        store = closed_store(ontology, graph)
        answers.append({qid: solutions(store, text) for qid, text in queries.items()})
    return [
        {qid: (new[qid] - old[qid], old[qid] - new[qid]) for qid in queries}
        for old, new in zip(answers, answers[1:], strict=False)
    ]


def assert_changes(
    found: Sequence[Mapping[str, tuple[Solutions, Solutions]]],
    expected: Sequence[Mapping[str, tuple[Solutions, Solutions]]],
    queries: Mapping[str, str],
    steps: Sequence[str],
) -> None:
    """At each step, per query id, the solutions ``found`` added and removed are the ones
    ``expected`` (up to blank-node labels and literal forms: :func:`canonical_counter`); a
    failure names the step (``steps[i]``) and the query's text (``queries``)."""
    for step, ours, want in zip(steps, found, expected, strict=True):
        for qid, text in queries.items():
            added, removed = want[qid]
            got_added, got_removed = ours.get(qid, (Counter(), Counter()))
            where = f"{step}\n{text}"
            assert canonical_counter(got_added) == canonical_counter(added), "added by " + where
            assert canonical_counter(got_removed) == canonical_counter(removed), (
                "removed by " + where
            )
