"""Compile an ontology's axiom triples into :class:`~semps.ontology.expansion.Expansion`
tables. One compiler serves both sources: a file read directly, and the owlready2 store.

The hierarchies are closed once per component (:mod:`semps.ontology.hierarchy`), in time
linear in the hierarchy plus what the tables hold, and the whole compilation runs under an
:class:`~semps.ontology.budget.OntologyBudget` (depth checked first, rule entries counted as
they are made, the clock read as it goes): an ontology over a limit is refused early.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Set
from typing import Generic, TypeVar

from semps._types import Term, Triple
from semps.ontology.budget import UNBOUNDED, Meter, OntologyBudget
from semps.ontology.expansion import Expansion
from semps.ontology.hierarchy import depth
from semps.ontology.reach import Reach
from semps.terms import OWL, RDF, RDF_TYPE, RDFS

N = TypeVar("N", bound=Hashable)

SUB_CLASS = RDFS + "subClassOf"
SUB_PROPERTY = RDFS + "subPropertyOf"
EQ_CLASS = OWL + "equivalentClass"
EQ_PROPERTY = OWL + "equivalentProperty"
INVERSE = OWL + "inverseOf"
DOMAIN = RDFS + "domain"
RANGE = RDFS + "range"
SYMMETRIC = OWL + "SymmetricProperty"
TRANSITIVE = OWL + "TransitiveProperty"
THING = OWL + "Thing"

#: Classes that describe the vocabulary itself; never entered as ancestors of a class.
META_CLASSES = frozenset(
    {
        OWL + "Class",
        RDFS + "Class",
        RDF + "Property",
        OWL + "ObjectProperty",
        OWL + "DatatypeProperty",
        OWL + "AnnotationProperty",
        OWL + "Restriction",
        OWL + "Ontology",
    }
)


class KeptReach(Generic[N]):
    """One closure a compilation leaves for the next (:class:`~semps.ontology.reach.Reach`):
    ``reach`` is ``None`` until a first compilation, and after one that failed half-way."""

    def __init__(self) -> None:
        self.reach: Reach[N] | None = None

    def bring(self, edges: Mapping[N, Set[N]], meter: Meter) -> Reach[N]:
        """The closure of ``edges``: the kept one brought to these edges (the edges added
        and removed since), else computed once; nothing is kept until it is in step again
        (a limit may stop it half-way)."""
        held, self.reach = self.reach, None
        if held is None:
            reach = Reach.of(edges, meter)
        else:
            held.meter = meter
            held.sync(edges)
            reach = held
        self.reach = reach
        return reach


class Kept:
    """What one compilation leaves for the next (an ontology store's edits): the closures
    of the class hierarchy and of the property states, each brought to the next version's
    edges by their difference rather than recomputed (:class:`KeptReach`)."""

    def __init__(self) -> None:
        self.classes: KeptReach[str] = KeptReach()
        self.properties: KeptReach[tuple[str, bool]] = KeptReach()


class _Axioms:
    """The axiom triples indexed for compilation."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.spo: defaultdict[str, defaultdict[str, list[Term]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.by_p: defaultdict[str, list[tuple[str, Term]]] = defaultdict(list)
        for s, p, o in triples:
            self.spo[s][p].append(o)
            self.by_p[p].append((s, o))

    def one(self, s: Term, p: str) -> Term | None:
        if not isinstance(s, str):
            return None
        by_p = self.spo.get(s)
        values = by_p.get(p) if by_p is not None else None
        return values[0] if values else None

    def rdf_list(self, head: Term | None) -> list[str]:
        items: list[str] = []
        while isinstance(head, str) and head != RDF + "nil" and len(items) < 10_000:
            first = self.one(head, RDF + "first")
            if isinstance(first, str):
                items.append(first)
            head = self.one(head, RDF + "rest")
        return items

    def subjects_of_type(self, cls: str) -> list[str]:
        return [s for s, o in self.by_p[RDF_TYPE] if o == cls]


def _property_table(
    ax: _Axioms,
    up: Mapping[str, set[str]],
    meter: Meter,
    budget: OntologyBudget,
    kept: Kept | None = None,
) -> dict[str, tuple[tuple[str, bool], ...]]:
    """Each property -> every (property, inverted) its triples imply, itself first: the
    reachable states of (property, direction) under subPropertyOf, equivalentProperty,
    inverseOf and symmetry (``(p, inv) -> (q, inv)`` for p below q, ``(p, inv) -> (q, not
    inv)`` for q an inverse of p, ``(p, inv) -> (p, not inv)`` for p symmetric). With
    ``kept``, the closure of these states is the kept one brought to their edges."""
    inverse: defaultdict[str, set[str]] = defaultdict(set)
    for s, o in ax.by_p[INVERSE]:
        if isinstance(o, str):
            inverse[s].add(o)
            inverse[o].add(s)
    levels, deepest = depth(up)
    budget.check_depth(levels, "property", deepest)
    symmetric = set(ax.subjects_of_type(SYMMETRIC))
    states: dict[tuple[str, bool], set[tuple[str, bool]]] = {}
    for prop in set(up) | set(inverse) | symmetric:
        for inv in (False, True):
            nxt = {(q, inv) for q in up.get(prop, ())}
            nxt |= {(q, not inv) for q in inverse.get(prop, ())}
            if prop in symmetric:
                nxt.add((prop, not inv))
            states[(prop, inv)] = nxt
            meter.work(len(nxt))
    kept_states = kept.properties if kept is not None else KeptReach[tuple[str, bool]]()
    reach = kept_states.bring(states, meter)
    table: dict[str, tuple[tuple[str, bool], ...]] = {}
    for prop, inv in states:
        if inv:
            continue
        seen = reach.above((prop, False))
        meter.rules(len(seen))
        rest = sorted(seen - {(prop, False)})
        table[prop] = ((prop, False), *rest)
    return table


def _class_edges(ax: _Axioms, meter: Meter) -> dict[str, set[str]]:
    up: defaultdict[str, set[str]] = defaultdict(set)
    for s, o in ax.by_p[SUB_CLASS]:
        if isinstance(o, str) and o not in META_CLASSES:
            up[s].add(o)
    for s, o in ax.by_p[EQ_CLASS]:
        if isinstance(o, str):
            up[s].add(o)
            up[o].add(s)
    for node, lst in ax.by_p[OWL + "intersectionOf"]:
        items = ax.rdf_list(lst)
        meter.work(len(items))
        up[node].update(items)
    for node, lst in ax.by_p[OWL + "unionOf"]:
        items = ax.rdf_list(lst)
        meter.work(len(items))
        for member in items:
            up[member].add(node)
    return up


#: Restriction kinds the schema rules relate, by the predicate naming their value.
_RESTRICTION_KINDS = {
    "svf": OWL + "someValuesFrom",
    "avf": OWL + "allValuesFrom",
    "hv": OWL + "hasValue",
}


def _schema_fixpoint(
    ax: _Axioms,
    class_up: dict[str, set[str]],
    property_up: Mapping[str, set[str]],
    meter: Meter,
    kept: Kept | None = None,
) -> dict[str, frozenset[str]]:
    """Class closure including the OWL 2 RL schema rules between restrictions (scm-svf1/2,
    scm-avf1/2, scm-hv): e.g. ``∃worksFor.ResearchGroup ⊑ ∃worksFor.Organization``.

    Each restriction looks up the restrictions it may imply by (property, value): those on
    its own property with a value above its own (svf1, avf1), and those with its own value on
    a property above its own (svf2, avf2, hv); until nothing new follows."""
    found: dict[str, list[tuple[str, str, Term]]] = {k: [] for k in _RESTRICTION_KINDS}
    index: dict[str, defaultdict[tuple[str, Term], list[str]]] = {
        k: defaultdict(list) for k in _RESTRICTION_KINDS
    }
    for node, prop in ax.by_p[OWL + "onProperty"]:
        for kind, predicate in _RESTRICTION_KINDS.items():
            value = ax.one(node, predicate)
            if isinstance(prop, str) and value is not None:
                found[kind].append((node, prop, value))
                index[kind][(prop, value)].append(node)
    supers = _schema_supers(property_up, meter)
    kept_classes = kept.classes if kept is not None else KeptReach[str]()
    reach = kept_classes.bring(class_up, meter)
    while True:
        classes = _table(reach, class_up, meter)
        added = False
        for kind, items in found.items():
            by_value = index[kind]
            for r1, p1, y1 in items:
                implied: list[tuple[str, str]] = []
                if kind != "hv" and isinstance(y1, str):  # same property, a wider value
                    for y2 in classes.get(y1, (y1,)):
                        implied += [(r1, r2) for r2 in by_value.get((p1, y2), ())]
                for p2 in supers.get(p1, [p1]):  # same value, a wider property
                    if p2 == p1 and kind != "hv" and isinstance(y1, str):
                        continue  # found above
                    for r2 in by_value.get((p2, y1), ()):
                        # scm-avf2 runs the other way: a wider property, a narrower class.
                        implied.append((r2, r1) if kind == "avf" and p2 != p1 else (r1, r2))
                meter.work(len(implied) + 1)
                for low, high in implied:
                    if low != high and high not in class_up.get(low, ()):
                        class_up.setdefault(low, set()).add(high)
                        reach.add(low, high)
                        added = True
        if not added:
            return classes


def _property_edges(ax: _Axioms) -> defaultdict[str, set[str]]:
    """Each property -> the properties its ``subPropertyOf`` and ``equivalentProperty``
    triples put right above it."""
    up: defaultdict[str, set[str]] = defaultdict(set)
    for s, o in ax.by_p[SUB_PROPERTY]:
        if isinstance(o, str):
            up[s].add(o)
    for s, o in ax.by_p[EQ_PROPERTY]:
        if isinstance(o, str):
            up[s].add(o)
            up[o].add(s)
    return up


def _schema_supers(up: Mapping[str, set[str]], meter: Meter) -> dict[str, list[str]]:
    """Each property with one above it -> itself and every property above it, for the schema
    rules (scm-svf2, scm-avf2, scm-hv): those its ``subPropertyOf`` and
    ``equivalentProperty`` triples reach (scm-spo, scm-eqp1/2), not those reached through
    ``inverseOf`` and symmetry. A symmetric ``p`` with an inverse ``q`` has q's extension, so
    ``p ⊑ q`` holds, but no OWL 2 RL rule derives it: the instance rules (prp-inv1/2,
    prp-symp) give each ``p`` triple its ``q`` triple, and ``∀p.C`` is not made a subclass
    of ``∀q.C`` (owlrl agrees: tests/ontology/test_ontology_closure.py)."""
    supers: dict[str, list[str]] = {}
    for prop in up:
        seen, todo = {prop}, [prop]
        while todo:
            for q in up.get(todo.pop(), ()):
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
        meter.work(len(seen))
        supers[prop] = [prop, *sorted(seen - {prop})]
    return supers


def _table(
    reach: Reach[str], class_up: dict[str, set[str]], meter: Meter
) -> dict[str, frozenset[str]]:
    """Each class with an edge up -> every class it reaches (itself included), the entries
    counted (``max_ontology_rules``)."""
    table = reach.table(class_up)
    meter.rules(sum(len(v) for v in table.values()))
    return table


def compile_axioms(
    triples: Iterable[Triple],
    *,
    version: int = 0,
    budget: OntologyBudget = UNBOUNDED,
    kept: Kept | None = None,
) -> Expansion:
    """Compile axiom triples (an ontology graph) into rule tables, within ``budget``.
    With ``kept`` (what the previous compilation left), the closures of the class hierarchy
    and of the property hierarchy are updated by the edges added and removed since, not
    recomputed.

    Raises:
        OntologyLimitExceeded: the ontology passes one of ``budget``'s limits (triples,
            hierarchy depth, rule entries, compile time); the work stops as soon as it does.

    Example:
        >>> ex = "http://ex/"
        >>> e = compile_axioms([(ex + "Grad", SUB_CLASS, ex + "Student"),
        ...                     (ex + "Student", SUB_CLASS, ex + "Person")])
        >>> sorted(e.expand_class(ex + "Grad"))
        ['http://ex/Grad', 'http://ex/Person', 'http://ex/Student']
    """
    triples = list(triples)
    budget.check_triples(len(triples))
    meter = Meter(budget)
    ax = _Axioms(triples)
    meter.work(len(triples))
    property_up = _property_edges(ax)
    props = _property_table(ax, property_up, meter, budget, kept)
    class_up = _class_edges(ax, meter)
    levels, deepest = depth(class_up)
    budget.check_depth(levels, "class", deepest)
    classes = _schema_fixpoint(ax, class_up, property_up, meter, kept)

    domains = _by_property(ax.by_p[DOMAIN])
    ranges = _by_property(ax.by_p[RANGE])
    restrictions = _restrictions(ax)
    meter.rules(sum(len(v) for v in domains.values()) + sum(len(v) for v in ranges.values()))
    meter.tick()
    return Expansion(
        version=version,
        properties=props,
        classes=classes,
        domains=domains,
        ranges=ranges,
        transitive=frozenset(ax.subjects_of_type(TRANSITIVE)),
        schema=bool(triples),
        **restrictions,  # type: ignore[arg-type]
    )


def _by_property(pairs: list[tuple[str, Term]]) -> dict[str, frozenset[str]]:
    out: defaultdict[str, set[str]] = defaultdict(set)
    for prop, cls in pairs:
        if isinstance(cls, str):
            out[prop].add(cls)
    return {p: frozenset(c) for p, c in out.items()}


def _restrictions(ax: _Axioms) -> dict[str, object]:
    svf: defaultdict[str, list[tuple[str, str | None]]] = defaultdict(list)
    svf_by_filler: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    has_value: defaultdict[tuple[str, Term], list[str]] = defaultdict(list)
    class_values: defaultdict[str, list[tuple[str, Term]]] = defaultdict(list)
    avf: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    avf_by_class: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for node, prop in ax.by_p[OWL + "onProperty"]:
        if not isinstance(prop, str):
            continue
        filler = ax.one(node, OWL + "someValuesFrom")
        if isinstance(filler, str):
            svf[prop].append((node, None if filler == THING else filler))
            if filler != THING:
                svf_by_filler[filler].append((node, prop))
        value = ax.one(node, OWL + "hasValue")
        if value is not None:
            has_value[(prop, value)].append(node)
            class_values[node].append((prop, value))
        target = ax.one(node, OWL + "allValuesFrom")
        if isinstance(target, str):
            avf[prop].append((node, target))
            avf_by_class[node].append((prop, target))
    intersections: defaultdict[str, list[str]] = defaultdict(list)
    members: dict[str, frozenset[str]] = {}
    for node, lst in ax.by_p[OWL + "intersectionOf"]:
        items = ax.rdf_list(lst)
        if items:
            members[node] = frozenset(items)
            for item in items:
                intersections[item].append(node)
    return {
        "svf": {k: tuple(v) for k, v in svf.items()},
        "svf_by_filler": {k: tuple(v) for k, v in svf_by_filler.items()},
        "has_value": {k: tuple(v) for k, v in has_value.items()},
        "class_values": {k: tuple(v) for k, v in class_values.items()},
        "avf": {k: tuple(v) for k, v in avf.items()},
        "avf_by_class": {k: tuple(v) for k, v in avf_by_class.items()},
        "intersections": {k: tuple(v) for k, v in intersections.items()},
        "members": members,
    }
