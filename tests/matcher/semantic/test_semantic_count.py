"""The counts-only path (``count_batch``, ``result_lines``): many families of one event
counted in one compiled pass, and output lines written from the count columns, against
pyoxigraph evaluating every subscription alone over the event (the reference engine)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from semps_test_support import to_oxigraph

from semps.event import Event
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher, count, familyjoin
from semps.matcher.semantic._join_kernels import family_join_runs, run_inputs, scatter_counts
from semps.matcher.semantic._kernels import candidate_shapes, write_counts, write_shape_counts
from semps.matcher.values import Subscription
from semps.terms import RDF_TYPE, XSD, Literal

EX = "http://ex/"
NODES = [f"{EX}n{i}" for i in range(4)]
CLASSES = [f"{EX}C{i}" for i in range(3)]
VALUES = [
    *(Literal(str(i), XSD + "integer") for i in range(6)),
    Literal("2.5", XSD + "decimal"),
    Literal("4.0", XSD + "decimal"),
    Literal("red oak"),
    Literal("ash elm"),
]
#: Decimals the compiled pass compares exactly (in millionths), and some it leaves to
#: verification one by one (seven places, a double, 19 digits).
DECIMALS = [
    *(Literal(f"{i}.5", XSD + "decimal") for i in range(4)),
    Literal("3.0000005", XSD + "decimal"),
    Literal("2.5E0", XSD + "double"),
    Literal("1234567890123.456789", XSD + "decimal"),
]
# (Not "2.50" beside "2.5": pyoxigraph stores decimals canonically, one term where RDF has
# two. Not "1.0000000000000000000000000000001": pyoxigraph reads at most 18 decimal places and
# drops it as an error, where XSD decimals have any precision and semps compares it.)

#: Subscription forms that make families (they differ in the constants {c}, {n}, {a},
#: {b}, {w}); several forms share one join of their patterns without constants.
TEMPLATES = [
    "SELECT * {{ ?x a <{c}> . ?x <{EX}d> ?v FILTER(?v >= {a} && ?v < {b}) }}",
    "SELECT DISTINCT ?x {{ ?x a <{c}> . ?x <{EX}d> ?v FILTER(?v >= {a}) }}",
    "SELECT DISTINCT ?x {{ ?x <{EX}p> ?y . ?y <{EX}d> ?v FILTER(?v > {a} || ?v < {b}) }}",
    "SELECT ?y {{ ?x <{EX}p> ?y . ?y <{EX}d> ?v FILTER(?v = {a}) }}",
    "ASK {{ ?x <{EX}p> <{n}> . ?x a <{c}> }}",
    "SELECT * {{ ?x <{EX}p> <{n}> . ?x <{EX}d> ?v FILTER(!(?v != {a})) }}",
    'SELECT DISTINCT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{w}")) }}',
    'SELECT * {{ ?x a <{c}> . ?x <{EX}s> ?t FILTER(strstarts(?t, "{w}") || ?t = "{w}") }}',
    'SELECT ?t {{ ?x <{EX}s> ?t FILTER(strends(?t, "{w}") || contains(?t, "{w}{w}")) }}',
    # Joins with both ends bound (a cycle), a loop, and a step found by its object.
    "SELECT * {{ ?x <{EX}p> ?y . ?y <{EX}p> ?x . ?x <{EX}d> ?v FILTER(?v < {a}) }}",
    "SELECT DISTINCT ?x {{ ?x <{EX}p> ?x . ?x <{EX}d> ?v FILTER(?v > {a}) }}",
    "SELECT DISTINCT ?z ?x {{ ?x <{EX}p> ?y . ?z <{EX}p> ?y . ?z <{EX}d> ?v FILTER(?v <= {b}) }}",
    # A first template that is one comparison of each kind (members ruled out at once).
    "SELECT * {{ ?x <{EX}p> ?y . ?y <{EX}d> ?v FILTER(?v >= {a}) }}",
    "SELECT ?x {{ ?x <{EX}d> ?v FILTER(?v != {a}) }}",
    "SELECT DISTINCT ?y {{ ?x <{EX}p> ?y . ?y <{EX}d> ?v FILTER(?v < {b}) }}",
    # A comparison first, then a string test (the first's bounds must outlive the second)
    'SELECT * {{ ?x <{EX}d> ?v . ?x <{EX}s> ?t FILTER(?v > {a} && contains(?t, "{w}")) }}',
    'SELECT ?x {{ ?x <{EX}d> ?v . ?x <{EX}s> ?t FILTER(?v <= {b}) FILTER(strstarts(?t, "{w}")) }}',
    # More than one constant end: the constants stay in the family's join (a binding
    # table with constants), types on two nodes, a constant subject, a typed literal.
    "SELECT * {{ ?x a <{c}> . ?x <{EX}p> ?y . ?y a <{c}> . ?y <{EX}d> ?v FILTER(?v < {b}) }}",
    "SELECT DISTINCT ?y {{ <{n}> <{EX}p> ?y . ?y a <{c}> }}",
    "SELECT * {{ ?x <{EX}d> {a} . ?x <{EX}p> ?y . ?y a <{c}> }}",
    "ASK {{ ?x a <{c}> . ?x <{EX}p> ?x . ?x <{EX}p> <{n}> }}",
    "SELECT ?x {{ ?x <{EX}p> <{n}> . ?x a <{c}> . ?x a <{c}> }}",
    # Decimal constants (compared in millionths).
    "SELECT * {{ ?x a <{c}> . ?x <{EX}d> ?v FILTER(?v >= {a}.5 && ?v < {b}.25) }}",
    "SELECT ?x {{ ?x <{EX}d> ?v FILTER(?v = 2.5 || ?v > {b}.000001) }}",
    # REGEX (its patterns tried on each value).
    'SELECT * {{ ?x a <{c}> . ?x <{EX}s> ?t FILTER(regex(?t, "^{w}")) }}',
    'SELECT ?x {{ ?x <{EX}s> ?t FILTER(regex(?t, "{w}|elm+", "i") || regex(?t, "{w}$")) }}',
    "SELECT DISTINCT ?x {{ ?x <{EX}s> ?t . ?x <{EX}d> ?v "
    'FILTER(regex(?t, "{w}", "i") && ?v < {b}) }}',
]


@pytest.fixture(autouse=True, scope="module")
def _every_family_in_the_compiled_pass() -> Iterator[None]:
    """These examples have a few dozen candidates: fewer than ``MIN_GROUPED``, which would
    send them all to one-by-one verification. Here the compiled pass takes every family."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(count, "MIN_GROUPED", 1)
        yield


