"""The OWL 2 RL closure of the knowledge-graph oracle: owlrl's, kept under additions.

owlrl evaluates its rules naively: every cycle fires every rule from every triple of the
graph, about 5 cycles to a fixpoint. Over the Brick ontology (20k triples, 75k closed) that
is one to two minutes for each closure, so an oracle that closes ontology + graph + event
afresh for each event (``../shared/workloads/brick-kg-a``: 60 events) would take hours.

:class:`OwlrlClosure` computes the closure of its first triples with owlrl itself
(``DeductiveClosure(OWLRL_Semantics, axiomatic_triples=False)``), then adds more triples
semi-naively with **owlrl's own rule code**: each round fires owlrl's rule groups for
properties, equality, classes and class axioms (the schema rules have no data premise) only
on the triples a new triple can take part in: the new triple itself (for the rules it
triggers) and the schema triples that trigger a rule having a premise of its shape (a
``p``-triple: ``p``'s domain, range, super- and equivalent properties, inverses, property
characteristics, chains, keys, and the restrictions on ``p``; a ``x rdf:type C`` triple:
``C``'s super- and equivalent classes, the intersections and unions naming ``C``, the
restrictions on or filled by ``C``). The rule bodies, and so the entailments, stay owlrl's;
only the choice of triggers is this module's. A round's rules also see the graph through
:class:`_Around`: a lookup with a free subject (owlrl's scans of a rule's data premise, such
as every instance of a class) sees only the triples touching a node of the round's new
triples; an instance of a rule that has a new premise has all its data premises joined to
it through shared nodes, so its scanned premise touches one (not so for property chains and
keys, whose ontologies are closed with whole scans).
``tests/graph/test_kg_oracle.py::test_adding_triples_semi_naively_equals_owlrl_afresh``
checks all this against owlrl's own closure on random ontologies, graphs and events.

Additions that bring schema (a subclass axiom, a class declaration, a non-reflexive
``owl:sameAs``) fall back to owlrl over the whole graph. Reflexive ``owl:sameAs`` triples
(owlrl's eq-ref, one for every node) are never triggers: their rules only re-derive their
premises. New literals get owlrl's datatype facts (dt-type2) from owlrl's one-time rule run
on the added triples alone; facts about the vocabulary are not kept current (the datatype
disjointness owlrl states when a second datatype comes into use: the oracle drops such facts,
``kg_oracle.claimed``).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import owlrl
import rdflib
from owlrl.DatatypeHandling import use_Alt_lexical_conversions, use_RDFLib_lexical_conversions
from rdflib import OWL, RDF, RDFS, Literal

RdfTriple = tuple[rdflib.term.Node, rdflib.term.Node, rdflib.term.Node]

#: Predicates of schema triples: an addition holding one is closed by owlrl afresh.
SCHEMA_PREDICATES = frozenset(
    {
        RDFS.subClassOf,
        RDFS.subPropertyOf,
        RDFS.domain,
        RDFS.range,
        OWL.equivalentClass,
        OWL.equivalentProperty,
        OWL.inverseOf,
        OWL.onProperty,
        OWL.onClass,
        OWL.hasValue,
        OWL.someValuesFrom,
        OWL.allValuesFrom,
        OWL.intersectionOf,
        OWL.unionOf,
        OWL.complementOf,
        OWL.oneOf,
        OWL.propertyChainAxiom,
        OWL.hasKey,
        OWL.maxCardinality,
        OWL.maxQualifiedCardinality,
        OWL.disjointWith,
        OWL.propertyDisjointWith,
        OWL.members,
        OWL.distinctMembers,
        OWL.sourceIndividual,
        OWL.differentFrom,
        RDF.first,
        RDF.rest,
    }
)
#: Property characteristics: ``p rdf:type X`` triggers the rules of ``p``'s triples.
CHARACTERISTICS = frozenset(
    {
        OWL.FunctionalProperty,
        OWL.InverseFunctionalProperty,
        OWL.SymmetricProperty,
        OWL.AsymmetricProperty,
        OWL.TransitiveProperty,
        OWL.IrreflexiveProperty,
    }
)
#: Classes of schema nodes: typing a node with one of them is a schema triple.
SCHEMA_CLASSES = CHARACTERISTICS | {
    OWL.Class,
    RDFS.Class,
    OWL.Restriction,
    OWL.ObjectProperty,
    OWL.DatatypeProperty,
    OWL.AnnotationProperty,
    RDF.Property,
    RDFS.Datatype,
    OWL.AllDisjointClasses,
    OWL.AllDisjointProperties,
    OWL.AllDifferent,
    OWL.NegativePropertyAssertion,
    OWL.ReflexiveProperty,
}
#: A restriction's triple that triggers its rules, by the restriction's kind.
_RESTRICTION_TRIGGERS = (
    OWL.someValuesFrom,
    OWL.allValuesFrom,
    OWL.hasValue,
    OWL.maxCardinality,
    OWL.maxQualifiedCardinality,
)
#: Schema predicates whose triple is filed under its subject class alone.
_CLASS_OF_SUBJECT = (
    RDFS.subClassOf,
    OWL.allValuesFrom,
    OWL.hasValue,
    OWL.maxCardinality,
    OWL.maxQualifiedCardinality,
)


def is_schema(triple: RdfTriple) -> bool:
    """Whether a triple is schema (changes which rules apply) rather than data."""
    s, p, o = triple
    if p in SCHEMA_PREDICATES:
        return True
    if p == RDF.type:
        return o in SCHEMA_CLASSES
    return p == OWL.sameAs and s != o


def owlrl_closure(graph: rdflib.Graph) -> None:
    """owlrl's OWL 2 RL closure of ``graph``, in place (no axiomatic triples)."""
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(graph)


