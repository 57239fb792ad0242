"""Every subscription is hostile: its size, nesting and patterns are bounded by documented
limits, long operator chains evaluate without deep recursion, and REGEX runs on RE2 (linear
time) with what RE2 cannot do refused at registration."""

from __future__ import annotations

import pytest

from semps.errors import SubscriptionLimitExceeded, SubscriptionSyntaxError, UnsupportedQueryError
from semps.ingest.sparql import parse_query
from semps.limits import DEFAULT_LIMITS, Limits
from semps.terms import XSD, Literal

EX = "http://ex/"
ONE = Literal("1", XSD + "integer")


def filtered(expression: str) -> str:
    return f"SELECT ?x {{ ?x <{EX}p> ?y FILTER({expression}) }}"


def holds(expression: str, y: object) -> bool:
    (expr,) = parse_query(filtered(expression)).filters
    return expr.evaluate({"x": EX + "x", "y": y})  # type: ignore[dict-item]


# --- size -----------------------------------------------------------------------------------


def test_a_subscription_over_max_query_bytes_is_refused() -> None:
    text = filtered("?y = 1") + " " * 100
    with pytest.raises(SubscriptionLimitExceeded) as info:
        parse_query(text, limits=Limits(max_query_bytes=100))
    size = len(text)
    assert str(info.value) == (
        f"the subscription is {size} bytes, over the limit of 100 bytes (max_query_bytes)"
    )


def test_the_size_counts_utf8_bytes_not_characters() -> None:
    text = f'SELECT ?x {{ ?x <{EX}p> "{"é" * 40}" }}'
    assert len(text) < 100 < len(text.encode())
    with pytest.raises(SubscriptionLimitExceeded, match="max_query_bytes"):
        parse_query(text, limits=Limits(max_query_bytes=100))


def test_the_default_size_limit_refuses_a_159_kb_query_at_once() -> None:
    text = "SELECT * { " + " . ".join(f"?s{i} <{EX}p> ?o{i}" for i in range(5500)) + " }"
    assert len(text) > 150_000
    with pytest.raises(SubscriptionLimitExceeded, match=r"over the limit of 65536 bytes"):
        parse_query(text)


# --- nesting --------------------------------------------------------------------------------


def test_fifty_thousand_nested_parentheses_are_refused_not_a_recursion_error() -> None:
    text = filtered("(" * 50_000 + "?y" + ")" * 50_000)
    limits = Limits(max_query_bytes=1 << 20)
    with pytest.raises(SubscriptionLimitExceeded) as info:
        parse_query(text, limits=limits)
    assert str(info.value) == (
        "1:104: the subscription nests deeper than the limit of 64 levels (max_query_depth)"
    )
    assert (info.value.line, info.value.column) == (1, 104)


@pytest.mark.parametrize(
    "build",
    [
        lambda e: f"({e})",
        lambda e: f"!{e}",
        lambda e: f"-{e}",
        lambda e: f"str({e})",
        lambda e: f"(1 IN ({e}, 2))",
    ],
    ids=["parentheses", "not", "minus", "call", "in"],
)
def test_nesting_at_the_limit_parses_and_evaluates_one_deeper_is_refused(build: object) -> None:
    limits = Limits(max_query_depth=40)
    expr = "?y"
    depth = 0
    while True:
        deeper = build(expr)  # type: ignore[operator]
        try:
            parse_query(filtered(deeper), limits=limits)
        except SubscriptionLimitExceeded as exc:
            assert "nests deeper than the limit of 40 levels (max_query_depth)" in str(exc)
            break
        expr, depth = deeper, depth + 1
    assert depth >= 18  # each step nests one or two levels
    (compiled,) = parse_query(filtered(expr), limits=limits).filters
    compiled.evaluate({"y": ONE})  # no RecursionError


def test_nested_blank_node_brackets_count_as_nesting() -> None:
    text = f"SELECT ?x {{ ?x <{EX}p> " + f"[ <{EX}p> " * 10 + "1" + " ]" * 10 + " }"
    assert len(parse_query(text, limits=Limits(max_query_depth=10)).patterns) == 11
    with pytest.raises(SubscriptionLimitExceeded, match=r"^1:\d+: the subscription nests"):
        parse_query(text, limits=Limits(max_query_depth=9))


# --- patterns -------------------------------------------------------------------------------


def test_a_subscription_with_more_than_max_patterns_is_refused_at_the_extra_pattern() -> None:
    text = "SELECT * { " + " . ".join(f"?s{i} a ?c{i}" for i in range(1000)) + " }"
    with pytest.raises(SubscriptionLimitExceeded) as info:
        parse_query(text, limits=Limits(max_patterns=64))
    column = text.index("?c64") + 1
    assert str(info.value) == (
        f"1:{column}: the subscription has more than the limit of 64 triple patterns (max_patterns)"
    )


