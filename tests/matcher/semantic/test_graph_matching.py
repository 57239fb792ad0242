"""Matching with a knowledge graph against an independent oracle: pyoxigraph evaluating each
subscription over owlrl's OWL 2 RL closure of ontology + graph (+ event), the multiset
difference of the solutions after and before (SPARQL 1.1 semantics; DISTINCT and ASK as
the issue fixes them: a projected row or ASK's one solution is added when it was not there
before). Random ontologies, graphs, events and graph edits; subscriptions with OPTIONAL,
UNION, MINUS, NOT EXISTS, EXISTS, paths, FILTERs, DISTINCT and ASK."""

from __future__ import annotations

from collections import Counter

import owlrl
import pyoxigraph as ox
import rdflib
from graph_support import CLASSES, EX, NODES, PROPS, facts, graph_context, ontologies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from semps_test_support import from_oxigraph

from semps.event import Event
from semps.graph.graph import KnowledgeGraph
from semps.matcher.base import MatchContext, Subscription
from semps.matcher.semantic import SemanticMatcher
from semps.ontology import compile_axioms
from semps.terms import XSD, Literal

P = f"PREFIX : <{EX}> "
TEMPLATES = [
    "SELECT ?x ?y WHERE {{ ?x :{p} ?y . ?y a :{c} }}",
    "SELECT ?x ?y WHERE {{ ?x a :{c} OPTIONAL {{ ?x :{p} ?y }} }}",
    "SELECT ?x WHERE {{ ?x a :{c} MINUS {{ ?x :{p} ?y }} }}",
    "SELECT ?x WHERE {{ ?x a :{c} FILTER NOT EXISTS {{ ?x :{p} ?y }} }}",
    "SELECT ?x WHERE {{ ?x :{p} ?y FILTER EXISTS {{ ?y a :{c} }} }}",
    "SELECT ?x ?y WHERE {{ {{ ?x :{p} ?y }} UNION {{ ?y :{q} ?x }} }}",
    "SELECT ?x ?y WHERE {{ ?x :{p}+ ?y }}",
    # (a zero-length path from a node of the graph: from a constant the graph does not hold,
    # SPARQL 1.1's ZeroLengthPath still binds it, section 18.5, which pyoxigraph does not)
    "SELECT ?x ?y WHERE {{ ?x a :{c} . ?x :{p}* ?y }}",
    "ASK {{ ?x a :{c} ; :{p} ?y }}",
    "ASK {{ ?x a :{c} FILTER NOT EXISTS {{ ?x :{p} ?y }} }}",
    "SELECT DISTINCT ?x WHERE {{ ?x :{p} ?y }}",
    "SELECT ?x ?y WHERE {{ ?x :{p} ?y FILTER(?y != :{n}) }}",
    "SELECT ?x ?z WHERE {{ ?x :{p} ?y . ?y :{q} ?z }}",
    "SELECT * WHERE {{ ?x a :{c} OPTIONAL {{ ?x :{p} ?y . ?y a :{d} }} }}",
    "SELECT ?x WHERE {{ ?x a :{c} ; a :{d} }}",
    "SELECT ?x ?v WHERE {{ ?x :d0 ?v }}",
    # (a constant twice, or two constants: one template parameter or two)
    "SELECT ?x ?y WHERE {{ :{n} :{p} ?x . :{m} :{p} ?y . ?y a :{c} }}",
]


#: Readings: a number-valued property, compared with thresholds (several per template and
#: constants, so that :mod:`semps.matcher.semantic.graphthresholds` sorts them).
READING = EX + "d1"
THRESHOLDS = [
    "SELECT ?x ?v WHERE {{ ?x :d1 ?v FILTER(?v > {k}) }}",
    "SELECT ?v WHERE {{ :{n} :d1 ?v FILTER({k} >= ?v) }}",
    "SELECT ?x ?v WHERE {{ ?x a :{c} ; :d1 ?v FILTER(?v < {k}) }}",
]
NUMBERS = ["1", "2", "2.5", "3e0", "-1", "4.0", '"2"', "2.0e0"]


def _instance(draw: st.DrawFn, template: str) -> str:
    short = [[x.removeprefix(EX) for x in xs] for xs in (PROPS, CLASSES, NODES)]
    p, q = draw(st.sampled_from(short[0])), draw(st.sampled_from(short[0]))
    c, d = draw(st.sampled_from(short[1])), draw(st.sampled_from(short[1]))
    n, m = draw(st.sampled_from(short[2])), draw(st.sampled_from(short[2]))
    k = draw(st.sampled_from(NUMBERS))
    return P + template.format(p=p, q=q, c=c, d=d, n=n, m=m, k=k)


@st.composite
def subscriptions(draw: st.DrawFn) -> list[tuple[str, str]]:
    """Subscriptions in every template's shape, each template several times over (with the
    same or other constants: they share a template in the matcher), and threshold FILTERs
    many times over on the same constants."""
    out = []
    for i, template in enumerate(TEMPLATES):
        for j in range(draw(st.integers(0, 3))):
            out.append((f"q{i:02d}{j}", _instance(draw, template)))
    for i, template in enumerate(THRESHOLDS):
        for j in range(draw(st.sampled_from([0, 1, 6]))):
            out.append((f"t{i}{j}", _instance(draw, template)))
    return out


