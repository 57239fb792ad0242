"""Parsing by shape: a subscription built from the template of its shape (the same tokens
but for some constants) is exactly what parsing it gives, errors included."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import WORKLOADS

from semps.errors import SempsError, SubscriptionLimitExceeded, SubscriptionSyntaxError
from semps.ingest.sparql import _shapes, parse_query, parser
from semps.ingest.sparql._lexer import tokenize
from semps.ingest.sparql._shapes import Template, shape_of
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import XSD

QUERIES = sorted(WORKLOADS.glob("*/subscriptions/*.rq")) + sorted(
    (WORKLOADS / "w3c-sparql").rglob("*.rq")
)
_IRIS = ["<http://ex/a>", "<http://ex/b#c>", "<urn:x>", "<rel>", "<#frag>", "<http://ex/a>"]
_NUMBERS = {
    "INTEGER": ["0", "7", "0042", "123456789012345678901234567890"],
    "DECIMAL": ["0.5", ".25", "10.0"],
    "DOUBLE": ["1e3", "2.5E-2", ".5e1"],
}
_STRINGS = ['""', '"red"', "'gold'", '"two words"', '"<http://ex/a>"', '"7"']


def _reference(text: str, limits: Limits = DEFAULT_LIMITS) -> object:
    """What the parser alone makes of ``text`` (no shapes): the query, or the error's
    type and message."""
    try:
        limits.check_query_size(text)
        return parser._parse_tokens(tokenize(text), None, limits)
    except SempsError as exc:
        return (type(exc), str(exc))


def _ours(text: str, limits: Limits = DEFAULT_LIMITS) -> object:
    try:
        return parse_query(text, limits=limits)
    except SempsError as exc:
        return (type(exc), str(exc))


def _variants(text: str, rng: random.Random, count: int) -> Iterator[str]:
    """``text`` with its constants (its shape's slots) replaced by others of their kind,
    some of them equal to one another or to other constants of the query."""
    tokens = tokenize(text)
    shape = shape_of(tokens)
    if shape is None or not shape[1]:
        return
    slots = shape[1]
    own = [tokens[i].text for i in slots]
    for _ in range(count):
        texts = [t.text for t in tokens[:-1]]
        for i in slots:
            kind = tokens[i].kind
            pool = _IRIS if kind == "IRIREF" else _STRINGS if kind == "STRING" else _NUMBERS[kind]
            same_kind = [t for t, j in zip(own, slots, strict=True) if tokens[j].kind == kind]
            texts[i] = rng.choice(pool + same_kind)
        yield " ".join(texts)


@pytest.fixture(autouse=True)
def _fresh_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    shapes = _shapes.Shapes(DEFAULT_LIMITS)
    monkeypatch.setattr(parser, "_SHAPES", shapes)
    monkeypatch.setattr(parser, "_SHAPES_BY_LIMITS", {DEFAULT_LIMITS: shapes})


def _bound(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the queries built from templates (one entry each)."""
    calls: list[int] = []
    bind = Template.bind

    def counted(self: Template, texts: list[str]) -> object:
        calls.append(1)
        return bind(self, texts)

    monkeypatch.setattr(Template, "bind", counted)
    return calls


def test_every_variant_of_the_workloads_and_w3c_queries_parses_as_the_parser_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bound = _bound(monkeypatch)
    rng = random.Random(13)
    checked = 0
    for path in QUERIES:
        text = path.read_text(encoding="utf-8", errors="replace")
        if isinstance(_reference(text), tuple):
            continue  # refused queries: their shapes never get a template
        for variant in [text, *_variants(text, rng, 6)]:
            assert _ours(variant) == _reference(variant), (path, variant)
            checked += 1
    assert checked > 1000
    assert len(bound) > 500  # templates were used, not only the parser


def test_a_relative_iri_in_a_template_is_refused_where_the_parser_refuses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bound = _bound(monkeypatch)
    for k in range(3):
        parse_query(f"SELECT * {{ ?x <http://ex/p{k}> ?y }}")
    error = _ours("SELECT * {  ?x <p9> ?y }")
    assert error == (SubscriptionSyntaxError, "1:16: relative IRI <p9> without a BASE")
    # bound: the second text (checking the template), the third, the one above (fell back)
    assert len(bound) == 3


def test_constants_the_parser_reads_are_part_of_the_shape() -> None:
    """A function's IRI, a datatype, a prefix's IRI, a signed number, a string with a
    language tag or escapes, a REGEX's strings: never slots."""
    never = [
        f"SELECT * {{ ?x <http://ex/p> ?v FILTER(<{XSD}integer>(?v) > ?w) }}",
        f'SELECT * {{ ?x <http://ex/p> "1"^^<{XSD}integer> }}',
        "PREFIX ex: <http://ex/> SELECT * { ?x <http://ex/p> ex:o }",
        "SELECT * { ?x <http://ex/p> ?v FILTER(?v > -5) }",
        'SELECT * { ?x <http://ex/p> "chat"@fr }',
        'SELECT * { ?x <http://ex/p> "a\\tb" }',
        'SELECT * { ?x <http://ex/p> ?v FILTER(regex(?v, "a+")) }',
    ]
    for text in never:
        tokens = tokenize(text)
        shape = shape_of(tokens)
        assert shape is not None
        slot_texts = [tokens[i].text for i in shape[1]]
        assert slot_texts == ["<http://ex/p>"], text
    assert shape_of(tokenize("BASE <http://ex/> SELECT * { ?x <p> ?y }")) is None


def test_a_shape_seen_under_other_limits_is_checked_against_the_new_ones() -> None:
    for k in range(3):
        parse_query(f"SELECT * {{ ?x <http://ex/p> ?y . ?y <http://ex/q{k}> ?z }}")
    tight = Limits(max_patterns=1)
    text = "SELECT * { ?x <http://ex/p> ?y . ?y <http://ex/q9> ?z }"
    error = _ours(text, tight)
    assert error == _reference(text, tight)
    assert error[0] is SubscriptionLimitExceeded  # type: ignore[index]


def test_parses_under_other_limits_keep_the_templates_of_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bound = _bound(monkeypatch)
    other = Limits(max_query_depth=8)
    for k in range(3):
        parse_query(f"SELECT * {{ ?x <http://ex/p{k}> ?y }}")
        parse_query(f"SELECT * {{ ?x <http://ex/p{k}> ?y }}", limits=other)
    assert len(bound) == 4  # per limits: the second text (the check) and the third


def test_a_base_resolves_relative_iris_as_before() -> None:
    for k in range(3):
        parse_query(f"SELECT * {{ ?x <http://ex/p{k}> ?y }}")
    query = parse_query("SELECT * { ?x <p7> ?y }", base="http://ex/")
    assert query.patterns[0].p == "http://ex/p7"


def test_one_filter_written_twice_stays_two_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    bound = _bound(monkeypatch)
    for k in range(3):
        query = parse_query(f"SELECT * {{ ?x <http://ex/p> ?v FILTER(?v > {k}) FILTER(?v > {k}) }}")
    assert len(bound) == 2  # the second text (checking the template) and the third
    first, second = query.filters
    assert first == second and first is not second


_TEMPLATES = [
    "SELECT * WHERE {{ ?x a {0} . ?x {1} ?v FILTER(?v >= {2} && ?v < {3}) }}",
    "SELECT DISTINCT ?x WHERE {{ ?x {0} ?y . ?y {1} {0} }}",
    "ASK {{ ?x {0} {4} ; {1} ?s FILTER(contains(?s, {4})) }}",
    "SELECT ?y {{ {0} {1} ?y FILTER(?y != {2} || ?y = {3}) }}",
]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(_TEMPLATES),
    st.lists(st.sampled_from(_IRIS), min_size=2, max_size=2),
    st.lists(st.sampled_from(_NUMBERS["INTEGER"] + _NUMBERS["DECIMAL"]), min_size=2, max_size=2),
    st.sampled_from(_STRINGS),
)
def test_templated_subscriptions_parse_as_the_parser_says(
    template: str, iris: list[str], numbers: list[str], string: str
) -> None:
    text = template.format(*iris, *numbers, string)
    assert _ours(text) == _reference(text)


