"""Materialise an event under an :class:`~semps.ontology.expansion.Expansion` (forward
chaining with a worklist until nothing new follows).

Transitive properties are closed by per-property reachability, kept closed as edges arrive
(an edge ``s -> o`` joins every node reaching ``s`` to every node ``o`` reaches, skipping
those that already reach ``o``): the work is near-linear in the triples it produces, where
chaining ``prp-trp`` pair by pair is cubic in a chain's length. The closure counts what it
holds and what it has queued, and stops with :class:`~semps.errors.EventLimitExceeded` as
soon as that passes ``max_closure_triples``, before doing the rest of the work.

Most events need none of that machinery: when no rule that looks at *other* triples of the
event (intersections, someValuesFrom, allValuesFrom, transitivity, sameAs, schema triples,
hasValue on an event's node) applies to any triple or to anything it implies, the closure is
the union of each triple's own closure. That closure depends only on the triple's predicate
(and class, for a type triple), so it is computed once per ontology snapshot, by the same
forward chaining on a triple of placeholder nodes, kept as a :class:`_Template`, and stamped
out with the event's nodes (about ten times cheaper per inferred triple). One triple that
needs the event falls the whole event back to the worklist.
"""

from __future__ import annotations

import sys
import weakref
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from semps._types import Term, Triple
from semps.errors import EventLimitExceeded, limit_exceeded
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

    def process(self, triple: Triple) -> None:
        """Apply the rules to ``triple`` (already in ``out``), then to all that follows."""
        todo = self.todo
        out = self.out
        while True:
            if self.same is not None and triple[1] != SAME_AS:  # (pairs: added by the merge)
                self._replace_equals(triple)
            s, p, o = triple
            if p == RDF_TYPE and type(o) is str:
                self._on_type(s, o)
            else:
                self._on_property(s, p, o)
            while todo:
                triple = todo.pop()
                if triple not in out:
                    break
            else:
                return
            out[triple] = None
            if len(out) + self.queued_pairs > self.limit:
                raise too_many(self.limit)

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
        if cls == OWL + "Class":  # (owl:Nothing below every class: left out, see docs/ontology.md)
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
    said = f"the event closes to more than the limit of {limit} triples under the ontology"
    name = "max_closure_triples, or max_closure_ratio times the event's triples when larger"
    return limit_exceeded(EventLimitExceeded, said, name)


def close(
    rules: Expansion, triples: Iterable[Triple], *, limits: Limits = DEFAULT_LIMITS
) -> list[Triple]:
    """``triples`` closed under ``rules`` (the ontology's): the originals first (in order,
    once each), then what follows.

    Raises:
        EventLimitExceeded: the closure passes ``limits.closure_limit(len(triples))``
            (found as soon as it does: the rest is not computed).

    Example:
        >>> close(Expansion(), [("_:a", "http://ex/p", "_:b")] * 2)
        [('_:a', 'http://ex/p', '_:b')]
    """
    if rules.empty:  # nothing is inferred: the event's size bounds the work
        return list(dict.fromkeys(triples))
    out = dict.fromkeys(triples)  # the closure's own set: the originals, first, once each
    originals = triples if isinstance(triples, tuple | list) else list(out)
    limit = limits.closure_limit(len(out))
    if len(out) > limit:
        raise too_many(limit)
    local = _templates(rules)
    types, by_node, by_literal = local.types, local.by_node, local.by_literal
    for triple in originals:
        s, p, o = triple
        if p == RDF_TYPE and type(o) is str:
            template = types.get(o) or local.of(triple)
        else:
            template = (by_literal if type(o) is Literal else by_node).get(p) or local.of(triple)
        if template.size:
            if template is _NEEDS_EVENT:  # a rule needs the rest of the event: the worklist
                return _close_with_event(rules, dict.fromkeys(originals), limit)
            template.stamp(out, s, o)
            if len(out) > limit:
                raise too_many(limit)
    return list(out)


def _close_with_event(rules: Expansion, out: dict[Triple, None], limit: int) -> list[Triple]:
    """The worklist closure of the triples in ``out`` (which it grows)."""
    state = _Closure(rules, limit)
    state.out = out
    for original in list(out):
        state.process(original)
    return list(out)


#: Placeholder nodes of the one-triple closures (no parser makes an IRI with a NUL in it).
_S, _O = "\x00s", "\x00o"
_O_LITERAL = Literal("\x00o")


