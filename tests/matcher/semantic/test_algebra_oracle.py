"""Randomised oracle for the language beyond basic graph patterns: OPTIONAL, UNION, MINUS,
FILTER (NOT) EXISTS (also inside expressions and BIND), BIND, VALUES, nested groups,
property paths, variable predicates and SELECT expressions answer exactly what pyoxigraph's
SPARQL engine answers over the same closed event (the event closed under a random ontology
by semps' closure, then given to pyoxigraph as a plain graph): the same matches, counts and
solution multisets, through the counter filter of the merged index."""

from __future__ import annotations

import re
from collections import Counter

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from semps_test_support import events_over, from_oxigraph, to_oxigraph

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.values import Subscription
from semps.ontology import compile_axioms
from semps.terms import OWL, RDF_TYPE, RDFS, XSD, Literal

EX = "http://example.org/"
CLASSES = [EX + f"C{i}" for i in range(3)]
PROPS = [EX + f"p{i}" for i in range(3)]
NODES = [EX + f"n{i}" for i in range(4)]
NUMBERS = [Literal(str(i), XSD + "integer") for i in range(3)]
PREFIX = f"PREFIX : <{EX}> "


@st.composite
def ontologies(draw: st.DrawFn) -> list:
    c, p = st.sampled_from(CLASSES), st.sampled_from(PROPS)
    axioms = [(draw(c), RDFS + "subClassOf", draw(c)) for _ in range(draw(st.integers(0, 2)))]
    axioms += [(draw(p), RDFS + "subPropertyOf", draw(p)) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        axioms.append((draw(p), OWL + "inverseOf", draw(p)))
    return axioms


events = events_over(NODES, CLASSES, PROPS, EX + "d", NUMBERS)


def _local(iri: str) -> str:
    return ":" + iri[len(EX) :]


def _node_or_var(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 3)) == 0:
        return _local(draw(st.sampled_from(NODES)))
    return "?" + draw(st.sampled_from("xyz"))


@st.composite
def paths(draw: st.DrawFn, depth: int = 0) -> str:
    link = _local(draw(st.sampled_from(PROPS)))
    if depth >= 2:
        return link
    kind = draw(st.sampled_from(["link", "inv", "seq", "alt", "star", "plus", "opt", "nps"]))
    inner = draw(paths(depth + 1))
    if kind == "inv":
        return f"^{inner}" if inner.startswith(":") else f"^({inner})"
    if kind in ("seq", "alt"):
        joint = "/" if kind == "seq" else "|"
        return f"({inner}{joint}{draw(paths(depth + 1))})"
    if kind in ("star", "plus", "opt"):
        mod = {"star": "*", "plus": "+", "opt": "?"}[kind]
        return f"({inner}){mod}"
    if kind == "nps":
        other = _local(draw(st.sampled_from(PROPS)))
        return draw(st.sampled_from([f"!{link}", f"!(^{link})", f"!({link}|^{other})"]))
    return link


@st.composite
def triples(draw: st.DrawFn) -> str:
    s, o = _node_or_var(draw), _node_or_var(draw)
    kind = draw(st.sampled_from(["prop", "prop", "type", "data", "path", "path", "varpred"]))
    if kind == "type":
        return f"{s} a {_local(draw(st.sampled_from(CLASSES)))}"
    if kind == "data":
        return f"{s} :d ?v"
    if kind == "varpred":
        predicate = "?w"
    elif kind == "path":
        predicate = draw(paths())
    else:
        predicate = _local(draw(st.sampled_from(PROPS)))
    return f"{s} {predicate} {o}"


@st.composite
def groups(draw: st.DrawFn, depth: int = 0) -> str:
    elements = [draw(triples())]
    for _ in range(draw(st.integers(0, 2))):
        kinds = ["triple", "filter", "values"]
        if depth < 2:  # no BIND two groups down: pyoxigraph's answer is wrong (last test)
            kinds += ["bind", "optional", "optional", "union", "minus", "exists", "group"]
        kind = draw(st.sampled_from(kinds))
        if kind == "triple":
            elements.append(draw(triples()))
        elif kind == "optional":
            elements.append(f"OPTIONAL {{ {draw(groups(depth + 1))} }}")
        elif kind == "union":
            elements.append(
                f"{{ {draw(groups(depth + 1))} }} UNION {{ {draw(groups(depth + 1))} }}"
            )
        elif kind == "minus":
            elements.append(f"MINUS {{ {draw(groups(depth + 1))} }}")
        elif kind == "group":
            elements.append(f"{{ {draw(groups(depth + 1))} }}")
        elif kind == "exists":
            negated = draw(st.sampled_from(["", "NOT "]))
            inner = draw(groups(depth + 1))
            elements.append(
                draw(
                    st.sampled_from(
                        [
                            f"FILTER {negated}EXISTS {{ {inner} }}",
                            f"FILTER(?x = :n1 || {negated}EXISTS {{ {inner} }})",
                            f"BIND({negated}EXISTS {{ {inner} }} AS ?e{depth}{len(elements)})",
                        ]
                    )
                )
            )
        elif kind == "filter":
            v = draw(st.sampled_from("xyzv"))
            elements.append(
                draw(
                    st.sampled_from(
                        [
                            f"FILTER(?{v} != {_local(draw(st.sampled_from(NODES)))})",
                            f"FILTER(bound(?{v}))",
                            f"FILTER(!bound(?{v}))",
                            "FILTER(?v >= 1)",
                        ]
                    )
                )
            )
        elif kind == "bind":
            elements.append(f"BIND(COALESCE(?x, ?y, 0) AS ?b{depth}{len(elements)})")
        else:
            row = " ".join(_local(n) for n in draw(st.lists(st.sampled_from(NODES), max_size=3)))
            elements.append(f"VALUES ?{draw(st.sampled_from('xyz'))} {{ {row} UNDEF }}")
    return " . ".join(elements)


