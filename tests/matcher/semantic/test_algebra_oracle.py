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


#: A drawn group: its text, the text the oracle gets (see :func:`groups`), and its in-scope
#: variables (SPARQL 1.1, section 18.2.1).
Group = tuple[str, str, frozenset[str]]
_VARIABLE = re.compile(r"\?(\w+)")


def _scope(text: str) -> frozenset[str]:
    return frozenset(_VARIABLE.findall(text))


def _unseen(text: str, visible: frozenset[str], tag: str) -> str:
    """``text`` with every variable not in ``visible`` renamed apart (``?z`` -> ``?z_o<tag>``):
    what the EXISTS's solution mapping cannot bind may not be bound by anything else."""
    return _VARIABLE.sub(
        lambda m: m.group(0) if m.group(1) in visible else f"?{m.group(1)}_o{tag}", text
    )


@st.composite
def groups(
    draw: st.DrawFn,
    depth: int = 0,
    outer: frozenset[str] = frozenset(),
    left: frozenset[str] = frozenset(),
) -> Group:
    """A group graph pattern, and the same group for the oracle with each ``EXISTS``
    pattern's variables that its solution mapping cannot bind renamed apart.

    ``EXISTS {P}`` is evaluated with ``substitute(P, mu)`` (section 18.6), ``mu`` the
    solution the FILTER is evaluated on: a solution of the filter's own group (sections
    18.2.2.2 and 18.2.2.7: a group's filters apply to the whole group, once it is
    translated), merged with the left side's for the group of an OPTIONAL (18.2.2.6:
    ``LeftJoin(G, A2, F)``), or of the elements before a BIND (``Extend``). ``outer``: the
    variables an enclosing EXISTS substituted; ``left``: an OPTIONAL's left side's. pyoxigraph
    and rdflib also let a FILTER's EXISTS see the variables of the groups around its own
    (issue 34: two solutions by SPARQL, one by them); renamed apart, no engine can."""
    elements: list[Group] = [_plain(draw(triples()))]
    later: list[tuple[int, str, str, str]] = []  # EXISTS FILTERs: their visibility is known last
    for _ in range(draw(st.integers(0, 2))):
        kinds = ["triple", "filter", "values"]
        if depth < 2:  # no BIND two groups down: pyoxigraph's answer is wrong (last test)
            kinds += ["bind", "optional", "optional", "union", "minus", "exists", "group"]
        kind = draw(st.sampled_from(kinds))
        before = frozenset().union(*(scope for _, _, scope in elements))
        if kind == "triple":
            elements.append(_plain(draw(triples())))
        elif kind == "optional":
            text, seen, scope = draw(groups(depth + 1, outer, before))
            elements.append((f"OPTIONAL {{ {text} }}", f"OPTIONAL {{ {seen} }}", scope))
        elif kind == "union":
            a, b = draw(groups(depth + 1, outer)), draw(groups(depth + 1, outer))
            elements.append(
                (
                    f"{{ {a[0]} }} UNION {{ {b[0]} }}",
                    f"{{ {a[1]} }} UNION {{ {b[1]} }}",
                    a[2] | b[2],
                )
            )
        elif kind == "minus":
            text, seen, _ = draw(groups(depth + 1, outer))
            elements.append((f"MINUS {{ {text} }}", f"MINUS {{ {seen} }}", frozenset()))
        elif kind == "group":
            text, seen, scope = draw(groups(depth + 1, outer))
            elements.append((f"{{ {text} }}", f"{{ {seen} }}", scope))
        elif kind == "exists":
            negated = draw(st.sampled_from(["", "NOT "]))
            form = draw(
                st.sampled_from(
                    [
                        "FILTER {}EXISTS {{ {} }}",
                        "FILTER(?x = :n1 || {}EXISTS {{ {} }})",
                        "BIND({}EXISTS {{ {} }} AS ?e" + f"{depth}{len(elements)})",
                    ]
                )
            )
            tag = f"{depth}{len(elements)}"
            if form.startswith("BIND"):
                visible = outer | before
                text, seen, _ = draw(groups(depth + 1, visible))
                bound = frozenset([f"e{depth}{len(elements)}"])
                elements.append(
                    (
                        form.format(negated, text),
                        form.format(negated, _unseen(seen, visible, tag)),
                        bound,
                    )
                )
            else:  # a FILTER: the group's whole scope is known once every element is drawn
                later.append((len(elements), form, negated, tag))
                elements.append(("", "", frozenset()))
        elif kind == "filter":
            v = draw(st.sampled_from("xyzv"))
            elements.append(
                _filter(
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
            )
        elif kind == "bind":
            name = f"b{depth}{len(elements)}"
            elements.append(_plain(f"BIND(COALESCE(?x, ?y, 0) AS ?{name})", {name}))
        else:
            row = " ".join(_local(n) for n in draw(st.lists(st.sampled_from(NODES), max_size=3)))
            var = draw(st.sampled_from("xyz"))
            elements.append(_plain(f"VALUES ?{var} {{ {row} UNDEF }}", {var}))
    scope = frozenset().union(*(scope for _, _, scope in elements))
    for at, form, negated, tag in later:
        visible = outer | left | scope
        text, seen, _ = draw(groups(depth + 1, visible))
        elements[at] = (
            form.format(negated, text),
            form.format(negated, _unseen(seen, visible, tag)),
            frozenset(),
        )
    return (
        " . ".join(text for text, _, _ in elements),
        " . ".join(seen for _, seen, _ in elements),
        scope,
    )


def _plain(text: str, scope: set[str] | None = None) -> Group:
    """An element the oracle gets as it is: a triple (its variables in scope), a BIND or
    VALUES (``scope``)."""
    return text, text, frozenset(scope) if scope is not None else _scope(text)


def _filter(text: str) -> Group:
    return text, text, frozenset()


@st.composite
def queries(draw: st.DrawFn) -> tuple[str, str]:
    """A query, and the same query as the oracle gets it (see :func:`groups`)."""
    body, seen, _ = draw(groups())
    form = draw(
        st.sampled_from(["SELECT *", "SELECT DISTINCT *", "ASK", "SELECT ?x (STR(?y) AS ?sy)"])
    )
    return f"{PREFIX}{form} WHERE {{ {body} }}", f"{PREFIX}{form} WHERE {{ {seen} }}"


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
def test_algebra_answers_equal_pyoxigraph_over_the_same_closure(axioms, event, drawn) -> None:
    matcher = SemanticMatcher(solution_limit=10_000)
    subs = {f"s{i}": text for i, (text, _) in enumerate(drawn)}
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
    expected = oracle(context, {f"s{i}": seen for i, (_, seen) in enumerate(drawn)})
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


#: The query pyoxigraph and rdflib answer with one solution over ``EXISTS_EVENT``, semps with
#: two: SPARQL 1.1's answer, and what the random oracle above found (issue 34).
EXISTS_QUERY = PREFIX + "SELECT * WHERE { ?x :p0 ?z . { ?x :d ?v . FILTER EXISTS { ?z :p0 :n0 } } }"
ONE = Literal("1", XSD + "integer")
EXISTS_EVENT = (
    (EX + "n1", EX + "p0", EX + "n2"),
    (EX + "n1", EX + "p0", EX + "n3"),
    (EX + "n3", EX + "p0", EX + "n0"),
    (EX + "n1", EX + "d", ONE),
)


def test_a_filter_exists_sees_only_the_solution_of_its_own_group() -> None:
    """SPARQL 1.1, section 18.2.2.2 (Collect FILTER Elements): "FILTER expressions apply to
    the whole group graph pattern in which they appear. [...] We collect the filters
    together here and remove them from group, then apply them to the whole translated group
    graph pattern", and ``EXISTS{P}`` becomes ``exists(translate(P))``; 18.2.2.7 (Filters
    of Group): "G := Filter(X, G)", G the translated group. So the inner group translates to
    ``Filter(exists(BGP(?z :p0 :n0)), BGP(?x :d ?v))``, and the outer group (18.2.2.6) to
    ``Join(BGP(?x :p0 ?z), that)``.

    Section 18.6: "eval(D(G), Filter(F, P)) = Filter(F, eval(D(G),P), D(G))", and
    "Let mu be the current solution mapping for a filter and P a graph pattern: The value
    exists(P), given D(G) is true if and only if eval(D(G), substitute(P, mu)) is a
    non-empty sequence", where "substitute(pattern, mu) = the pattern formed by replacing
    every occurrence of a variable v in pattern by mu(v) for each v in dom(mu)". The filter
    is evaluated on the solutions of ``BGP(?x :d ?v)``, whose domain is {?x, ?v}: ``?z``
    is not substituted, and EXISTS asks whether *any* node has ``:p0 :n0`` (``:n3`` has).
    So ``{?x: :n1, ?v: 1}`` passes, and joins both outer solutions ``?z = :n2`` and
    ``?z = :n3``: two solutions.

    pyoxigraph and rdflib pass the outer ``?z`` into the EXISTS (``:n2 :p0 :n0`` is not
    there) and answer one; with the EXISTS's ``?z`` renamed apart (nothing outside can
    bind it, as the specification has it) they answer two, as semps does."""
    matcher = SemanticMatcher()
    matcher.add(Subscription("s", "semantic", EXISTS_QUERY))
    (found,) = matcher.match(MatchContext(Event("e", EXISTS_EVENT)))
    n1, n2, n3 = EX + "n1", EX + "n2", EX + "n3"
    assert sorted((dict(row) for row in found.solutions), key=lambda row: row["z"]) == [
        {"x": n1, "z": n2, "v": ONE},
        {"x": n1, "z": n3, "v": ONE},
    ]
    renamed = EXISTS_QUERY.replace("?z :p0 :n0", "?z_o :p0 :n0")
    context = MatchContext(Event("e", EXISTS_EVENT))
    assert oracle(context, {"s": renamed})["s"] == Counter(
        frozenset(row.items()) for row in found.solutions
    )
