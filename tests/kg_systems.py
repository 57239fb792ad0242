"""The seam between the knowledge-graph oracle and the systems it checks.

A system under test implements :class:`KgSystem` (two methods: what events add, what
updates change) and is listed in :data:`SYSTEMS`; ``tests/graph/test_kg_oracle_properties.py``
then runs the random cases of :mod:`kg_strategies` through it and compares its answers with
:mod:`kg_oracle`'s. :data:`SYSTEMS` holds semps' engine in process (:mod:`kg_semps`;
the service runs the same cases over HTTP in tests/api). :class:`RdflibReference`
(rdflib's SPARQL over owlrl's closure, recomputed for everything) is registered in
:data:`REFERENCES` so that the properties run now: its agreement with pyoxigraph checks the
oracle, and its disagreements are the documented differences between the two engines.

Terms are semps' (``str`` IRIs, ``"_:label"`` blank nodes, :class:`semps.terms.Literal`);
a solution is a ``frozenset`` of (variable name without ``?``, term) pairs of the
projected variables bound in it; ASK answers one empty solution when true. Answers are
compared after :func:`kg_oracle.canonical_counter` (numbers and dates by value, every blank
node as ``"_:"``), so a system may relabel blank nodes and write numbers its own way.
"""

from __future__ import annotations

import itertools
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence

import rdflib
from kg_oracle import Solutions, Triple, claimed, from_rdflib, rdflib_triples
from kg_owlrl import owlrl_closure


class KgSystem(ABC):
    """A knowledge-graph matcher under test.

    Attributes:
        name: the id of its tests (``test_...[name]``).
        deviations: feature tags (:data:`kg_strategies.FEATURES`) of subscriptions whose
            answers this system is known to get wrong: those subscriptions are left out of
            its comparisons (an engine should declare none).
    """

    name: str = "system"
    deviations: frozenset[str] = frozenset()

    @abstractmethod
    def added(
        self,
        ontology: Sequence[Triple],
        graph: Sequence[Triple],
        events: Sequence[Sequence[Triple]],
        queries: Mapping[str, str],
    ) -> list[dict[str, Solutions]]:
        """Load ``ontology`` and ``graph``, register ``queries`` (id -> SPARQL text), match
        each event in turn (none is retained: each meets ``graph`` alone): for each event,
        per query id, the solutions it adds (``sols(Q, closure(O+K+E)) -
        sols(Q, closure(O+K))``); a query it adds none to may be left out. An event's blank
        nodes are its own (``_:b0`` in two events, or in an event and the graph, are
        different nodes)."""

    @abstractmethod
    def change(
        self,
        ontology: Sequence[Triple],
        graph: Sequence[Triple],
        updates: Sequence[str],
        queries: Mapping[str, str],
    ) -> list[dict[str, tuple[Solutions, Solutions]]]:
        """Load ``ontology`` and ``graph``, register ``queries`` as change subscriptions,
        apply each SPARQL 1.1 Update in turn (its WHERE matches the graph's asserted triples):
        for each update, per query id, (added, removed) solutions; a query whose answers it
        leaves alone may be left out."""


#: The engines under test: each registers its adapter here (``SYSTEMS.append(...)`` from a
#: module this file imports at its end): semps in process (:mod:`kg_semps`).
SYSTEMS: list[KgSystem] = []


class RdflibReference(KgSystem):
    """Brute force with rdflib: owlrl's closure of ontology + graph (+ event) recomputed for
    each question, rdflib's SPARQL engine over its claimed triples, updates applied by
    rdflib (:func:`rdflib_update`). Independent of pyoxigraph (the oracle's engine) and of
    semps."""

    name = "rdflib-owlrl"
    #: rdflib orders terms of different kinds (``"phone" > 1`` is true; SPARQL 1.1 section
    #: 17.3 makes it a type error), its ``*`` paths answer their start node twice when a
    #: cycle leads back to it (section 18.5's ALP visits each node once), and it evaluates
    #: an OPTIONAL or a MINUS inside a nested group with the outer solution's bindings
    #: (section 18.6 evaluates the group first): see tests/graph/test_kg_oracle.py.
    deviations = frozenset({"filter-mixed-order", "path*", "nested-optional", "nested-minus"})

    def added(self, ontology, graph, events, queries):  # type: ignore[no-untyped-def]
        before = {qid: _rdflib_solutions(_closed(ontology, graph), q) for qid, q in queries.items()}
        out = []
        for i, event in enumerate(events):
            merged = [*rdflib_triples(graph), *rdflib_triples(event, bnodes=f"ev{i}x")]
            after = _closed(ontology, merged)
            found = {qid: _rdflib_solutions(after, q) - before[qid] for qid, q in queries.items()}
            out.append({qid: rows for qid, rows in found.items() if rows})
        return out

    def change(self, ontology, graph, updates, queries):  # type: ignore[no-untyped-def]
        current = rdflib.Graph()
        for t in rdflib_triples(graph):
            current.add(t)
        old = {qid: _rdflib_solutions(_closed(ontology, current), q) for qid, q in queries.items()}
        out = []
        for text in updates:
            rdflib_update(current, text)
            new = {
                qid: _rdflib_solutions(_closed(ontology, current), q) for qid, q in queries.items()
            }
            out.append({qid: (new[qid] - old[qid], old[qid] - new[qid]) for qid in queries})
            old = new
        return out


