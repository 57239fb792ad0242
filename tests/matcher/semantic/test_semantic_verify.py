"""Verification against hostile subscriptions and events: no recursion a subscription can
deepen, disconnected patterns counted without enumerating their cross product (DISTINCT
included, checked against brute force), and the work budget's truncated verdicts."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from semps.event import Event
from semps.ingest.sparql import parse_query
from semps.limits import Limits
from semps.matcher.base import MatchContext
from semps.matcher.partab import to_partab
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.compiled import split_components
from semps.matcher.semantic.pairs import EventPairs
from semps.matcher.semantic.verify import count_solutions, verify
from semps.matcher.values import Subscription
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://ex/"


def pairs_of(triples: list[tuple[str, str, str]]) -> EventPairs:
    return EventPairs(to_partab(Event("e", tuple(dict.fromkeys(triples)))))


def test_a_thousand_pattern_subscription_verifies_without_recursion() -> None:
    body = " . ".join(f"?s{i} a ?c{i}" for i in range(1000))
    chain = " . ".join(f"?v{i} <{EX}p> ?v{i + 1}" for i in range(1000))
    m = SemanticMatcher()
    m.limits = Limits(max_patterns=2000)  # past the default: the point is depth
    m.add(Subscription("wide", "semantic", f"ASK {{ {body} }}"))
    m.add(Subscription("chain", "semantic", f"ASK {{ {chain} }}"))
    loop = Event("e", ((EX + "a", RDF_TYPE, EX + "C"), (EX + "a", EX + "p", EX + "a")))
    found = {x.subscription: x.count for x in m.match(MatchContext(loop))}
    assert found == {"wide": 1, "chain": 1}


def test_disconnected_patterns_multiply_their_counts() -> None:
    triples = [(f"{EX}n{i}", EX + "p", f"{EX}n{i + 1}") for i in range(200)]
    text = f"SELECT * {{ ?a <{EX}p> ?b . ?c <{EX}p> ?d . ?e <{EX}p> ?f }}"
    sub = compile_query("s", parse_query(text))
    assert len(sub.components) == 3
    verdict = verify(sub, pairs_of(triples), limit=5)
    assert verdict is not None and verdict.count == 200**3 and not verdict.truncated
    assert len(verdict.solutions) == 5
    assert set(verdict.solutions[0]) == set("abcdef")


def test_a_filter_spanning_two_components_merges_them() -> None:
    q = parse_query(f"SELECT * {{ ?a <{EX}p> ?b . ?c <{EX}q> ?d FILTER(?b != ?d) }}")
    sub = compile_query("s", q)
    assert len(sub.components) == 1
    assert [len(ps) for ps, _ in split_components(sub.patterns, ())] == [1, 1]


def test_the_budget_truncates_a_large_component() -> None:
    triples = [(f"{EX}n{i}", EX + "p", f"{EX}n{j}") for i in range(30) for j in range(30)]
    # One component (a filter links the two patterns): 900 x 900 rows to join.
    text = f"SELECT * {{ ?a <{EX}p> ?b . ?c <{EX}p> ?d FILTER(?a != ?c) }}"
    sub = compile_query("s", parse_query(text))
    pairs = pairs_of(triples)
    exact = verify(sub, pairs, limit=3)
    assert exact is not None and exact.count == 900 * 870 and not exact.truncated
    cut = verify(sub, pairs, limit=3, budget=5_000)
    assert cut is not None and cut.truncated and 0 < cut.count < exact.count
    assert count_solutions(sub, pairs, budget=1) == 0  # nothing found before the budget


def test_a_truncated_match_says_so() -> None:
    m = SemanticMatcher(step_budget=100)
    text = f"SELECT * {{ ?a <{EX}p> ?b . ?c <{EX}p> ?d FILTER(?a != ?c) }}"
    m.add(Subscription("s", "semantic", text))
    triples = tuple((f"{EX}n{i}", EX + "p", f"{EX}n{j}") for i in range(10) for j in range(10))
    event = Event("e", triples)
    (match,) = m.match(MatchContext(event))
    assert match.detail == {"truncated": True}
    assert 0 < match.count < 100 * 90


NODES = [EX + n for n in "abc"]
TRIPLES = [(s, EX + p, o) for s in NODES for p in "pq" for o in NODES] + [
    (s, RDF_TYPE, EX + "C") for s in NODES[:2]
]
PATTERNS = [
    "?x <http://ex/p> ?y",
    "?y <http://ex/q> ?z",
    "?u <http://ex/p> ?w",
    "?w a <http://ex/C>",
    "?t <http://ex/q> <http://ex/a>",
    "?x <http://ex/q> ?x",
]


def brute_force(text: str, triples: list[tuple[str, str, str]]) -> int:
    """Count solutions by trying every assignment of the event's nodes to the variables."""
    q = parse_query(text)
    variables = sorted(q.variables())
    facts = set(triples)
    rows = set()
    n = 0
    for values in itertools.product(NODES, repeat=len(variables)):
        b = dict(zip(variables, values, strict=True))
        ground = [
            tuple(b[t.name] if hasattr(t, "name") else t for t in (p.s, p.p, p.o))
            for p in q.patterns
        ]
        if all(g in facts for g in ground) and all(f.evaluate(b) for f in q.filters):
            n += 1
            rows.add(tuple(b.get(v) for v in q.projected()))
    if q.form == "ASK":
        return 1 if n else 0
    return len(rows) if q.distinct else n


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4, unique=True),
    st.sampled_from(["", "FILTER(?x != ?u)", "FILTER(?y = ?w)", "FILTER(?z != <http://ex/a>)"]),
    st.sampled_from(["SELECT *", "SELECT DISTINCT ?x ?w", "SELECT DISTINCT ?t", "ASK"]),
    st.lists(st.sampled_from(TRIPLES), min_size=1, max_size=14),
)
def test_component_counts_equal_brute_force(patterns, filt, head, triples) -> None:
    body = " . ".join(patterns)
    text = f"{head} {{ {body} {filt} }}"
    try:
        q = parse_query(text)
    except Exception:  # noqa: BLE001 - a projection of a variable the body lacks is fine
        return
    if "FILTER" in filt and not ({v for v in q.filters[0].variables()} <= q.variables()):
        return  # a filter on an unbound variable: brute force cannot enumerate it
    sub = compile_query("s", q)
    verdict = verify(sub, pairs_of(triples), limit=1000)
    ours = verdict.count if verdict is not None else 0
    assert ours == brute_force(text, triples)
    if verdict is not None and head == "SELECT *":
        assert len(verdict.solutions) == min(ours, 1000)
        assert len({tuple(sorted(s.items())) for s in verdict.solutions}) <= ours