# Integers mostly (what the compiled pass covers); a decimal now and then sends a family
# to one-by-one verification.
numbers = st.one_of(
    st.sampled_from(VALUES[:6]), st.sampled_from(VALUES[:8]), st.sampled_from(DECIMALS)
)
triples = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(NODES), st.just(RDF_TYPE), st.sampled_from(CLASSES)),
        st.tuples(st.sampled_from(NODES), st.just(EX + "p"), st.sampled_from(NODES)),
        st.tuples(st.sampled_from(NODES), st.just(EX + "d"), numbers),
        st.tuples(st.sampled_from(NODES), st.just(EX + "s"), st.sampled_from(VALUES[8:])),
    ),
    min_size=1,
    max_size=14,
)
# A few forms per example, many members each: most candidates are counted in families.
subscriptions = st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=3, unique=True).flatmap(
    lambda forms: st.lists(
        st.tuples(
            st.sampled_from(forms),
            st.sampled_from(CLASSES),
            st.sampled_from(NODES),
            st.integers(0, 5),
            st.integers(0, 3),
            st.sampled_from(["red", "ash", "oak", "e", "", "m", "red oak", "k elm", "RED", "O."]),
        ),
        min_size=6,
        max_size=40,
    )
)
#: Ids as JSON must escape: quotes, backslashes, control and non-ASCII characters.
ids = st.text(min_size=1, max_size=6)


