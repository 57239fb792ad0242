"""``REGEX`` tests of many patterns against one value (what the families' string pass runs)
answer as the general FILTER evaluation does, for every pattern and flag: the oracle is
:func:`~semps.ingest.sparql.filters.regex_holds` (literal, lang-less strings)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semps.ingest.sparql.filters import regex_holds
from semps.matcher.semantic.regextest import holds_all, value_test

# Letters that fold beyond ASCII (K, the Kelvin sign; s, the long s), metacharacters,
# anchors, a newline (for the m flag) and non-ASCII letters.
_CHARS = st.sampled_from(list("abAB ^$|.*()[]\\\nſKké") + ["\u212a", "É"])
_PATTERNS = st.lists(
    st.tuples(st.text(_CHARS, max_size=6), st.sampled_from(["", "i", "m", "s", "x", "q", "im"])),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(text=st.text(_CHARS, max_size=8), patterns=_PATTERNS)
def test_holds_all_agrees_with_the_filter_evaluation(
    text: str, patterns: list[tuple[str, str]]
) -> None:
    numbered = [(n, p, f) for n, (p, f) in enumerate(patterns)]
    expected = [n for n, p, f in numbered if regex_holds(text, p, f)]
    assert holds_all(text, numbered) == expected


def test_literal_alternatives_are_string_operations_with_the_same_answers() -> None:
    test = value_test("^red|oak$|fir", "")
    assert test is not None
    for text, expected in [("red x", True), ("x red", False), ("an oak", True), ("afir", True)]:
        assert test(text, text.encode()) is expected


def test_a_case_insensitive_literal_on_a_non_ascii_value_goes_to_the_regex_engine() -> None:
    # RE2 folds k with the Kelvin sign; an ASCII lower-casing would not.
    test = value_test("K", "i")
    assert test is not None
    assert test("\u212a", "\u212a".encode()) is regex_holds("\u212a", "K", "i") is True


def test_a_malformed_or_refused_pattern_is_false() -> None:
    assert value_test("(", "") is None
    assert value_test("a", "z") is None
    assert holds_all("a(", [(0, "(", ""), (1, "a", "z"), (2, "a", "")]) == [2]


def test_without_the_re2_wrappers_private_names_the_public_search_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fast path reads two private names of google-re2; a version without them falls
    back to the compiled pattern's public ``search``, with the same answers."""
    from semps.matcher.semantic import regextest

    monkeypatch.setattr(regextest, "_UNANCHORED", None)
    monkeypatch.setattr(regextest, "_TESTS", {})
    patterns = [(0, "a.b", ""), (1, "^K", "i"), (2, "b$", "m"), (3, "(", ""), (4, "é", "i")]
    for text in ["axb", "\u212aa", "ab\nc", "É", ""]:
        expected = [n for n, p, f in patterns if regex_holds(text, p, f)]
        assert holds_all(text, patterns) == expected