VALUES = [
    Literal("3", XSD + "integer"),
    Literal("7", XSD + "integer"),
    Literal("7.0", XSD + "decimal"),
    Literal("2.5", XSD + "decimal"),
    Literal("1e1", XSD + "double"),
    Literal("red oak"),
    Literal("ash", lang="en"),
    EX + "iri",
]
FAMILY_FILTERS = [
    "FILTER(?v = {k})",
    "FILTER(?v >= {k} && ?v < {k2})",
    "FILTER(?v > {k} || {k2} > ?v)",
    'FILTER(contains(?v, "{w}"))',
    'FILTER(strStarts(?v, "{w}") || ?v < {k})',
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(FAMILY_FILTERS),
            st.integers(0, 9),
            st.integers(0, 9),
            st.sampled_from(["red", "oak", "ash", "x"]),
            st.sampled_from(["SELECT *", "SELECT DISTINCT ?x", "ASK"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([VALUES, VALUES[:3], [Literal("red oak"), Literal("ash")]]).flatmap(
        lambda pool: st.lists(
            st.tuples(st.sampled_from(NODES), st.sampled_from(pool), st.booleans()), max_size=8
        )
    ),
)
def test_families_count_like_one_by_one(subs, values) -> None:
    """Subscriptions differing in their filter constants are counted per family, with the
    answers of verifying each one (decimals, doubles, tagged strings and IRIs included)."""
    m = SemanticMatcher()
    for i, (filt, k, k2, w, head, linked) in enumerate(subs):
        extra = f" . ?x <{EX}q> ?y" if linked else ""
        for j, (word, shift) in enumerate(zip([w, "re", "d"], [0, 1, -2], strict=True)):
            body = f"?x <{EX}d> ?v{extra} " + filt.format(k=k + shift, k2=k2, w=word)
            m.add(Subscription(f"s{i}-{j}", "semantic", f"{head} {{ {body} }}"))
    triples = [(s, EX + "d", v) for s, v, _ in values]
    triples += [(s, EX + "q", NODES[0]) for s, _, linked in values if linked]
    triples += [(NODES[0], EX + "q", NODES[1])]
    event = Event("e", tuple(dict.fromkeys(triples)))
    pairs = EventPairs(to_partab(event))
    expected = {}
    for sub_id, sub in m.index.subscriptions.items():
        n = count_solutions(sub, pairs)
        if n:
            expected[sub_id] = n
    assert m.count_batch([MatchContext(event)]) == [
        dict(sorted(expected.items(), key=lambda kv: m.index.slot_of[kv[0]]))
    ]
    assert {x.subscription: x.count for x in m.match(MatchContext(event))} == expected


CONSTANT_TEMPLATES = [
    "SELECT * {{ ?x a <{c}> }}",
    "SELECT DISTINCT ?x {{ ?x <http://ex/p> ?y . ?y a <{c}> }}",
    "SELECT * {{ ?x <http://ex/p> <{n}> . ?x <http://ex/q> ?z }}",
    "ASK {{ <{n}> <http://ex/q> ?z . ?z a <{c}> }}",
    "SELECT ?z {{ <{n}> <http://ex/p> ?z . ?z <http://ex/q> <{m}> }}",
    "SELECT * {{ ?x <http://ex/p> ?x . ?x a <{c}> }}",
]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(CONSTANT_TEMPLATES),
            st.sampled_from([EX + "C", EX + "D"]),
            st.sampled_from(NODES),
            st.sampled_from(NODES),
        ),
        min_size=3,
        max_size=25,
    ),
    st.lists(st.sampled_from([*TRIPLES, (NODES[2], RDF_TYPE, EX + "D")]), min_size=1, max_size=14),
)
def test_pattern_constant_families_count_like_one_by_one(subs, triples) -> None:
    """Subscriptions differing in their pattern constants (classes, nodes) are counted per
    family, with the answers of verifying each one."""
    m = SemanticMatcher()
    for i, (template, c, n, n2) in enumerate(subs):
        m.add(Subscription(f"s{i}", "semantic", template.format(c=c, n=n, m=n2)))
    event = Event("e", tuple(dict.fromkeys(triples)))
    pairs = pairs_of(triples)
    expected = {}
    for sub_id, sub in m.index.subscriptions.items():
        n = count_solutions(sub, pairs)
        if n:
            expected[sub_id] = n
    (ours,) = m.count_batch([MatchContext(event)])
    assert ours == expected