def test_shapes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shapes, "MAX_SHAPES", 5)
    for k in range(12):
        parse_query(f"SELECT * {{ ?x <http://ex/p> ?y{k} }}")
    assert len(parser._SHAPES.found) <= 5
    long = "SELECT * { " + " . ".join(f"?x <http://ex/p> ?y{k}" for k in range(40)) + " }"
    assert shape_of(tokenize(long)) is None  # over MAX_TOKENS: parsed every time
    wide = f"PREFIX ex: <http://ex/> SELECT * {{ ?x ex:{'a' * 3000} ?y }}"
    assert shape_of(tokenize(wide)) is None  # over MAX_SHAPE_CHARS


def test_long_filter_constants_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shapes, "_EXPRESSIONS", {})
    for k in range(4):
        word = "w" * (300 + k)
        query = parse_query(f'SELECT * {{ ?x <http://ex/p> ?s FILTER(contains(?s, "{word}")) }}')
        assert query.filters[0].ast[2][1][1].lexical == word  # type: ignore[attr-defined]
    assert not _shapes._EXPRESSIONS
    for k in range(4):
        parse_query(f'SELECT * {{ ?x <http://ex/p> ?s FILTER(contains(?s, "w{k}")) }}')
    assert len(_shapes._EXPRESSIONS) == 4  # (the shape has its template since the loop above)