@st.composite
def queries(draw: st.DrawFn) -> str:
    body = draw(groups())
    form = draw(
        st.sampled_from(["SELECT *", "SELECT DISTINCT *", "ASK", "SELECT ?x (STR(?y) AS ?sy)"])
    )
    return f"{PREFIX}{form} WHERE {{ {body} }}"


def oracle(context: MatchContext, texts: dict[str, str]) -> dict[str, Counter]:
    """Each query's solutions over the closed event, as pyoxigraph answers them."""
    store = ox.Store()
    for prop, rows in EventPairs(context.parts).by_prop.items():
        for s, o in rows:
            store.add(
                ox.Quad(to_oxigraph(s), ox.NamedNode(prop), to_oxigraph(o), ox.DefaultGraph())
            )
    found = {}
    for sub_id, text in texts.items():
        result = store.query(text)
        if isinstance(result, ox.QueryBoolean):
            rows = Counter([frozenset()]) if bool(result) else Counter()
        else:
            names = [v.value for v in result.variables]
            rows = Counter(
                frozenset((n, from_oxigraph(sol[n])) for n in names if sol[n] is not None)
                for sol in result
            )
        if rows:
            found[sub_id] = rows
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ontologies(), events, st.lists(queries(), min_size=1, max_size=5))
def test_algebra_answers_equal_pyoxigraph_over_the_same_closure(axioms, event, texts) -> None:
    matcher = SemanticMatcher(solution_limit=10_000)
    subs = {f"s{i}": text for i, text in enumerate(texts)}
    for sub_id, text in subs.items():
        matcher.add(Subscription(sub_id, "semantic", text))
    # Every node is in the graph: for a zero-length path between a constant absent from
    # the graph and itself, pyoxigraph answers no solution where SPARQL 1.1 (section
    # 18.5, ALP) and semps answer one.
    typed = [(n, RDF_TYPE, EX + "Node") for n in NODES]
    e = Event("e", tuple(dict.fromkeys([*event, *typed])))
    context = MatchContext(e, compile_axioms(axioms))
    found = matcher.match(context)
    ours = {m.subscription: Counter(frozenset(s.items()) for s in m.solutions) for m in found}
    expected = oracle(context, subs)
    for sub_id, text in subs.items():
        if "|" in text or re.search(r"!\(?\^?:", text):
            # Multiplicities of two path forms differ between pyoxigraph and SPARQL 1.1
            # (section 18.5), which semps follows: an alternative is a multiset Union (one
            # solution per branch; pyoxigraph gives one), a negated property set's pairs
            # exist or not (pyoxigraph gives one per predicate). Compare them as sets.
            assert set(ours.get(sub_id, ())) == set(expected.get(sub_id, ())), text
        else:
            assert ours.get(sub_id) == expected.get(sub_id), text
    # Bulk jobs' counts-only path answers what matching answers.
    assert matcher.count_batch([context]) == [{m.subscription: m.count for m in found}]


def test_a_bind_in_a_nested_optional_does_not_see_the_outer_bindings() -> None:
    """SPARQL evaluates a group bottom-up (1.1, section 18.6): the innermost group's BIND
    runs before the OPTIONALs join it to the outside, where ``?x`` is unbound, so COALESCE
    gives 0. pyoxigraph answers ``?b = :n0`` here (it passes the outer ``?x`` into the
    nested OPTIONAL), so the random oracle above never nests a BIND two groups down; rdflib
    agrees with the specification, and so must semps."""
    text = (
        PREFIX + "SELECT * WHERE { ?x :d ?v . OPTIONAL { :n0 :p0 ?x . "
        "OPTIONAL { :n0 :p0 :n0 . BIND(COALESCE(?x, ?y, 0) AS ?b) } } }"
    )
    zero = Literal("0", XSD + "integer")
    event = Event("e", ((EX + "n0", EX + "d", zero), (EX + "n0", EX + "p0", EX + "n0")))
    matcher = SemanticMatcher()
    matcher.add(Subscription("s", "semantic", text))
    (matches,) = matcher.match_batch([MatchContext(event)])
    assert [dict(row) for m in matches for row in m.solutions] == [
        {"x": EX + "n0", "v": zero, "b": zero}
    ]