def test_a_wide_subscription_is_counter_filtered_like_the_seed() -> None:
    """Patterns beyond the counter table's width are still counted (apart), and one wide
    subscription does not widen every row of the table."""
    m = SemanticMatcher()
    wide = " . ".join(f"?x <{EX}p{i}> ?y{i}" for i in range(12))
    m.add(Subscription("wide", "semantic", f"SELECT * {{ {wide} }}"))
    m.add(Subscription("narrow", "semantic", f"SELECT * {{ ?x <{EX}p0> ?y }}"))
    assert m.index._others.shape[1] <= 8
    for missing in (None, 1, 11):
        triples = [(EX + "a", f"{EX}p{i}", EX + "b") for i in range(12) if i != missing]
        pairs = pairs_of(triples)
        ours = [c.id for c in m.index.counter_filter(pairs)]
        assert ours == [c.id for c in m.index.counter_filter_all(pairs)]
        assert ("wide" in ours) == (missing is None)


def test_match_tells_the_watchdog_which_subscription_it_verifies() -> None:
    m = SemanticMatcher()
    m.add(Subscription("a", "semantic", f"SELECT * {{ ?x <{EX}p> ?y . ?y <{EX}p> ?z }}"))
    m.add(Subscription("b", "semantic", f"SELECT * {{ ?x <{EX}p> ?y FILTER(?y != ?x) }}"))
    watched: list[str] = []
    event = Event("e", ((EX + "a", EX + "p", EX + "b"), (EX + "b", EX + "p", EX + "c")))
    found = m.match(MatchContext(event, watch=watched.append))
    assert [x.subscription for x in found] == ["a", "b"]
    assert sorted(watched) == ["a", "b"]


def test_a_long_chain_registers_in_near_linear_time() -> None:
    """The join plan of a 1,000-pattern chain with a filter per link is built from a heap
    of ranks (no pass over every pattern per step); the plan follows the chain."""
    n = 1000
    chain = " . ".join(f"?v{i} :p ?v{i + 1}" for i in range(n))
    chain += " " + " ".join(f"FILTER(?v{i} != ?v{i + 1})" for i in range(n))
    text = f"PREFIX : <{EX}> ASK {{ :a :p ?v0 . {chain} }}"
    sub = compile_query("long", parse_query(text, limits=Limits(max_patterns=2000)))
    (comp,) = sub.components
    assert [step[3] for step in comp.plan[1:4]] == ["v0", "v1", "v2"]
    assert sum(len(step[5]) for step in comp.plan) == n