def _reference(event: list[tuple[str, str, object]], texts: dict[str, str]) -> dict[str, int]:
    """Each subscription's solution count by pyoxigraph alone over the event, if any."""
    store = ox.Store()
    store.extend([ox.Quad(*(to_oxigraph(t) for t in triple)) for triple in event])
    found = {name: _size(store.query(text)) for name, text in texts.items()}
    return {name: n for name, n in found.items() if n}


def _registered(
    subs: list[tuple[str, str, str, int, int, str]],
    names: list[str],
    matcher: SemanticMatcher | None = None,
) -> tuple[dict[str, str], SemanticMatcher]:
    """The drawn subscriptions' texts by name, registered in ``matcher`` (a new one)."""
    texts = {
        name: template.format(c=c, n=n, a=a, b=a + b, w=w, EX=EX)
        for name, (template, c, n, a, b, w) in zip(names, subs, strict=False)
    }
    if matcher is None:
        matcher = SemanticMatcher()
    for name, text in texts.items():
        matcher.add(Subscription(name, "semantic", text))
    return texts, matcher


def _matcher_of(texts: dict[str, str]) -> SemanticMatcher:
    """A matcher with ``texts`` registered by name."""
    matcher = SemanticMatcher()
    for name, text in texts.items():
        matcher.add(Subscription(name, "semantic", text))
    return matcher


def _line(event_id: str, counts: dict[str, int]) -> str:
    """The output line of an event with these counts, as ``result_line`` states it."""
    ordered = sorted(counts)
    return json.dumps(
        {"event": event_id, "matches": ordered, "solutions": {i: counts[i] for i in ordered}}
    )


def _size(result: object) -> int:
    if isinstance(result, ox.QueryBoolean):
        return 1 if result else 0
    return sum(1 for _ in result)  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subscriptions, triples, st.lists(ids, min_size=40, max_size=40, unique=True))
def test_family_counts_and_lines_equal_the_reference_engine(subs, event, names) -> None:
    texts, matcher = _registered(subs, names)
    e = Event("e", tuple(dict.fromkeys(event)))
    context = MatchContext(e)
    expected = _reference(list(e.triples), texts)
    assert matcher.count_batch([context]) == [expected]
    assert matcher.result_lines([context]) == [_line("e", expected)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    subscriptions,
    st.lists(triples, min_size=2, max_size=5),
    st.lists(ids, min_size=40, max_size=40, unique=True),
)
def test_each_line_of_a_batch_is_its_own_events_answer(subs, events, names) -> None:
    """``result_lines`` takes a batch one step at a time (every event's closure, then
    every counter filtering, then every families' pass, ...): each event's line is still
    the reference engine's over that event alone, whatever the batch's other events hold
    (their strings' needles, their terms' numbers); also when the candidates it may hold
    between steps (``STAGED_CANDIDATES``) send the events through in smaller groups."""
    texts, matcher = _registered(subs, names)
    batch = [Event(f"e{i}", tuple(dict.fromkeys(t))) for i, t in enumerate(events)]
    expected_lines = [_line(e.id, _reference(list(e.triples), texts)) for e in batch]
    assert matcher.result_lines([MatchContext(e) for e in batch]) == expected_lines
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(count, "STAGED_CANDIDATES", 2)
        assert matcher.result_lines([MatchContext(e) for e in batch]) == expected_lines


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subscriptions, triples, st.lists(ids, min_size=40, max_size=40, unique=True))
def test_matches_found_through_the_families_equal_the_reference_engine(subs, event, names) -> None:
    """``match`` (the broker's path: solutions kept) picks the shapes to verify with the
    families' compiled pass; its matches and counts are the reference engine's, each with
    as many solutions as the limit allows."""
    texts, matcher = _registered(subs, names, SemanticMatcher(solution_limit=2))
    e = Event("e", tuple(dict.fromkeys(event)))
    expected = _reference(list(e.triples), texts)
    (matches,) = matcher.match_batch([MatchContext(e)])
    assert [m.subscription for m in matches] == sorted(expected)
    assert {m.subscription: m.count for m in matches} == expected
    assert all(len(m.solutions) == min(m.count, 2) for m in matches)