def test_the_default_pattern_limit() -> None:
    assert DEFAULT_LIMITS.max_patterns == 64
    body = " . ".join(f"?s{i} a ?c{i}" for i in range(64))
    assert len(parse_query(f"ASK {{ {body} }}").patterns) == 64
    with pytest.raises(SubscriptionLimitExceeded, match=r"limit of 64 triple patterns"):
        parse_query(f"ASK {{ {body} . ?x a ?y }}")


def test_patterns_from_lists_and_blank_nodes_count_too() -> None:
    text = f"SELECT * {{ ?x <{EX}p> 1, 2, 3 ; <{EX}q> [ <{EX}r> 4 ] }}"
    assert len(parse_query(text, limits=Limits(max_patterns=5)).patterns) == 5
    with pytest.raises(SubscriptionLimitExceeded, match="max_patterns"):
        parse_query(text, limits=Limits(max_patterns=4))


# --- long operator chains: no recursion proportional to their length ------------------------


def test_a_filter_of_500_or_terms_evaluates() -> None:
    terms = " || ".join(f"?y = {i}" for i in range(500))
    assert holds(terms, Literal("499", XSD + "integer"))
    assert not holds(terms, Literal("500", XSD + "integer"))


def test_a_filter_of_2000_and_terms_evaluates() -> None:
    terms = " && ".join(f"?y != {i}" for i in range(2, 2002))
    assert holds(terms, ONE)
    assert not holds(terms, Literal("7", XSD + "integer"))


def test_a_long_arithmetic_chain_evaluates_left_to_right() -> None:
    assert holds(" + ".join(["?y"] * 3000) + " = 3000", ONE)
    assert holds("10 - 2 - 3 = 5", ONE)
    assert holds("12 / 2 / 3 = 2", ONE)
    assert holds("2 + 3 * 4 - 6 / 2 = 11", ONE)


def test_or_and_keep_sparql_error_semantics_over_many_operands() -> None:
    # an unbound variable is an error: || is true if any operand is true, else an error
    assert holds("?unbound = 1 || ?y = 2 || ?y = 1", ONE)
    assert not holds("?unbound = 1 || ?y = 2 || ?y = 3", ONE)
    assert not holds("!(?unbound = 1 || ?y = 2 || ?y = 3)", ONE)  # error, not true
    # && is false if any operand is false, else an error
    assert not holds("?unbound = 1 && ?y = 2 && ?y = 1", ONE)
    assert holds("!(?unbound = 1 && ?y = 2 && ?y = 1)", ONE)
    assert not holds("!(?unbound = 1 && ?y = 1 && ?y = 1)", ONE)


# --- REGEX on RE2 ---------------------------------------------------------------------------


def test_the_catastrophic_backtracking_regex_simply_does_not_match() -> None:
    assert not holds('regex(?y, "^(a+)+$")', Literal("a" * 37 + "!"))
    assert holds('regex(?y, "^(a+)+$")', Literal("a" * 37))


def test_the_word_regex_simply_does_not_match() -> None:
    sentence = "Alice Smith works for department nine"
    assert not holds(r'regex(?y, "^(\\w+\\s?)*$")', Literal(sentence + "!"))
    assert holds(r'regex(?y, "^(\\w+\\s?)*$")', Literal(sentence))


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "expected"),
    [
        ("^a", "i", "Abc", True),
        ("^a", "", "Abc", False),
        ("a.c", "", "a\nc", False),
        ("a.c", "s", "a\nc", True),
        ("^b$", "", "a\nb\nc", False),
        ("^b$", "m", "a\nb\nc", True),
        ("a?+*.{}()", "q", "xa?+*.{}()y", True),
        ("a?+*.{}()", "q", "aaa", False),
        ("ABC", "qi", "xabcx", True),
        (" a b [ ] ", "x", "ab ", True),
        (" a b [ ] ", "x", "ab", False),
        (r"^\\w+$", "", "héllo", True),
        (r"^\\d$", "", "٣", True),
        (r"^\\s$", "", "\u00a0", True),
        (r"^[\\w-]+$", "", "wörld-3", True),
        (r"\\W", "", "wörld", False),
        (r"x\\Z", "", "ax", True),
        ("é", "i", "CAFÉ", True),
    ],
)
def test_regex_flags_and_classes(pattern: str, flags: str, text: str, expected: bool) -> None:
    flag_arg = f', "{flags}"' if flags else ""
    expression = f'regex(?y, "{pattern}"{flag_arg})'.replace("\n", "\\n")
    assert holds(expression, Literal(text)) is expected