class OwlrlClosure:
    """A graph kept closed under owlrl's OWL 2 RL rules as triples are added (or the
    additions undone).

    Example:
        >>> from rdflib import URIRef
        >>> ex = "http://example.org/"
        >>> c = OwlrlClosure([(URIRef(ex + "A"), RDFS.subClassOf, URIRef(ex + "B"))])
        >>> new = c.add([(URIRef(ex + "a"), RDF.type, URIRef(ex + "A"))])
        >>> (URIRef(ex + "a"), RDF.type, URIRef(ex + "B")) in c.graph
        True
        >>> c.undo(new)
        >>> (URIRef(ex + "a"), RDF.type, URIRef(ex + "B")) in c.graph
        False
    """

    def __init__(self, triples: Iterable[RdfTriple], *, closed: bool = False) -> None:
        """``closed``: the triples are an owlrl closure already (from :func:`cached`)."""
        self.graph = rdflib.Graph()
        for t in triples:
            self.graph.add(t)
        if not closed:
            owlrl_closure(self.graph)
        self.rounds = 0
        self.fallbacks = 0
        self._index()

    def _index(self) -> None:
        """The schema triples that trigger rules, by the property or class of the data
        premises they join with."""
        g = self.graph
        by_prop: defaultdict[object, set[RdfTriple]] = defaultdict(set)
        by_class: defaultdict[object, set[RdfTriple]] = defaultdict(set)
        same_s: defaultdict[object, set[RdfTriple]] = defaultdict(set)
        same_o: defaultdict[object, set[RdfTriple]] = defaultdict(set)
        for t in g:
            s, p, o = t
            if p in (RDFS.domain, RDFS.range, RDFS.subPropertyOf):
                by_prop[s].add(t)
            elif p in (OWL.equivalentProperty, OWL.inverseOf):
                by_prop[s].add(t)
                by_prop[o].add(t)
            elif p == RDF.type and o in CHARACTERISTICS:
                by_prop[s].add(t)
            elif p == OWL.onProperty:
                for kind in _RESTRICTION_TRIGGERS:
                    by_prop[o].update(g.triples((s, kind, None)))
            elif p == OWL.propertyChainAxiom:
                for q in g.items(o):
                    by_prop[q].add(t)
            elif p == OWL.hasKey:
                by_class[s].add(t)
                for q in g.items(o):
                    by_prop[q].add(t)
            elif p in _CLASS_OF_SUBJECT:
                by_class[s].add(t)
            elif p == OWL.equivalentClass:
                by_class[s].add(t)
                by_class[o].add(t)
            elif p in (OWL.intersectionOf, OWL.unionOf):
                for c in g.items(o):
                    by_class[c].add(t)
                if p == OWL.intersectionOf:  # its class too; a union's is no premise
                    by_class[s].add(t)
            elif p == OWL.someValuesFrom:
                by_class[o].add(t)
            elif p == OWL.onClass:
                by_class[o].update(g.triples((s, OWL.maxQualifiedCardinality, None)))
            elif p == OWL.sameAs and s != o:
                same_s[s].add(t)
                same_o[o].add(t)
        self._by_prop, self._by_class = by_prop, by_class
        self._same_s, self._same_o = same_s, same_o
        chains = (None, OWL.propertyChainAxiom, None)
        self._local = not (any(g.triples(chains)) or any(g.triples((None, OWL.hasKey, None))))

    def _triggers(self, d: RdfTriple) -> set[RdfTriple]:
        """The triples to fire rules on for a new triple ``d``: itself and the schema
        triples of rules with a premise of its shape."""
        s, p, o = d
        found = {d} if not (p == OWL.sameAs and s == o) else set()
        found |= self._by_prop.get(p, set())
        if p == RDF.type:
            found |= self._by_class.get(o, set())
        for table, key in ((self._same_s, s), (self._same_s, p), (self._same_o, o)):
            found |= table.get(key, set())
        return found

    def add(self, triples: Iterable[RdfTriple]) -> set[RdfTriple]:
        """Add ``triples`` and everything they entail; the triples new in the graph."""
        g = self.graph
        given = {t for t in triples if t not in g}
        # owlrl's one-time datatype rule, on the given triples as owlrl runs it on its input
        delta = {t for t in given | _datatype_facts(given) if t not in g}
        added: set[RdfTriple] = set()
        use_Alt_lexical_conversions()
        try:
            while delta:
                if any(map(is_schema, delta)):
                    return added | self._afresh(delta)
                for t in delta:
                    g.add(t)
                added |= delta
                nodes = {x for s, p, o in delta for x in (s, o) if not (p == RDF.type and x is o)}
                seen = _Around(g, nodes) if self._local and len(nodes) <= _LOCAL_NODES else g
                rules = owlrl.OWLRL_Semantics(seen, False, False)
                groups = (rules._properties, rules._equality, rules._classes, rules._class_axioms)
                for t in set().union(*map(self._triggers, delta)):
                    for group in groups:  # the schema rules (scm-*) have no data premise
                        group(t, 2)
                self.rounds += 1
                delta = set(rules.added_triples)
        finally:
            use_RDFLib_lexical_conversions()
        return added

    def _afresh(self, delta: set[RdfTriple]) -> set[RdfTriple]:
        """Schema in an addition: owlrl over the whole graph; the triples it added."""
        self.fallbacks += 1
        before = set(self.graph)
        for t in delta:
            self.graph.add(t)
        owlrl_closure(self.graph)
        self._index()
        return set(self.graph) - before

    def undo(self, added: Iterable[RdfTriple]) -> None:
        """Remove what :meth:`add` added (the graph is closed as before it)."""
        undone = list(added)
        for t in undone:
            self.graph.remove(t)
        if any(map(is_schema, undone)):
            self._index()