readings = st.tuples(
    st.sampled_from(NODES),
    st.just(READING),
    st.sampled_from(
        [Literal("2", XSD + "integer"), Literal("3.5", XSD + "decimal"),
         Literal("2.0E0", XSD + "double"), Literal("-7", XSD + "integer"), Literal("2")]
    ),
)  # fmt: skip
facts_and_readings = st.one_of(facts, readings)


def _node(t: object) -> rdflib.term.Node:
    if isinstance(t, Literal):
        return rdflib.Literal(t.lexical, datatype=rdflib.URIRef(t.datatype))
    return rdflib.BNode(t[2:]) if t.startswith("_:") else rdflib.URIRef(t)  # type: ignore[union-attr]


def closure_store(axioms: list, graph: list) -> ox.Store:
    """owlrl's OWL 2 RL closure of the axioms and the graph, in a pyoxigraph store."""
    g = rdflib.Graph()
    for t in [*axioms, *graph]:
        g.add(tuple(_node(x) for x in t))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False).expand(g)
    store = ox.Store()
    store.bulk_extend(  # (owlrl's generalised triples with a literal subject left out)
        ox.Quad(_ox(s), _ox(p), _ox(o)) for s, p, o in g if not isinstance(s, rdflib.Literal)
    )
    return store


def _ox(t: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(t, rdflib.Literal):
        if t.language:
            return ox.Literal(str(t), language=t.language)
        datatype = str(t.datatype) if t.datatype else "http://www.w3.org/2001/XMLSchema#string"
        return ox.Literal(str(t), datatype=ox.NamedNode(datatype))
    if isinstance(t, rdflib.BNode):
        return ox.BlankNode(str(t).replace("-", "_"))
    return ox.NamedNode(str(t))


def answers(store: ox.Store, text: str) -> tuple[bool, Counter]:
    found = store.query(text)
    if isinstance(found, ox.QueryBoolean):
        return True, Counter([()] if bool(found) else [])
    names = [v.value for v in found.variables]
    rows = Counter()
    for solution in found:
        rows[tuple((n, from_oxigraph(solution[n])) for n in names if solution[n] is not None)] += 1
    return False, rows


def expected_added(before: ox.Store, after: ox.Store, text: str) -> tuple[int, int]:
    """(added, removed) solution counts by the issue's semantics."""
    ask, old = answers(before, text)
    _, new = answers(after, text)
    if ask or "DISTINCT" in text:
        return len(set(new) - set(old)), len(set(old) - set(new))
    return sum((new - old).values()), sum((old - new).values())


def matcher_of(subs: list[tuple[str, str]]) -> SemanticMatcher:
    m = SemanticMatcher()
    for sub_id, text in subs:
        m.add(Subscription(sub_id, "semantic", text))
    return m


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def event_cases(fact: st.SearchStrategy) -> tuple[st.SearchStrategy, ...]:
    """The strategies of an event against a knowledge graph, for ``@given``: an ontology, the
    graph (1-8 of ``fact``), the event (1-4 of ``fact``) and subscriptions."""
    return (
        ontologies(),
        st.lists(fact, min_size=1, max_size=8),
        st.lists(fact, min_size=1, max_size=4),
        subscriptions(),
    )


@SETTINGS
@given(*event_cases(facts_and_readings))
def test_an_event_notifies_the_solutions_it_adds(axioms, graph, event, subs) -> None:
    matcher = matcher_of(subs)
    context = graph_context(axioms, graph, event)
    ours = {m.subscription: m.count for m in matcher.match(context)}
    assert ours == matcher.count_batch([context])[0]
    before, after = closure_store(axioms, graph), closure_store(axioms, [*graph, *event])
    want = {}
    for sub_id, text in subs:
        added, _ = expected_added(before, after, text)
        if added:
            want[sub_id] = added
    assert ours == want


@SETTINGS
@given(
    ontologies(),
    st.lists(facts_and_readings, min_size=1, max_size=8, unique=True),
    st.lists(facts_and_readings, max_size=3),
    st.lists(st.integers(0, 7), max_size=3),
    subscriptions(),
)
def test_a_graph_edit_notifies_added_and_removed_solutions(
    axioms, graph, inserted, deleted, subs
) -> None:
    expansion = compile_axioms(axioms)
    kg = KnowledgeGraph(expansion)
    kg.load(graph)
    matcher = matcher_of(subs)
    doomed = [graph[i] for i in deleted if i < len(graph)]
    change = kg.plan_insert(inserted, doomed)
    ours = {
        m.subscription: (m.count, m.removed_count) for m in matcher.change_matches(change, kg.view)
    }
    kg.commit(change)
    after_graph = [
        t for t in dict.fromkeys([*graph, *inserted]) if t not in doomed or t in inserted
    ]
    before, after = closure_store(axioms, graph), closure_store(axioms, after_graph)
    want = {}
    for sub_id, text in subs:
        added, removed = expected_added(before, after, text)
        if added or removed:
            want[sub_id] = (added, removed)
    assert ours == want
    # the next event sees the edited graph (ASK counts carried over the change)
    context = MatchContext(
        Event("e", ((EX + "n0", PROPS[0], EX + "n1"),)), expansion, graph=kg.view
    )
    later = {m.subscription: m.count for m in matcher.match(context)}
    final = closure_store(axioms, [*after_graph, (EX + "n0", PROPS[0], EX + "n1")])
    assert later == {
        sub_id: n for sub_id, text in subs if (n := expected_added(after, final, text)[0])
    }