@pytest.mark.parametrize(
    ("pattern", "construct", "shown"),
    [
        (r"(a)\\1", "regex backreference", r"'\\1'"),
        ("(?P<n>a)(?P=n)", "regex backreference", "'(?P=n)'"),
        (r"(?<n>a)\\k<n>", "regex backreference", r"'\\k<n>'"),
        ("(?=a)b", "regex lookahead", "'(?=a)b'"),
        ("a(?!b)", "regex lookahead", "'(?!b)'"),
        ("(?<=a)b", "regex lookbehind", "'(?<=a)b'"),
        ("(?<!a)b", "regex lookbehind", "'(?<!a)b'"),
        ("(?>a+)b", "regex atomic group", "'(?>a+)b'"),
        ("a++", "regex possessive quantifier", "'a++'"),
        ("(a|b)(?(1)c|d)", "regex conditional", "'(?(1)c|d)'"),
        ("(?#note)a", "regex comment group", "'(?#note)a'"),
    ],
)
def test_regex_features_re2_cannot_run_are_refused_at_registration(
    pattern: str, construct: str, shown: str
) -> None:
    with pytest.raises(UnsupportedQueryError) as info:
        parse_query(filtered(f'regex(?y, "{pattern}")'))
    assert info.value.construct == construct
    assert str(info.value) == (
        f"1:40: {construct} {shown} is not supported in subscriptions "
        "(REGEX runs on RE2, in time linear in the text)"
    )


def test_a_character_class_may_hold_what_would_be_refused_outside() -> None:
    assert holds(r'regex(?y, "^[*+?]+$")', Literal("*+?"))
    assert holds(r'regex(?y, "[(?=]")', Literal("="))


def test_malformed_constant_regexes_and_flags_are_syntax_errors() -> None:
    with pytest.raises(SubscriptionSyntaxError) as info:
        parse_query(filtered('regex(?y, "(a")'))
    assert str(info.value) == "1:40: bad regex: missing ): (a"
    with pytest.raises(SubscriptionSyntaxError) as info:
        parse_query(filtered('regex(?y, "a", "z")'))
    assert str(info.value) == "1:40: bad regex flag 'z'"


def test_a_pattern_from_a_variable_is_checked_when_evaluated_and_errors_are_false() -> None:
    (expr,) = parse_query(filtered("regex(str(?x), ?y)")).filters
    assert expr.evaluate({"x": EX + "aaa", "y": Literal("a+$")})
    assert not expr.evaluate({"x": EX + "aaa", "y": Literal("(a)\\1")})
    assert not expr.evaluate({"x": EX + "aaa", "y": Literal("(a")})


def test_a_projection_keeps_its_first_order_without_repeats() -> None:
    q = parse_query(f"SELECT ?y ?x ?y ?x {{ ?x <{EX}p> ?y }}")
    assert q.projection == ("y", "x")


def test_a_string_cast_drops_a_language_tag_as_str_does() -> None:
    """xsd:string("a"@en) is the simple literal "a" (rdflib keeps the tag; docs/sparql.md lists
    it among rdflib's departures)."""
    cast = f"<{XSD}string>(?y)"
    assert holds(f'lang({cast}) = ""', Literal("a", lang="en"))
    assert holds(f'{cast} = "a"', Literal("a", lang="en"))
    assert holds(f'{cast} = "a"', Literal("a"))


def test_a_prefix_at_most_max_prefix_characters_long_parses_a_longer_one_is_named() -> None:
    """The lexer looks for a prefix's ':' at most MAX_PREFIX characters ahead (so a
    colon-less run such as ``a.a.a...`` is not rescanned from each of its tokens); a longer
    prefix or bare word is refused with an error that says so, not a puzzling one."""
    from semps.ingest.sparql._lexer import MAX_PREFIX

    ok = "p" * MAX_PREFIX
    q = parse_query(f"PREFIX {ok}: <http://x/> SELECT * {{ ?s {ok}:name ?o }}")
    assert q.patterns[0].p == "http://x/name"
    long = "p" * (MAX_PREFIX + 1)
    for text in (
        f"PREFIX {long}: <http://x/> SELECT * {{ ?s <http://x/p> ?o }}",
        f"SELECT * {{ ?s {long}:name ?o }}",
    ):
        with pytest.raises(SubscriptionSyntaxError, match=f"at most {MAX_PREFIX} characters"):
            parse_query(text)


def test_a_long_run_of_names_and_dots_is_one_syntax_error() -> None:
    q = "SELECT * { ?x ?p " + "a." * 32_000 + "a }"
    with pytest.raises(SubscriptionSyntaxError, match="expected"):
        parse_query(q)
