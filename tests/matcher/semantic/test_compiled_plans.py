"""Join plans kept by query structure: filling a kept plan in with another query's
constants and filters gives exactly the plan that query would get on its own."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from semps.ingest.sparql import parse_query
from semps.matcher.semantic import compiled as plans
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.compiled import _plan_components, join_order
from semps.matcher.semantic.matcher import renamed

EX = "http://ex/"
ENDS = ["?x", "?y", "?z", f"<{EX}a>", f"<{EX}b>"]
FILTERS = ["", "FILTER(?x != ?y)", "FILTER(?z > 1)", "FILTER(bound(?w))", "FILTER(?y = ?z)"]

pattern = st.tuples(st.sampled_from(ENDS), st.sampled_from("pq"), st.sampled_from(ENDS))


def query(patterns: list[tuple[str, str, str]], filters: list[str], head: str) -> str:
    body = " . ".join(f"{s} <{EX}{p}> {o}" for s, p, o in patterns)
    return f"{head} WHERE {{ {body} {' '.join(filters)} }}"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(pattern, min_size=1, max_size=5),
    st.lists(st.sampled_from(FILTERS), max_size=2),
    st.sampled_from(["SELECT *", "SELECT ?x", "SELECT DISTINCT ?y ?z", "ASK"]),
)
def test_a_kept_plan_filled_in_is_the_plan_of_the_query(patterns, filters, head) -> None:
    text = query(patterns, filters, head)
    compiled = compile_query("s", parse_query(text))
    projection = compiled.projection
    assert compiled.components == _plan_components(compiled.patterns, compiled.filters, projection)


def test_two_equal_patterns_keep_their_own_plan_steps() -> None:
    first = compile_query("a", parse_query(f"SELECT * {{ ?x <{EX}p> ?y . ?x <{EX}p> ?y }}"))
    second = compile_query("b", parse_query(f"SELECT * {{ ?x <{EX}p> ?y . ?x <{EX}q> ?y }}"))
    assert [step[0] for step in first.components[0].plan] == [EX + "p", EX + "p"]
    assert sorted(step[0] for step in second.components[0].plan) == [EX + "p", EX + "q"]


RENAMINGS = st.permutations(["?x", "?y", "?z", "?w"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(pattern, min_size=1, max_size=5),
    st.lists(st.sampled_from(FILTERS), max_size=2),
    st.sampled_from(["SELECT *", "SELECT ?x", "SELECT DISTINCT ?y ?z", "ASK"]),
    RENAMINGS,
)
def test_a_plan_kept_under_other_variable_names_is_the_plan_of_the_query(
    patterns, filters, head, names
) -> None:
    # The structure is planned twice (kept), then met with its variables renamed.
    text = query(patterns, filters, head)
    for _ in range(2):
        compile_query("s", parse_query(text))
    rename = dict(zip(["?x", "?y", "?z", "?w"], names, strict=True))
    renamed = re.sub(r"\?[wxyz]", lambda m: rename[m.group(0)], text)
    compiled = compile_query("r", parse_query(renamed))
    expected = _plan_components(compiled.patterns, compiled.filters, compiled.projection)
    assert compiled.components == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(pattern, min_size=1, max_size=12),
    st.lists(st.sampled_from(FILTERS), max_size=3),
)
def test_a_short_query_is_planned_as_the_heap_plans_it(patterns, filters) -> None:
    compiled = compile_query("s", parse_query(query(patterns, filters, "SELECT *")))
    short = join_order(compiled.patterns, compiled.filters)
    kept, plans.SHORT = plans.SHORT, 0  # every query through the heap
    try:
        assert join_order(compiled.patterns, compiled.filters) == short
    finally:
        plans.SHORT = kept


def test_a_text_registered_again_shares_its_compiled_form_under_its_own_id() -> None:
    for text in (
        f"SELECT ?y {{ ?x a <{EX}C> . ?x <{EX}p> ?y FILTER(?y > 3) }}",
        f"SELECT * {{ ?x <{EX}p> ?y OPTIONAL {{ ?y <{EX}q> ?z }} }}",
    ):
        compiled = compile_query("a", parse_query(text))
        assert renamed(compiled, "b") == dataclasses.replace(compiled, id="b")