#: Rounds bringing more nodes than this scan the whole graph (as fast, and simpler).
_LOCAL_NODES = 200


class _Around(rdflib.Graph):
    """The graph as a semi-naive round's rules see it: a lookup with a free subject yields
    only the triples whose subject or object is one of ``nodes`` (the round's new triples'
    subjects and objects, classes left out); other lookups see the whole graph."""

    def __init__(self, graph: rdflib.Graph, nodes: set[rdflib.term.Node]) -> None:
        super().__init__(store=graph.store, identifier=graph.identifier)
        self._nodes = nodes

    def triples(self, triple):  # type: ignore[no-untyped-def, override]
        s, p, o = triple
        if s is not None:
            yield from super().triples(triple)
            return
        if o is not None and o in self._nodes:
            yield from super().triples(triple)
            return
        seen = set()
        for n in self._nodes:
            for t in super().triples((n, p, o)):
                seen.add(t)
                yield t
            if o is None:
                for t in super().triples((None, p, n)):
                    if t not in seen:
                        yield t


def _datatype_facts(triples: set[RdfTriple]) -> set[RdfTriple]:
    """owlrl's datatype facts (dt-type2: ``"1"^^xsd:integer rdf:type xsd:integer`` and its
    supertypes) of the literals among ``triples``, from owlrl's one-time rule run on them."""
    if not any(isinstance(o, Literal) for _, _, o in triples):
        return set()
    scratch = rdflib.Graph()
    for t in triples:
        scratch.add(t)
    rules = owlrl.OWLRL_Semantics(scratch, False, False)
    rules._one_time_rules_datatypes()
    return {t for t in rules.added_triples if isinstance(t[0], Literal)}


def cached(key: str, triples: list[RdfTriple]) -> OwlrlClosure:
    """The owlrl closure of ``triples`` (an ontology), kept in the user's cache between runs
    (``~/.cache/semps/kg-oracle/<key>-<owlrl version>.pickle``: owlrl takes a minute or two
    over a large ontology such as Brick). ``key`` must change with the triples (a digest of
    the file they were read from)."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    path = base / "semps" / "kg-oracle" / f"{key}-owlrl{owlrl.__version__}.pickle"
    if path.exists():
        return OwlrlClosure(pickle.loads(path.read_bytes()), closed=True)
    closure = OwlrlClosure(triples)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_bytes(pickle.dumps(list(closure.graph)))
    scratch.replace(path)
    return closure


def file_key(path: Path) -> str:
    """A cache key for an ontology file: its name and a digest of its bytes."""
    return f"{path.stem}-{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"


__all__ = ["OwlrlClosure", "RdfTriple", "cached", "file_key", "is_schema", "owlrl_closure"]