@pytest.mark.parametrize("op", [">", ">=", "<", "<=", "!="])
def test_a_string_test_after_a_comparison_leaves_the_comparisons_bounds_alone(op: str) -> None:
    """Members whose first template is one comparison are ruled out by the rows' least
    and greatest values; a later string test of each member (looked up among the needles
    found) must not change those bounds for the members after it."""
    triples = (
        (f"{EX}n0", f"{EX}d", Literal("50", XSD + "integer")),
        (f"{EX}n0", f"{EX}s", Literal("red oak")),
        (f"{EX}n1", f"{EX}d", Literal("7", XSD + "integer")),
        (f"{EX}n1", f"{EX}s", Literal("ash elm")),
    )
    texts = {
        f"m{a:02d}{w}": f"SELECT * {{ ?x <{EX}d> ?v . ?x <{EX}s> ?t "
        f'FILTER(?v {op} {a}) FILTER(contains(?t, "{w}")) }}'
        for a in (0, 5, 7, 20, 49, 50, 60)
        for w in ("red", "oak", "elm", "blue")
    }
    expected = _reference(list(triples), texts)
    assert _matcher_of(texts).count_batch([MatchContext(Event("e", triples))]) == [expected]
    assert len(expected) > 5


def test_string_families_with_more_needles_than_the_value_has_pieces() -> None:
    """A family with more members than its value has substrings answers them all by
    looking the value's pieces up (the other way round, needle by needle, below): both
    agree with the reference engine, for each string function."""
    value = "red oak"
    pieces = sorted({value[i:j] for i in range(len(value) + 1) for j in range(i, 9)})
    needles = [*pieces, "oak red", "reds", "k o", "Red", "oakk", "é"]
    texts = {
        f"{fn}-{i}": f'SELECT DISTINCT ?x {{ ?x <{EX}s> ?t FILTER({fn}(?t, "{needle}")) }}'
        for fn in ("contains", "strstarts", "strends")
        for i, needle in enumerate(needles)
    }
    for members in (len(needles), 3):  # the pieces looked up, then needles tried one by one
        triples = ((f"{EX}n0", f"{EX}s", Literal(value)), (f"{EX}n1", f"{EX}s", Literal("")))
        chosen = {n: t for n, t in texts.items() if int(n.split("-")[1]) < members}
        expected = _reference(list(triples), chosen)
        few = _matcher_of(chosen)
        assert few.count_batch([MatchContext(Event("e", triples))]) == [expected]
    assert len(expected) > 0


@pytest.mark.parametrize("fn", ["contains", "strstarts", "strends"])
def test_string_families_whose_members_share_needles(fn: str) -> None:
    """Members sharing a few needles: each distinct needle is tried once on the value
    (the family's own needles when the candidates are more, the candidates' when fewer:
    only some members' constant node is in the event); both agree with the reference."""
    needles = ["red", "oak", "d o", "red oak", "ak", "x"]
    shared = {
        f"a{i}": f'SELECT ?x {{ ?x <{EX}s> ?t FILTER({fn}(?t, "{needles[i % 6]}")) }}'
        for i in range(40)
    }
    anchored = {
        f"b{i}": f"SELECT ?x {{ ?x <{EX}s> ?t . ?x <{EX}k> <{EX}c{i}> "
        f'FILTER({fn}(?t, "{needles[i % 6]}")) }}'
        for i in range(40)
    }
    triples = (
        (f"{EX}n0", f"{EX}s", Literal("red oak")),
        *((f"{EX}n0", f"{EX}k", f"{EX}c{i}") for i in (1, 3, 8)),
    )
    for texts in (shared, anchored):
        expected = _reference(list(triples), texts)
        matcher = SemanticMatcher()
        for name, text in texts.items():
            matcher.add(Subscription(name, "semantic", text))
        assert matcher.count_batch([MatchContext(Event("e", triples))]) == [expected]
        assert expected


