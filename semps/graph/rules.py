"""The ontology's rule tables over term ids: what the graph's reasoners read.

:class:`~semps.ontology.expansion.Expansion` states the OWL 2 RL rules semps supports over
IRIs (its docstring lists them); :class:`IdRules` holds the same tables with every IRI (and
``owl:hasValue`` value) interned in the graph's :class:`~semps.graph.terms.TermTable`, split
by direction, plus the inverse tables the deletion reasoner's one-step re-derivation reads
(which triple could have produced this one).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from semps.graph.terms import TermTable
from semps.ontology.expansion import Expansion
from semps.terms import RDF_TYPE

#: A filler of ``owl:someValuesFrom owl:Thing``: any object will do.
ANY = -1


@dataclass(frozen=True, eq=False)
class IdRules:
    """An :class:`Expansion`'s tables over ids (see the module docstring).

    Attributes:
        type: the id of ``rdf:type``.
        props: p -> (q, inverted) pairs a ``p`` triple implies, besides itself (prp-spo1,
            prp-eqp, prp-inv, prp-symp).
        implied_by: q -> (p, inverted) pairs whose triples imply a ``q`` triple.
        domains / ranges: p -> classes (prp-dom, prp-rng).
        domain_of / range_of: class -> the properties with it as domain / range.
        classes: c -> its ancestors and equivalents, besides itself (cax-sco, cax-eqc).
        below: c -> the classes it is an ancestor or equivalent of, besides itself.
        has_value: (p, v) -> restrictions (cls-hv2, and cls-hv1 read backwards).
        class_values: restriction -> (p, v) pairs (cls-hv1).
        inter_of: c -> the intersections it is a member of; members: intersection ->
            its members (cls-int1).
        svf: p -> (restriction, filler or :data:`ANY`); svf_by_filler: filler ->
            (restriction, p); svf_of: restriction -> (p, filler) (cls-svf1/2).
        avf: p -> (restriction, class); avf_by_class: restriction -> (p, class);
            avf_to: class -> (restriction, p) (cls-avf).
        transitive: transitive properties (prp-trp).
    """

    type: int
    props: dict[int, tuple[tuple[int, bool], ...]] = field(default_factory=dict)
    implied_by: dict[int, tuple[tuple[int, bool], ...]] = field(default_factory=dict)
    domains: dict[int, tuple[int, ...]] = field(default_factory=dict)
    ranges: dict[int, tuple[int, ...]] = field(default_factory=dict)
    domain_of: dict[int, tuple[int, ...]] = field(default_factory=dict)
    range_of: dict[int, tuple[int, ...]] = field(default_factory=dict)
    classes: dict[int, tuple[int, ...]] = field(default_factory=dict)
    below: dict[int, tuple[int, ...]] = field(default_factory=dict)
    has_value: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)
    class_values: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    inter_of: dict[int, tuple[int, ...]] = field(default_factory=dict)
    members: dict[int, frozenset[int]] = field(default_factory=dict)
    svf: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    svf_by_filler: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    svf_of: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    avf: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    avf_by_class: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    avf_to: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    transitive: frozenset[int] = frozenset()

    @property
    def empty(self) -> bool:
        """True when no rule can fire (no ontology)."""
        return not (
            self.props or self.domains or self.ranges or self.classes or self.has_value
        ) and not (self.class_values or self.inter_of or self.svf or self.avf or self.transitive)


def _inverse(table: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    out: defaultdict[int, list[int]] = defaultdict(list)
    for key, values in table.items():
        for v in values:
            out[v].append(key)
    return {k: tuple(v) for k, v in out.items()}


def id_rules(expansion: Expansion, terms: TermTable) -> IdRules:
    """Intern the tables of ``expansion`` into ``terms`` (which grows) and index them.

    Example:
        >>> from semps.ontology.compile import compile_axioms, SUB_CLASS
        >>> t = TermTable()
        >>> r = id_rules(compile_axioms([("http://ex/A", SUB_CLASS, "http://ex/B")]), t)
        >>> [t.term(c) for c in r.classes[t.intern("http://ex/A")]]
        ['http://ex/B']
    """
    i = terms.intern
    props: dict[int, tuple[tuple[int, bool], ...]] = {}
    for prop, implied in expansion.properties.items():
        rest = tuple((i(q), inv) for q, inv in implied if (q, inv) != (prop, False))
        if rest:
            props[i(prop)] = rest
    implied_by: defaultdict[int, list[tuple[int, bool]]] = defaultdict(list)
    for p_id, implied_ids in props.items():
        for q_id, inv in implied_ids:
            implied_by[q_id].append((p_id, inv))
    domains = {i(p): tuple(i(c) for c in cs) for p, cs in expansion.domains.items()}
    ranges = {i(p): tuple(i(c) for c in cs) for p, cs in expansion.ranges.items()}
    classes: dict[int, tuple[int, ...]] = {}
    for c, ancestors in expansion.classes.items():
        rest_c = tuple(i(a) for a in sorted(ancestors) if a != c)
        if rest_c:
            classes[i(c)] = rest_c
    has_value = {
        (i(p), i(v)): tuple(i(r) for r in rs) for (p, v), rs in expansion.has_value.items()
    }
    class_values = {
        i(r): tuple((i(p), i(v)) for p, v in pvs) for r, pvs in expansion.class_values.items()
    }
    inter_of = {i(c): tuple(i(x) for x in xs) for c, xs in expansion.intersections.items()}
    members = {i(x): frozenset(i(m) for m in ms) for x, ms in expansion.members.items()}
    svf = {
        i(p): tuple((i(r), ANY if f is None else i(f)) for r, f in pairs)
        for p, pairs in expansion.svf.items()
    }
    svf_of: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    for p_id, svf_pairs in svf.items():
        for r_id, f_id in svf_pairs:
            svf_of[r_id].append((p_id, f_id))
    svf_by_filler = {
        i(f): tuple((i(r), i(p)) for r, p in pairs) for f, pairs in expansion.svf_by_filler.items()
    }
    avf = {i(p): tuple((i(r), i(c)) for r, c in pairs) for p, pairs in expansion.avf.items()}
    avf_by_class = {
        i(r): tuple((i(p), i(c)) for p, c in pairs) for r, pairs in expansion.avf_by_class.items()
    }
    avf_to: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    for r_id, avf_pairs in avf_by_class.items():
        for p_id, c_id in avf_pairs:
            avf_to[c_id].append((r_id, p_id))
    return IdRules(
        type=i(RDF_TYPE),
        props=props,
        implied_by={k: tuple(v) for k, v in implied_by.items()},
        domains=domains,
        ranges=ranges,
        domain_of=_inverse(domains),
        range_of=_inverse(ranges),
        classes=classes,
        below=_inverse(classes),
        has_value=has_value,
        class_values=class_values,
        inter_of=inter_of,
        members=members,
        svf=svf,
        svf_by_filler=svf_by_filler,
        svf_of={k: tuple(v) for k, v in svf_of.items()},
        avf=avf,
        avf_by_class=avf_by_class,
        avf_to={k: tuple(v) for k, v in avf_to.items()},
        transitive=frozenset(i(p) for p in expansion.transitive),
    )
