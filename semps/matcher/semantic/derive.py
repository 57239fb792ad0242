"""How an inferred triple follows: one OWL 2 RL rule applied to triples of the closure,
with the ontology's axioms behind it (what ``semps explain`` shows under "inferred").

The closure itself comes from :func:`semps.ontology.closure.close` (and, with a knowledge
graph, :func:`semps.graph.delta.event_delta`), which keep no record of why: rebuilding one
derivation per triple afterwards costs nothing on the matching path. :class:`Deriver` looks
for a rule instance whose premises the closure holds, each premise asserted (by the event
or the graph) or derived in fewer steps (iterative deepening, so no derivation leans on
itself), under the same compiled tables the closure used
(:class:`~semps.ontology.expansion.Expansion`). The axioms are then found in the ontology's
own triples: the chain of ``subClassOf`` / ``equivalentClass`` (or ``subPropertyOf`` /
``equivalentProperty`` / ``inverseOf``) axioms from one term to the other.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from semps._types import Term, Triple
from semps.matcher.explanation import Derivation
from semps.ontology.compile import (
    DOMAIN,
    EQ_CLASS,
    EQ_PROPERTY,
    INVERSE,
    RANGE,
    SUB_CLASS,
    SUB_PROPERTY,
    SYMMETRIC,
    TRANSITIVE,
)
from semps.ontology.expansion import Expansion
from semps.terms import OWL, RDF, RDF_TYPE

K = TypeVar("K", bound=Hashable)

#: Rule applications one explanation may try at most (then: "not reconstructed").
WORK = 200_000
#: Derivation steps one chain may take at most.
DEPTH = 16
_INTERSECTION, _UNION = OWL + "intersectionOf", OWL + "unionOf"
_RESTRICTION = frozenset(
    OWL + name for name in ("onProperty", "hasValue", "someValuesFrom", "allValuesFrom")
)
Candidate = tuple[str, tuple[Triple, ...], Callable[[], tuple[Triple, ...]]]


def _given(*axioms: Triple) -> Callable[[], tuple[Triple, ...]]:
    """Axioms known already, as a candidate gives them."""
    return lambda: axioms


class Facts:
    """Closure triples indexed by subject, by object and by (subject, object)."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.all: set[Triple] = set()
        self.out: defaultdict[str, list[tuple[str, Term]]] = defaultdict(list)
        self.into: defaultdict[Term, list[tuple[str, str]]] = defaultdict(list)
        self.between: defaultdict[tuple[str, Term], list[str]] = defaultdict(list)
        self.by_p: defaultdict[str, list[Triple]] = defaultdict(list)
        for t in triples:
            if t in self.all:
                continue
            s, p, o = t
            self.all.add(t)
            self.out[s].append((p, o))
            self.into[o].append((s, p))
            self.between[(s, o)].append(p)
            self.by_p[p].append(t)

    def types(self, node: str) -> list[str]:
        """The classes of ``node``."""
        return [o for p, o in self.out.get(node, ()) if p == RDF_TYPE and type(o) is str]