@pytest.mark.parametrize("steps", [0, 3, 12])
def test_strings_too_long_to_cut_or_try_are_verified_one_by_one(monkeypatch, steps) -> None:
    """Past ``STRING_STEPS`` (pieces of the value and needles of the index alike) a
    value's needles are unknown and its families' members are verified one by one: the
    answers stay the reference engine's whichever way each value was answered."""
    monkeypatch.setattr(familyjoin, "STRING_STEPS", steps)
    needles = ["red", "oak", "d o", "red oak", "ak", "x", "", "r"]
    texts = {
        f"{fn}{i}": f'SELECT ?x {{ ?x <{EX}s> ?t FILTER({fn}(?t, "{needle}")) }}'
        for fn in ("contains", "strstarts", "strends")
        for i, needle in enumerate(needles)
    }
    triples = (
        (f"{EX}n0", f"{EX}s", Literal("red oak")),
        (f"{EX}n1", f"{EX}s", Literal("ak")),
        (f"{EX}n2", f"{EX}s", Literal("")),
    )
    matcher = SemanticMatcher()
    for name, text in texts.items():
        matcher.add(Subscription(name, "semantic", text))
    expected = _reference(list(triples), texts)
    assert matcher.count_batch([MatchContext(Event("e", triples))]) == [expected]
    assert len(expected) > 10


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subscriptions, triples, st.lists(ids, min_size=40, max_size=40, unique=True))
def test_families_whose_join_passes_the_budget_are_verified_one_by_one(subs, event, names) -> None:
    """A join over the step budget leaves its runs to verification one by one: with no
    budget for the compiled joins at all, every answer is still the reference engine's."""
    texts, matcher = _registered(subs, names)
    e = Event("e", tuple(dict.fromkeys(event)))
    expected = _reference(list(e.triples), texts)

    def no_budget(index, pairs, run_fam, bounds, member_cols, budget):  # type: ignore[no-untyped-def]
        found, left = familyjoin.count_runs(index, pairs, run_fam, bounds, member_cols, 0)
        for q in np.flatnonzero(~left):  # a join under no budget can only have no rows
            assert not found[bounds[q] : bounds[q + 1]].any()
        return found, left

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(count, "count_runs", no_budget)
        assert matcher.count_batch([MatchContext(e)]) == [expected]


def test_a_value_seen_before_is_searched_again_for_needles_registered_since() -> None:
    """The needles found in a value are kept for later events (values repeat), until a
    subscription brings a needle not seen before: then it is found too."""
    texts = {
        f"s{i}": f'SELECT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{needle}")) }}'
        for i, needle in enumerate(["red", "oak", "x"])
    }
    triples = ((f"{EX}n0", f"{EX}s", Literal("red oak")),)
    matcher = SemanticMatcher()
    for name, text in texts.items():
        matcher.add(Subscription(name, "semantic", text))
    event = MatchContext(Event("e", triples))
    assert matcher.count_batch([event]) == [_reference(list(triples), texts)]
    for name, needle in (("late", "d o"), ("again", "red")):
        texts[name] = f'SELECT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{needle}")) }}'
        matcher.add(Subscription(name, "semantic", texts[name]))
        matcher.remove("s0")
        del texts["s0"]
        texts["s0"] = f'SELECT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{needle}")) }}'
        matcher.add(Subscription("s0", "semantic", texts["s0"]))
        expected = _reference(list(triples), texts)
        assert matcher.count_batch([MatchContext(Event("e", triples))]) == [expected]
        assert name in expected


def test_a_term_seen_before_is_read_again_once_a_subscription_names_it() -> None:
    """What the families' pass read of an event's terms is kept for later events (nodes
    repeat), until a subscription names a new constant: a node that was none is one now."""
    template = "SELECT ?x {{ ?x <{EX}p> ?y . ?y <{EX}q> <{n}> }}"
    texts = {f"s{i}": template.format(EX=EX, n=NODES[i]) for i in (2, 3)}
    p, q = f"{EX}p", f"{EX}q"
    triples = ((NODES[0], p, NODES[1]), (NODES[1], q, NODES[2]), (NODES[1], q, NODES[0]))
    matcher = SemanticMatcher()
    for name, text in texts.items():
        matcher.add(Subscription(name, "semantic", text))
    assert matcher.count_batch([MatchContext(Event("e", triples))]) == [{"s2": 1}]
    texts["late"] = template.format(EX=EX, n=NODES[0])  # read above, as no constant
    matcher.add(Subscription("late", "semantic", texts["late"]))
    expected = _reference(list(triples), texts)
    assert expected == {"s2": 1, "late": 1}
    assert matcher.count_batch([MatchContext(Event("e", triples))]) == [expected]