@dataclass(frozen=True, slots=True)
class _Template:
    """What one triple implies on its own, by where its subject (S) and object (O) go."""

    s_const: tuple[tuple[str, Term], ...] = ()  # (S, p, constant)
    o_const: tuple[tuple[str, Term], ...] = ()  # (O, p, constant); O a node
    s_o: tuple[str, ...] = ()  # (S, p, O)
    o_s: tuple[str, ...] = ()  # (O, p, S); O a node
    rest: tuple[Triple, ...] = ()  # anything else, placeholders substituted
    size: int = 0  # triples implied (0: nothing to stamp)

    def stamp(self, out: dict[Triple, None], s: str, o: Term) -> None:
        """Add this template's triples for subject ``s`` and object ``o`` to ``out``."""
        for p, c in self.s_const:
            out[(s, p, c)] = None
        for p in self.s_o:
            out[(s, p, o)] = None
        if self.o_const or self.o_s:
            assert type(o) is str
            for p, c in self.o_const:
                out[(o, p, c)] = None
            for p in self.o_s:
                out[(o, p, s)] = None
        for a, p, b in self.rest:
            subject = s if a == _S else o if a == _O else a
            assert type(subject) is str
            out[(subject, p, s if b == _S else o if b in (_O, _O_LITERAL) else b)] = None


_NOTHING = _Template()
#: The template of a triple whose closure needs the rest of the event (never stamped).
_NEEDS_EVENT = _Template(size=-1)
#: Keys of the template caches at most (past it, what the ontology does not name is not kept).
_MAX_CACHED = 50_000


class _Templates:
    """The one-triple closures of an ontology snapshot, made on first use.

    Only the classes and predicates the ontology's tables name are kept (any other implies
    nothing), so the cache is bounded by the ontology's size whatever events arrive.
    """

    def __init__(self, rules: Expansion) -> None:
        self.rules = rules
        self.types: dict[str, _Template] = {}
        #: By predicate, with a node object and with a literal one (no key tuple a triple).
        self.by_node: dict[str, _Template] = {}
        self.by_literal: dict[str, _Template] = {}
        self.classes = (
            set(rules.classes)
            | set(rules.svf_by_filler)
            | set(rules.intersections)
            | set(rules.class_values)
            | set(rules.avf_by_class)
            | _DECLARATIONS
        )
        self.has_value = {p for p, _ in rules.has_value}
        self.watched = set(rules.transitive) | set(rules.svf) | set(rules.avf)
        self.watched |= _SCHEMA_TRANSITIVE | _SPECIAL
        self.predicates = (
            set(rules.properties)
            | set(rules.domains)
            | set(rules.ranges)
            | self.watched
            | self.has_value
        )
        self.busy = {c for c, v in rules.svf_by_filler.items() if v}
        self.busy |= {c for c, v in rules.intersections.items() if v}
        self.busy |= {c for c, v in rules.avf_by_class.items() if v}
        self.busy |= _DECLARATIONS

    def of(self, triple: Triple) -> _Template:
        """The template of ``triple`` (``_NEEDS_EVENT`` when its closure needs the rest of
        the event), made and kept on first use."""
        s, p, o = triple
        if p == RDF_TYPE and type(o) is str:
            made = self._make((_S, p, o)) if o in self.classes else _NOTHING
            if made is not _NOTHING or len(self.types) < _MAX_CACHED:
                self.types[o] = made
            return made
        literal = type(o) is Literal
        if p in self.predicates:
            made = self._make((_S, p, _O_LITERAL if literal else _O))
        else:
            made = _NOTHING
        cache = self.by_literal if literal else self.by_node
        if made is not _NOTHING or len(cache) < _MAX_CACHED:
            cache[p] = made
        return made

    def _make(self, triple: Triple) -> _Template:
        state = _Closure(self.rules, sys.maxsize)
        state.out[triple] = None
        state.process(triple)
        implied = list(state.out)[1:]
        if not all(self._local(t) for t in (triple, *implied)):
            return _NEEDS_EVENT
        s_const, o_const, s_o, o_s, rest = [], [], [], [], []
        for a, p, b in implied:
            b_node = b in (_O, _O_LITERAL)
            if a == _S and b_node:
                s_o.append(p)
            elif a == _O and b == _S:
                o_s.append(p)
            elif a == _S and b != _S:
                s_const.append((p, b))
            elif a == _O and not b_node and b != _S:
                o_const.append((p, b))
            else:
                rest.append((a, p, b))
        return _Template(
            tuple(s_const), tuple(o_const), tuple(s_o), tuple(o_s), tuple(rest), len(implied)
        )

    def _local(self, triple: Triple) -> bool:
        """Whether the rules ``triple`` triggers look at nothing but ``triple`` itself."""
        _, p, o = triple
        if p == RDF_TYPE and type(o) is str:
            return o not in self.busy
        if p in self.watched:
            return False
        return p not in self.has_value or o not in (_S, _O, _O_LITERAL)


_CACHE: weakref.WeakKeyDictionary[Expansion, _Templates] = weakref.WeakKeyDictionary()


def _templates(rules: Expansion) -> _Templates:
    found = _CACHE.get(rules)
    if found is None:
        found = _CACHE[rules] = _Templates(rules)
    return found