class Axioms:
    """The ontology's axiom triples, as edges to search chains in."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.cls: defaultdict[str, list[tuple[str, Triple]]] = defaultdict(list)
        self.prop: defaultdict[str, list[tuple[str, bool, Triple]]] = defaultdict(list)
        #: A restriction's own triples (onProperty, hasValue, someValuesFrom, allValuesFrom).
        self.restrictions: defaultdict[str, list[Triple]] = defaultdict(list)
        triples = list(triples)
        first = {s: o for s, p, o in triples if p == RDF + "first"}
        rest = {s: o for s, p, o in triples if p == RDF + "rest"}
        for t in triples:
            s, p, o = t
            if p in (_INTERSECTION, _UNION) and type(o) is str:
                for member in _members(o, first, rest):
                    edge = (s, p, member)  # one member's axiom, shown as a triple
                    if p == _INTERSECTION:
                        self.cls[s].append((member, edge))
                    else:
                        self.cls[member].append((s, edge))
        for t in triples:
            s, p, o = t
            if p in _RESTRICTION:
                self.restrictions[s].append(t)
            if type(o) is not str:
                continue
            if p == SUB_CLASS:
                self.cls[s].append((o, t))
            elif p == EQ_CLASS:
                self.cls[s].append((o, t))
                self.cls[o].append((s, t))
            elif p == SUB_PROPERTY:
                self.prop[s].append((o, False, t))
            elif p == EQ_PROPERTY:
                self.prop[s].append((o, False, t))
                self.prop[o].append((s, False, t))
            elif p == INVERSE:
                self.prop[s].append((o, True, t))
                self.prop[o].append((s, True, t))
            elif p == RDF_TYPE and o == SYMMETRIC:
                self.prop[s].append((s, True, t))

    def class_chain(self, low: str, high: str) -> tuple[Triple, ...]:
        """The axioms leading from class ``low`` up to ``high`` (empty: none found)."""
        back: dict[str, tuple[str, Triple] | None] = {low: None}
        queue = deque([low])
        while queue:
            c = queue.popleft()
            if c == high:
                return _walk_back(back, high)
            for nxt, t in self.cls.get(c, ()):
                if nxt not in back:
                    back[nxt] = (c, t)
                    queue.append(nxt)
        return ()

    def property_chain(self, low: str, high: str, inverted: bool) -> tuple[Triple, ...]:
        """The axioms by which a ``low`` triple implies a ``high`` one (reversed if
        ``inverted``); empty: none found."""
        start, goal = (low, False), (high, inverted)
        back: dict[tuple[str, bool], tuple[tuple[str, bool], Triple] | None] = {start: None}
        queue = deque([start])
        while queue:
            state = queue.popleft()
            if state == goal:
                return _walk_back(back, state)
            prop, inv = state
            for nxt, flip, t in self.prop.get(prop, ()):
                key = (nxt, inv != flip)
                if key not in back:
                    back[key] = (state, t)
                    queue.append(key)
        return ()


def _members(head: str, first: dict[str, Term], rest: dict[str, Term]) -> list[str]:
    out: list[str] = []
    node: Term | None = head
    while type(node) is str and node in first and len(out) < 10_000:
        item = first[node]
        if type(item) is str:
            out.append(item)
        node = rest.get(node)
    return out


def _walk_back(back: dict[K, tuple[K, Triple] | None], end: K) -> tuple[Triple, ...]:
    """The triples of a breadth-first search's path to ``end``, from its start
    (``back``: each state reached -> the state it came from and the triple between)."""
    chain: list[Triple] = []
    step = back[end]
    while step is not None:
        chain.append(step[1])
        step = back[step[0]]
    return tuple(reversed(chain))


def _class_rule(chain: tuple[Triple, ...]) -> str:
    return "cax-eqc" if chain and all(t[1] == EQ_CLASS for t in chain) else "cax-sco"


def _property_rule(chain: tuple[Triple, ...]) -> str:
    kinds = {t[1] for t in chain}
    if INVERSE in kinds:
        return "prp-inv"
    if any(t[1] == RDF_TYPE for t in chain):
        return "prp-symp"
    if kinds == {EQ_PROPERTY}:
        return "prp-eqp"
    return "prp-spo1"


class Deriver:
    """Derivations of inferred triples over one closure (see the module docstring)."""

    def __init__(
        self,
        facts: Facts,
        asserted: Callable[[Triple], bool],
        rules: Expansion,
        axioms: Axioms,
    ) -> None:
        self.facts, self.asserted, self.rules, self.axioms = facts, asserted, rules, axioms
        self.found: dict[Triple, tuple[int, Derivation]] = {}
        self.failed: dict[Triple, int] = {}
        self.work = WORK

    def derivations(self, triples: Iterable[Triple], limit: int = 200) -> list[Derivation]:
        """A derivation for each inferred triple of ``triples`` and, recursively, of their
        inferred premises (at most ``limit``), in the order first needed."""
        out: dict[Triple, Derivation] = {}
        queue = deque(t for t in triples if not self.asserted(t))
        while queue and len(out) < limit:
            t = queue.popleft()
            if t in out:
                continue
            d = self.derive(t)
            if d is None:
                out[t] = Derivation(t, "not reconstructed", ())
                continue
            out[t] = d
            queue.extend(p for p in d.premises if not self.asserted(p) and p not in out)
        return list(out.values())

    def derive(self, t: Triple) -> Derivation | None:
        """One derivation of ``t`` (``None``: none found within the work bound)."""
        for depth in range(1, DEPTH + 1):
            found = self._derive(t, depth)
            if found is not None or self.work <= 0:
                return found
        return None

    def _holds(self, t: Triple, depth: int) -> bool:
        if t not in self.facts.all:
            return False
        return self.asserted(t) or self._derive(t, depth) is not None

    def _derive(self, t: Triple, depth: int) -> Derivation | None:
        known = self.found.get(t)
        if known is not None and known[0] <= depth:
            return known[1]
        if depth <= 0 or self.failed.get(t, 0) >= depth or self.work <= 0:
            return None
        for rule, premises, axioms in self._candidates(t):
            self.work -= 1
            if self.work <= 0:
                return None
            if all(p != t and self._holds(p, depth - 1) for p in premises):
                d = Derivation(t, rule, premises, axioms())
                self.found[t] = (depth, d)
                return d
        self.failed[t] = depth
        return None

    def _candidates(self, t: Triple) -> Iterator[Candidate]:
        s, p, o = t
        if p == RDF_TYPE and type(o) is str:
            yield from self._type_candidates(s, o)
        else:
            yield from self._property_candidates(s, p, o)

    def _type_candidates(self, s: str, c: str) -> Iterator[Candidate]:
        rules, facts, ax = self.rules, self.facts, self.axioms
        for d in facts.types(s):
            if d != c and c in rules.classes.get(d, ()):
                chain = ax.class_chain(d, c)
                yield _class_rule(chain), ((s, RDF_TYPE, d),), _given(*chain)
        for q, x in facts.out.get(s, ()):
            if c in rules.domains.get(q, ()):
                yield "prp-dom", ((s, q, x),), _given((q, DOMAIN, c))
            if c in rules.has_value.get((q, x), ()):
                yield "cls-hv2", ((s, q, x),), _given(*ax.restrictions.get(c, ()))
            for restriction, filler in rules.svf.get(q, ()):
                if restriction != c:
                    continue
                described = _given(*ax.restrictions.get(c, ()))
                if filler is None:
                    yield "cls-svf2", ((s, q, x),), described
                elif type(x) is str:
                    yield "cls-svf1", ((s, q, x), (x, RDF_TYPE, filler)), described
        for x, q in facts.into.get(s, ()):
            if c in rules.ranges.get(q, ()):
                yield "prp-rng", ((x, q, s),), _given((q, RANGE, c))
            for restriction, target in rules.avf.get(q, ()):
                if target == c:
                    premises = ((x, RDF_TYPE, restriction), (x, q, s))
                    yield "cls-avf", premises, _given(*ax.restrictions.get(restriction, ()))
        members = rules.members.get(c)
        if members:
            yield "cls-int1", tuple((s, RDF_TYPE, m) for m in sorted(members)), _given()

    def _property_candidates(self, s: str, p: str, o: Term) -> Iterator[Candidate]:
        rules, facts, ax = self.rules, self.facts, self.axioms
        for q in facts.between.get((s, o), ()):
            if q != p and (p, False) in rules.properties.get(q, ()):
                chain = ax.property_chain(q, p, False)
                yield _property_rule(chain), ((s, q, o),), _given(*chain)
        if type(o) is str:
            for q in facts.between.get((o, s), ()):
                if (p, True) in rules.properties.get(q, ()):
                    chain = ax.property_chain(q, p, True)
                    yield _property_rule(chain), ((o, q, s),), _given(*chain)
        for r in facts.types(s):
            if (p, o) in rules.class_values.get(r, ()):
                yield "cls-hv1", ((s, RDF_TYPE, r),), _given(*ax.restrictions.get(r, ()))
        if p in rules.transitive:
            for q, m in facts.out.get(s, ()):
                if q == p and m != o and type(m) is str and (m, p, o) in facts.all:
                    yield "prp-trp", ((s, p, m), (m, p, o)), _given((p, RDF_TYPE, TRANSITIVE))