def test_a_string_known_in_one_event_is_not_known_in_the_next_under_its_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Terms keep their numbers from event to event, and the needles found in a string are
    noted by number for its event alone: after a new constant renumbers the terms, a
    string whose needles are not known (past ``STRING_STEPS``) under the number an earlier
    event's string had is verified one by one, not read with the earlier one's needles."""
    words = [f"w{i}" for i in range(40)]
    texts = {
        f"s{i}": f'SELECT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{w}")) }}'
        for i, w in enumerate(words)
    }
    matcher = _matcher_of(texts)
    first = ((f"{EX}n0", f"{EX}s", Literal("w1 w2")),)
    assert matcher.count_batch([MatchContext(Event("e1", first))]) == [
        _reference(list(first), texts)
    ]
    texts["late"] = f"SELECT ?x {{ ?x <{EX}s> <{EX}new> }}"  # a new constant: renumbered
    matcher.add(Subscription("late", "semantic", texts["late"]))
    monkeypatch.setattr(familyjoin, "STRING_STEPS", 1)  # the next string's needles: unknown
    second = ((f"{EX}n0", f"{EX}s", Literal("w3 w4 w5")),)
    expected = _reference(list(second), texts)
    assert expected == {"s3": 1, "s4": 1, "s5": 1}
    assert matcher.count_batch([MatchContext(Event("e2", second))]) == [expected]


def test_warming_compiles_the_kernels_real_events_call() -> None:
    """What ``warm`` compiles (the broker's workers call it untimed) is what events call:
    matching families, strings and lines afterwards compiles no other signature, so no
    event's time budget pays for a compilation."""
    matcher = SemanticMatcher()
    matcher.warm()
    kernels = (
        family_join_runs,
        candidate_shapes,
        write_counts,
        write_shape_counts,
        run_inputs,
        scatter_counts,
    )
    warmed = [list(k.signatures) for k in kernels]  # type: ignore[attr-defined]
    for i, needle in enumerate(["red", "oak", "x"]):
        matcher.add(
            Subscription(
                f"s{i}",
                "semantic",
                f'SELECT ?x {{ ?x <{EX}s> ?t FILTER(contains(?t, "{needle}")) }}',
            )
        )
        matcher.add(
            Subscription(
                f"d{i}", "semantic", f"SELECT DISTINCT ?x {{ ?x <{EX}d> ?v FILTER(?v > {i}) }}"
            )
        )
    triples = (  # several terms: their facts are columns of a table, taken as rows
        (f"{EX}n0", f"{EX}s", Literal("red oak")),
        (f"{EX}n0", f"{EX}d", VALUES[3]),
        (f"{EX}n1", f"{EX}d", VALUES[1]),
    )
    (line,) = matcher.result_lines([MatchContext(Event("e", triples))])
    assert '"s0": 1' in line and '"d2": 1' in line
    assert [list(k.signatures) for k in kernels] == warmed  # type: ignore[attr-defined]
    assert all(warmed)


@pytest.mark.parametrize("max_solutions", [3, 100, 250])
def test_a_match_keeps_as_many_solutions_as_the_limits_allow(max_solutions: int) -> None:
    """A service started with ``--max-solutions N`` hands its matchers limits with that
    ``max_solutions``: a match keeps N solutions (the notification carries them; before,
    the matcher kept 100 whatever N was). The count is exact either way."""
    from semps.limits import Limits

    matcher = SemanticMatcher()
    matcher.limits = Limits(max_solutions=max_solutions)
    matcher.add(Subscription("s", "semantic", "SELECT ?x ?v { ?x <http://ex/v> ?v }"))
    triples = tuple(
        (f"http://ex/n{i}", "http://ex/v", Literal(str(i), XSD + "integer")) for i in range(300)
    )
    (match,) = matcher.match(MatchContext(Event("e", triples)))
    assert match.count == 300
    assert len(match.solutions) == max_solutions
