"""Axioms and facts: which triples of a document belong in the ontology and which in the
knowledge graph.

An ontology document may describe individuals as well as classes and properties (a Brick
file with its building model appended). The ontology keeps the *axioms*: triples about the
vocabulary (a class, a property, a restriction, a list inside an axiom, the ontology
header) and triples whose predicate is a schema predicate (``rdfs:subClassOf``,
``owl:onProperty``, ...). Everything else is a *fact* about an individual (``:s1 a
brick:Sensor``, ``:s1 brick:isPointOf :ahu1``): it belongs in the knowledge graph. Facts are
never dropped in silence: the CLI's ``semps match --ontology`` hands them to the graph with
a note, the ontology store refuses them saying where they belong.

The knowledge graph refuses the converse (:func:`axiom_reason`): a schema triple is an
axiom and goes to the ontology.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from semps._types import Term, Triple
from semps.ontology.compile import META_CLASSES
from semps.terms import OWL, RDF, RDF_TYPE, RDFS

#: Predicates only axioms use: their triples always belong in the ontology.
SCHEMA_PREDICATES = frozenset(
    {RDFS + p for p in ("subClassOf", "subPropertyOf", "domain", "range")}
    | {
        OWL + p
        for p in (
            "equivalentClass",
            "equivalentProperty",
            "inverseOf",
            "onProperty",
            "someValuesFrom",
            "allValuesFrom",
            "hasValue",
            "intersectionOf",
            "unionOf",
            "complementOf",
            "oneOf",
            "disjointWith",
            "propertyDisjointWith",
            "propertyChainAxiom",
            "hasKey",
            "onClass",
            "onDataRange",
            "cardinality",
            "minCardinality",
            "maxCardinality",
            "qualifiedCardinality",
            "minQualifiedCardinality",
            "maxQualifiedCardinality",
            "imports",
            "members",
            "distinctMembers",
            "withRestrictions",
            "onDatatype",
            "disjointUnionOf",
            "hasSelf",
            "sourceIndividual",
            "assertionProperty",
            "targetIndividual",
            "targetValue",
        )
    }
)

#: Types that make their subject part of the vocabulary.
VOCABULARY_TYPES = (
    META_CLASSES
    | {RDFS + "Datatype"}
    | frozenset(
        OWL + p
        for p in (
            "TransitiveProperty",
            "SymmetricProperty",
            "AsymmetricProperty",
            "ReflexiveProperty",
            "IrreflexiveProperty",
            "FunctionalProperty",
            "InverseFunctionalProperty",
            "AllDisjointClasses",
            "AllDisjointProperties",
            "AllDifferent",
            "NegativePropertyAssertion",
            "DataRange",
            "OntologyProperty",
            "DeprecatedClass",
            "DeprecatedProperty",
        )
    )
)

_LIST = (RDF + "first", RDF + "rest")


@dataclass(frozen=True, slots=True)
class Split:
    """A document's triples, split: ``axioms`` for the ontology, ``facts`` for the graph."""

    axioms: tuple[Triple, ...]
    facts: tuple[Triple, ...]


def _vocabulary(triples: Sequence[Triple]) -> set[Term]:
    """The nodes an axiom is about: typed as vocabulary, at either end of a schema
    predicate (but a ``hasValue`` filler, an individual), or in a list an axiom holds."""
    found: set[Term] = set()
    lists: list[Term] = []
    for s, p, o in triples:
        if p == RDF_TYPE and o in VOCABULARY_TYPES:
            found.add(s)
        elif p in SCHEMA_PREDICATES:
            found.add(s)
            if p == OWL + "hasValue":
                continue
            if p in (OWL + "intersectionOf", OWL + "unionOf", OWL + "oneOf", OWL + "members"):
                lists.append(o)
            elif type(o) is str:
                found.add(o)
    rest: dict[Term, list[Term]] = {}
    for s, p, o in triples:
        if p in _LIST:
            rest.setdefault(s, []).append(o)
    while lists:  # every cell of the lists axioms hold
        cell = lists.pop()
        if cell in found or cell not in rest:
            continue
        found.add(cell)
        lists.extend(rest[cell])
    return found


def split(triples: Iterable[Triple]) -> Split:
    """Split a document's triples into axioms and facts (see the module docstring).

    Example:
        >>> ex = "http://ex/"
        >>> s = split([(ex + "Sensor", RDFS + "subClassOf", ex + "Point"),
        ...            (ex + "s1", RDF_TYPE, ex + "Sensor"),
        ...            (ex + "s1", ex + "isPointOf", ex + "ahu1")])
        >>> len(s.axioms), [t[0] for t in s.facts]
        (1, ['http://ex/s1', 'http://ex/s1'])
    """
    triples = list(triples)
    vocabulary = _vocabulary(triples)
    axioms, facts = [], []
    for triple in triples:
        if triple[0] in vocabulary or triple[1] in SCHEMA_PREDICATES:
            axioms.append(triple)
        else:
            facts.append(triple)
    return Split(tuple(axioms), tuple(facts))


def axiom_reason(triple: Triple) -> str | None:
    """Why a triple offered to the knowledge graph is an axiom (``None``: it is a fact):
    a schema predicate, or a type that makes its subject a class or property."""
    s, p, o = triple
    if p in SCHEMA_PREDICATES:
        return f"<{p}> states an axiom"
    if p == RDF_TYPE and o in VOCABULARY_TYPES:
        return f"<{s}> a <{o}> declares vocabulary"
    if p in _LIST and s.startswith("_:o."):
        return "it is part of an axiom's list"
    return None
