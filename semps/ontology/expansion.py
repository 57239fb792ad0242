"""Expansion: an ontology's derived rule tables at one version (immutable, picklable).

The tables are compiled from the ontology's axioms by :mod:`semps.ontology.compile`;
:func:`semps.ontology.closure.close` materialises an event under them. Supported OWL 2 RL rules:

- properties: ``prp-spo1`` (subPropertyOf), ``prp-eqp1/2`` (equivalentProperty), ``prp-inv1/2``
  (inverseOf), ``prp-symp`` (SymmetricProperty), ``prp-trp`` (TransitiveProperty),
  ``prp-dom`` / ``prp-rng`` (domain, range);
- classes: ``cax-sco`` (subClassOf), ``cax-eqc1/2`` (equivalentClass), ``cls-int1/2``
  (intersectionOf), ``cls-uni`` (unionOf), ``cls-svf1/2`` (someValuesFrom),
  ``cls-hv1/2`` (hasValue), ``cls-avf`` (allValuesFrom);
- schema triples in the event: ``scm-cls``, ``scm-sco``, ``scm-op``, ``scm-dp``,
  ``scm-spo``, ``scm-eqc1/2``, ``scm-eqp1/2`` (and RDFS ``rdfs6``/``rdfs10`` for the ends
  of subPropertyOf/subClassOf triples), so ``?c rdfs:subClassOf :d`` has its OWL 2 RL
  answers; an ontology's own schema triples are not copied into every event.

- ``owl:sameAs`` triples in the event: ``eq-sym``, ``eq-trans``, ``eq-rep-s/p/o`` (and
  ``eq-ref`` for the nodes of a sameAs), bounded by the closure limit.

Not supported (documented gaps): the rules that produce ``owl:sameAs`` (functional and
inverse-functional properties, keys, maxCardinality 1), property chains, ``owl:Nothing``
consistency checks, datatype rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from semps._types import Term
from semps.terms import RDF_TYPE, Literal

_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Expansion:
    """Rule tables derived from an ontology; ``Expansion()`` is the empty ontology.

    Attributes:
        version: increases with every edit of the ontology it came from.
        properties: property -> every (property, inverted) its triples imply, itself first.
        classes: class -> itself, its equivalents and all its ancestors.
        domains / ranges: property -> classes its subjects / objects belong to.
        transitive: the transitive properties.
        svf: property -> (restriction, filler class or ``None`` for owl:Thing) pairs.
        svf_by_filler: filler class -> (restriction, property) pairs.
        intersections: class -> the intersection classes it is a member of.
        members: intersection class -> its member classes.
        has_value: (property, value) -> restrictions; class -> (property, value) it implies.
        avf: property -> (restriction, class) pairs; avf_by_class: restriction -> (property,
            class) pairs.
        schema: True for an ontology (not ``Expansion()``): the event's own schema triples
            (subClassOf, subPropertyOf, equivalences, class and property declarations) are
            closed by OWL 2 RL's schema rules (scm-cls, scm-sco, scm-op, scm-dp, scm-spo,
            scm-eqc1/2, scm-eqp1/2), joined with what the ontology says above them.

    Example:
        >>> from semps.ontology.closure import close
        >>> from semps.ontology.compile import compile_axioms
        >>> ex = "http://ex/"
        >>> e = compile_axioms([(ex + "worksFor", RDFS_SUBPROP, ex + "memberOf")])
        >>> close(e, [(ex + "ann", ex + "worksFor", ex + "dept")])[1]
        ('http://ex/ann', 'http://ex/memberOf', 'http://ex/dept')
    """

    version: int = 0
    properties: dict[str, tuple[tuple[str, bool], ...]] = field(default_factory=dict)
    classes: dict[str, frozenset[str]] = field(default_factory=dict)
    domains: dict[str, frozenset[str]] = field(default_factory=dict)
    ranges: dict[str, frozenset[str]] = field(default_factory=dict)
    transitive: frozenset[str] = _EMPTY
    svf: dict[str, tuple[tuple[str, str | None], ...]] = field(default_factory=dict)
    svf_by_filler: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    intersections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    members: dict[str, frozenset[str]] = field(default_factory=dict)
    has_value: dict[tuple[str, Term], tuple[str, ...]] = field(default_factory=dict)
    class_values: dict[str, tuple[tuple[str, Term], ...]] = field(default_factory=dict)
    avf: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    avf_by_class: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    schema: bool = False

    @property
    def empty(self) -> bool:
        """True when no rule applies (closing is the identity): no ontology at all. Under
        any ontology, even one that only declares classes, an event's own schema triples
        are closed (``schema``)."""
        return not (
            self.properties or self.classes or self.domains or self.ranges or self.svf
        ) and not (
            self.has_value or self.avf or self.intersections or self.transitive or self.schema
        )

    def expand_property(self, prop: str) -> tuple[tuple[str, bool], ...]:
        """Every property a ``prop`` triple implies, with its direction (itself first)."""
        return self.properties.get(prop) or ((prop, False),)

    def expand_class(self, cls: str) -> frozenset[str]:
        """``cls``, its equivalent classes and all its ancestors."""
        return self.classes.get(cls) or frozenset((cls,))

    def __getstate__(self) -> dict[str, object]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)


RDFS_SUBPROP = "http://www.w3.org/2000/01/rdf-schema#subPropertyOf"
__all__ = ["RDF_TYPE", "Expansion", "Literal"]