_MODIFY = re.compile(
    r"^(?P<prologue>.*?)DELETE\s*\{(?P<delete>[^{}]*)\}\s*INSERT\s*\{(?P<insert>[^{}]*)\}\s*"
    r"WHERE\s*\{(?P<where>.*)\}\s*$",
    re.DOTALL,
)


def rdflib_update(graph: rdflib.Graph, text: str) -> None:
    """Apply a SPARQL 1.1 Update with rdflib, a DELETE/INSERT ... WHERE as the
    specification orders it: rdflib deletes and inserts solution by solution (the second
    solution's insertions can be undone by the third's deletions), where SPARQL 1.1 Update
    (section 3.1.3) removes the triples every solution's DELETE template gives, then adds
    every solution's INSERT triples; here both templates are instantiated first
    (CONSTRUCT queries over the graph before the change), then applied in that order."""
    modify = _MODIFY.match(text)
    if modify is None:
        graph.update(_fresh_blank_nodes(text))
        return
    prologue, where = modify["prologue"], modify["where"]
    gone = list(graph.query(f"{prologue}CONSTRUCT {{{modify['delete']}}} WHERE {{{where}}}"))
    new = list(graph.query(f"{prologue}CONSTRUCT {{{modify['insert']}}} WHERE {{{where}}}"))
    for t in gone:
        graph.remove(t)  # type: ignore[arg-type]
    for t in new:
        graph.add(t)  # type: ignore[arg-type]


_UPDATES = itertools.count()


def _fresh_blank_nodes(text: str) -> str:
    """``text`` with its blank node labels made its own. SPARQL 1.1 Update section 3.1.1:
    "Blank nodes in QuadDatas are assumed to be disjoint from the blank nodes in the Graph
    Store, i.e., will be inserted with 'fresh' blank nodes"; rdflib keeps the label, so
    `INSERT DATA { :a :p _:u0 }` twice inserts one node there and two in the store the
    oracle's graphs come from (pyoxigraph), in semps, and by the specification. (Outside
    string literals: the texts' literals hold no quote of their own.)"""
    n = next(_UPDATES)
    parts = text.split('"')
    parts[::2] = [re.sub(r"_:(\w+)", rf"_:\1x{n}", part) for part in parts[::2]]
    return '"'.join(parts)


def _closed(ontology: Sequence[Triple], graph: object) -> rdflib.Graph:
    """The claimed owlrl closure of ontology + graph as an rdflib graph."""
    g = rdflib.Graph()
    for t in [*rdflib_triples(ontology), *rdflib_triples(graph)]:  # type: ignore[arg-type]
        g.add(t)
    owlrl_closure(g)
    out = rdflib.Graph()
    for t in g:
        if claimed(t):
            out.add(t)
    return out


def _rdflib_solutions(graph: rdflib.Graph, text: str) -> Solutions:
    result = graph.query(_keep_empty_solutions(text))
    if result.type == "ASK":
        return Counter([frozenset()]) if result.askAnswer else Counter()
    names = [str(v) for v in result.vars or () if str(v) != _ONE]
    return Counter(
        frozenset((n, from_rdflib(row[n])) for n in names if row[n] is not None)  # type: ignore[index]
        for row in result
    )


_ONE = "kgone"
_SELECT = re.compile(r"SELECT\s+(DISTINCT\s+)?(\*|(?:\?\w+\s*)+?)\s*WHERE\s*\{", re.IGNORECASE)


def _keep_empty_solutions(text: str) -> str:
    """``text`` with a variable bound in every solution (``BIND(1 AS ?kgone)`` at the end
    of its group, and projected): rdflib drops the solutions that bind none of the
    projected variables (``SELECT ?x WHERE { ?z :val ?u }`` has as many solutions as
    ``?z :val ?u`` has, all empty, by SPARQL 1.1 section 18.5's Project; rdflib answers
    none); the reference removes ``?kgone`` from its answers."""
    head = _SELECT.search(text)
    if head is None:
        return text
    projected = head.group(2).strip()
    projected = projected if projected == "*" else f"{projected} ?{_ONE}"
    end = text.rstrip().rfind("}")
    return (
        f"{text[: head.start()]}SELECT {head.group(1) or ''}{projected} WHERE {{"
        f"{text[head.end() : end]} BIND(1 AS ?{_ONE}) }}"
    )


#: Systems run by the properties now, beside :data:`SYSTEMS`.
REFERENCES: list[KgSystem] = [RdflibReference()]

import kg_semps  # noqa: E402, F401  (registers semps' engine in SYSTEMS)
