"""Materialise an event under an :class:`~semps.ontology.expansion.Expansion` (forward
chaining with a worklist until nothing new follows)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from semps._types import Term, Triple
from semps.ingest.terms import RDF_TYPE, Literal
from semps.ontology.expansion import Expansion


class _Closure:
    """The state of one closure run: the triples so far and the indexes the rules need."""

    def __init__(self, rules: Expansion) -> None:
        self.rules = rules
        self.out: dict[Triple, None] = {}
        self.todo: list[Triple] = []
        self.types: defaultdict[str, set[str]] = defaultdict(set)
        self.edges: defaultdict[str, defaultdict[str, set[Term]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.back: defaultdict[str, defaultdict[Term, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        self.watched = set(rules.transitive) | set(rules.svf) | set(rules.avf)
        # Triples added by expanding a property or class: the tables are transitively
        # closed, so their own expansions were added with them and are skipped.
        self.expanded: set[Triple] = set()

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
            s, p, o = triple
            if p == RDF_TYPE and type(o) is str:
                self._on_type(s, o)
            else:
                self._on_property(s, p, o)
        return list(out)

    def _on_type(self, s: str, cls: str) -> None:
        rules = self.rules
        self.types[s].add(cls)
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

    def _on_property(self, s: str, p: str, o: Term) -> None:
        rules = self.rules
        literal = type(o) is Literal
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

    def _on_watched(self, s: str, p: str, o: Term) -> None:
        rules = self.rules
        self.edges[p][s].add(o)
        self.back[p][o].add(s)
        for restriction, filler in rules.svf.get(p, ()):
            if filler is None or (type(o) is str and filler in self.types.get(o, ())):
                self.add((s, RDF_TYPE, restriction))
        for restriction, target in rules.avf.get(p, ()):
            if type(o) is str and restriction in self.types.get(s, ()):
                self.add((o, RDF_TYPE, target))
        if p in rules.transitive and type(o) is str:
            for z in list(self.edges[p].get(o, ())):
                self.add((s, p, z))
            for w in list(self.back[p].get(s, ())):
                self.add((w, p, o))


def close(rules: Expansion, triples: Iterable[Triple]) -> list[Triple]:
    """``triples`` closed under ``rules``: the originals first (in order), then what follows."""
    state = _Closure(rules)
    originals = list(dict.fromkeys(triples))
    state.todo.extend(reversed(originals))
    closed = state.run()
    seen = set(originals)
    return originals + [t for t in closed if t not in seen]
