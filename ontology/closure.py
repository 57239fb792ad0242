"""Materialise an event under an :class:`~semps.ontology.expansion.Expansion` (forward
chaining with a worklist until nothing new follows).

Transitive properties are closed by per-property reachability, kept closed as edges arrive
(an edge ``s -> o`` joins every node reaching ``s`` to every node ``o`` reaches, skipping
those that already reach ``o``): the work is near-linear in the triples it produces, where
chaining ``prp-trp`` pair by pair is cubic in a chain's length. The closure counts what it
holds and what it has queued, and stops with :class:`~semps.errors.EventLimitExceeded` as
soon as that passes ``max_closure_triples``, before doing the rest of the work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from semps._types import Term, Triple
from semps.errors import EventLimitExceeded
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.compile import EQ_CLASS, EQ_PROPERTY, SUB_CLASS, SUB_PROPERTY, THING
from semps.ontology.expansion import Expansion
from semps.terms import OWL, RDF, RDF_TYPE, RDFS, Literal

SAME_AS = OWL + "sameAs"
#: subClassOf and subPropertyOf are closed like transitive properties (scm-sco, scm-spo).
_SCHEMA_TRANSITIVE = frozenset({SUB_CLASS, SUB_PROPERTY})
_SCHEMA = frozenset({SUB_CLASS, SUB_PROPERTY, EQ_CLASS, EQ_PROPERTY})
_OWL_PROPERTIES = frozenset({OWL + "ObjectProperty", OWL + "DatatypeProperty"})
_DECLARATIONS = _OWL_PROPERTIES | {OWL + "Class", RDFS + "Class", RDF + "Property"}
_SPECIAL = _SCHEMA | {SAME_AS}


class _Closure:
    """The state of one closure run: the triples so far and the indexes the rules need."""

    def __init__(self, rules: Expansion, limit: int) -> None:
        self.rules = rules
        self.limit = limit
        self.out: dict[Triple, None] = {}
        self.todo: list[Triple] = []
        self.types: defaultdict[str, set[str]] = defaultdict(set)
        self.edges: defaultdict[str, defaultdict[str, set[Term]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.back: defaultdict[str, defaultdict[Term, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.restricted = set(rules.svf) | set(rules.avf)
        self.watched = set(rules.transitive) | self.restricted | _SCHEMA_TRANSITIVE
        # Triples added by expanding a property or class: the tables are transitively
        # closed, so their own expansions were added with them and are skipped.
        self.expanded: set[Triple] = set()
        # Transitive properties: node -> what it reaches / what reaches it, kept closed.
        # A pair enters here when its triple is queued, so the queued pairs are counted.
        self.reach: defaultdict[str, defaultdict[str, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.reached: defaultdict[str, defaultdict[str, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.queued_pairs = 0
        # owl:sameAs (set up by the event's first sameAs triple): node -> its class of equal
        # nodes, and every triple by the nodes it names (for eq-rep-s/p/o).
        self.same: dict[str, set[str]] | None = None
        self.by_node: defaultdict[str, list[Triple]] = defaultdict(list)

    def add(self, triple: Triple) -> None:
        if triple not in self.out:
            self.todo.append(triple)

    def run(self) -> list[Triple]:
        todo = self.todo
        out = self.out
        while todo:
            triple = todo.pop()
            if triple in out:
                continue
            out[triple] = None
            if len(out) + self.queued_pairs > self.limit:
                raise too_many(self.limit)
            if self.same is not None and triple[1] != SAME_AS:  # (pairs: added by the merge)
                self._replace_equals(triple)
            s, p, o = triple
            if p == RDF_TYPE and type(o) is str:
                self._on_type(s, o)
            else:
                self._on_property(s, p, o)
        return list(out)

    def _on_type(self, s: str, cls: str) -> None:
        rules = self.rules
        self.types[s].add(cls)
        if cls in _DECLARATIONS:
            self._on_declaration(s, cls)
        if (s, RDF_TYPE, cls) not in self.expanded:
            expanded = self.expanded
            for sup in rules.classes.get(cls, ()):
                implied = (s, RDF_TYPE, sup)
                expanded.add(implied)
                self.add(implied)
        for restriction, prop in rules.svf_by_filler.get(cls, ()):
            for x in self.back[prop].get(s, ()):
                self.add((x, RDF_TYPE, restriction))
        for inter in rules.intersections.get(cls, ()):
            if rules.members[inter] <= self.types[s]:
                self.add((s, RDF_TYPE, inter))
        for prop, value in rules.class_values.get(cls, ()):
            self.add((s, prop, value))
        for prop, target in rules.avf_by_class.get(cls, ()):
            for y in self.edges[prop].get(s, ()):
                if type(y) is str:
                    self.add((y, RDF_TYPE, target))

    def _on_declaration(self, s: str, cls: str) -> None:
        """scm-cls, scm-op, scm-dp (and RDFS rdfs6/rdfs10): a declared class or property
        is its own subclass / subproperty and equivalent."""
        if cls == OWL + "Class":  # (owl:Nothing below every class: left out, see README)
            for triple in ((s, SUB_CLASS, s), (s, EQ_CLASS, s), (s, SUB_CLASS, THING)):
                self.add(triple)
        elif cls == RDFS + "Class":
            self.add((s, SUB_CLASS, s))
        elif cls in _OWL_PROPERTIES:
            self.add((s, SUB_PROPERTY, s))
            self.add((s, EQ_PROPERTY, s))
        elif cls == RDF + "Property":
            self.add((s, SUB_PROPERTY, s))

    def _on_schema(self, s: str, p: str, o: str) -> None:
        """The event's own schema triples under OWL 2 RL's schema rules: scm-eqc1/2,
        scm-eqp1/2, the ends of a subClassOf/subPropertyOf triple are classes/properties
        (RDFS rdfs10/rdfs6: their own sub-), and what the ontology says above ``o``
        (scm-sco/scm-spo across the event and the ontology; within the event they are
        closed as transitive properties)."""
        add = self.add
        if p == SUB_CLASS:
            add((s, SUB_CLASS, s))
            add((o, SUB_CLASS, o))
            for ancestor in self.rules.classes.get(o, ()):
                add((s, SUB_CLASS, ancestor))
            if (o, SUB_CLASS, s) in self.out:  # scm-eqc2
                add((s, EQ_CLASS, o))
                add((o, EQ_CLASS, s))
        elif p == SUB_PROPERTY:
            add((s, SUB_PROPERTY, s))
            add((o, SUB_PROPERTY, o))
            for prop, inverted in self.rules.properties.get(o, ()):
                if not inverted:
                    add((s, SUB_PROPERTY, prop))
            if (o, SUB_PROPERTY, s) in self.out:  # scm-eqp2
                add((s, EQ_PROPERTY, o))
                add((o, EQ_PROPERTY, s))
        elif p == EQ_CLASS:  # scm-eqc1
            add((s, SUB_CLASS, o))
            add((o, SUB_CLASS, s))
        else:  # scm-eqp1
            add((s, SUB_PROPERTY, o))
            add((o, SUB_PROPERTY, s))

    def _on_property(self, s: str, p: str, o: Term) -> None:
        rules = self.rules
        literal = type(o) is Literal
        if p in _SPECIAL and type(o) is str:  # one lookup for the common case
            if p == SAME_AS:
                if s != o:
                    self._on_same_as(s, o)
            else:
                self._on_schema(s, p, o)
        if (s, p, o) not in self.expanded:
            expanded = self.expanded
            for q, inverted in rules.properties.get(p, ()):
                if not inverted:
                    implied = (s, q, o)
                elif not literal:
                    assert isinstance(o, str)
                    implied = (o, q, s)
                else:
                    continue
                expanded.add(implied)
                self.add(implied)
        for cls in rules.domains.get(p, ()):
            self.add((s, RDF_TYPE, cls))
        if not literal:
            assert isinstance(o, str)
            for cls in rules.ranges.get(p, ()):
                self.add((o, RDF_TYPE, cls))
        for restriction in rules.has_value.get((p, o), ()):
            self.add((s, RDF_TYPE, restriction))
        if p in self.watched:
            self._on_watched(s, p, o)

    def _on_same_as(self, a: str, b: str) -> None:
        """eq-sym, eq-trans (and eq-ref for the nodes involved): ``a`` and ``b`` join one class
        of equal nodes; every triple naming one names each of them (eq-rep-s/p/o)."""
        if self.same is None:
            self.same = {}
            for known in self.out:
                self._index(known)
        same = self.same
        if b in same.get(a, ()):
            return  # already equal (each pair's triple comes back through here)
        merged = same.get(a, {a}) | same.get(b, {b})
        if len(self.out) + len(merged) ** 2 > self.limit:
            raise too_many(self.limit)
        for node in merged:
            same[node] = merged
        for node in merged:
            for other in merged:
                self.add((node, SAME_AS, other))
            for triple in list(self.by_node.get(node, ())):
                self._substitute(triple, node, merged)

    def _index(self, triple: Triple) -> None:
        if triple[1] == SAME_AS:
            return
        for node in {triple[0], triple[1], triple[2]}:
            if type(node) is str:
                self.by_node[node].append(triple)

    def _replace_equals(self, triple: Triple) -> None:
        """A new triple, once a sameAs is known: indexed, and copied to each equal node."""
        self._index(triple)
        same = self.same
        assert same is not None
        for node in {triple[0], triple[1], triple[2]}:
            if isinstance(node, str) and not isinstance(node, Literal):
                equals = same.get(node)
                if equals is not None:
                    self._substitute(triple, node, equals)

    def _substitute(self, triple: Triple, node: str, equals: set[str]) -> None:
        """``triple`` with ``node`` replaced by each equal node, one position at a time
        (eq-rep-s, eq-rep-p, eq-rep-o; the worklist combines them)."""
        for position in range(3):
            if triple[position] != node:
                continue
            for other in equals:
                if other != node:
                    varied = list(triple)
                    varied[position] = other
                    self.add(tuple(varied))  # type: ignore[arg-type]

    def _on_watched(self, s: str, p: str, o: Term) -> None:
        rules = self.rules
        if p in self.restricted:  # the restriction rules look edges up; transitivity not
            self.edges[p][s].add(o)
            self.back[p][o].add(s)
        for restriction, filler in rules.svf.get(p, ()):
            if filler is None or (type(o) is str and filler in self.types.get(o, ())):
                self.add((s, RDF_TYPE, restriction))
        for restriction, target in rules.avf.get(p, ()):
            if type(o) is str and restriction in self.types.get(s, ()):
                self.add((o, RDF_TYPE, target))
        if (p in rules.transitive or p in _SCHEMA_TRANSITIVE) and type(o) is str:
            self._on_transitive(s, p, o)

    def _on_transitive(self, s: str, p: str, o: str) -> None:
        reach, reached = self.reach[p], self.reached[p]
        if o in reach[s]:  # queued by an earlier edge, which added all that follows
            self.queued_pairs -= 1
            return
        targets = {o} | reach.get(o, set())
        for a in [s, *reached.get(s, ())]:
            known = reach[a]
            if o in known and a != s:
                continue  # a reached o already, so everything o reaches too
            new = targets - known
            if a == s:
                new.discard(o)  # this triple itself: already counted in the output
                known.add(o)
                reached[o].add(s)
            known |= new
            for b in new:
                reached[b].add(a)
                self.todo.append((a, p, b))
            self.queued_pairs += len(new)
            if len(self.out) + self.queued_pairs > self.limit:
                raise too_many(self.limit)


def too_many(limit: int) -> EventLimitExceeded:
    """The error for a closure past ``max_closure_triples``."""
    msg = (
        f"the event closes to more than the limit of {limit} triples under the ontology "
        "(max_closure_triples, or max_closure_ratio times the event's triples when larger)"
    )
    return EventLimitExceeded(msg)


def close(
    rules: Expansion, triples: Iterable[Triple], *, limits: Limits = DEFAULT_LIMITS
) -> list[Triple]:
    """``triples`` closed under ``rules``: the originals first (in order), then what follows.

    Raises:
        EventLimitExceeded: the closure passes ``limits.closure_limit(len(triples))``
            (found as soon as it does: the rest is not computed).
    """
    originals = list(dict.fromkeys(triples))
    limit = limits.closure_limit(len(originals))
    state = _Closure(rules, limit)
    state.todo.extend(reversed(originals))
    closed = state.run()
    seen = set(originals)
    return originals + [t for t in closed if t not in seen]
