"""``REGEX`` over plain strings, many patterns against one value: each pattern's RE2
program asked directly over the value's UTF-8 bytes, encoded once.

:func:`~semps.ingest.sparql.filters.regex_holds` wraps the value and pattern in literals,
looks the compiled program up and lets the RE2 wrapper convert the string and its offsets
on every call (about 10 us a test); a family's string pass tries every pattern of the
index on each new value of an event (hundreds of tests an event on users' subscriptions).
Here the same program (:func:`~semps.ingest.sparql.compile_regex`, so the same
translation, flags and refusals) answers "is there a match" over bytes the value was
encoded to once: RE2 searches bytes and strings alike, so the answers are the same, and a
pattern the general evaluation refuses or finds malformed is false here as there (an
error is false where the callers use it: conjunctions and disjunctions of templates).
"""

from __future__ import annotations

from collections.abc import Callable

import re2

from semps.ingest.sparql import compile_regex
from semps.ingest.sparql.filters import regex_holds

#: A test over a value's UTF-8 bytes: True when the pattern matches somewhere in it.
BytesTest = Callable[[bytes], bool]

_UNANCHORED = re2._Anchor.UNANCHORED  # noqa: SLF001  (the wrapper's own constant)
_NO_MATCH = (-1, -1)

#: Tests by (pattern, flags), ``None`` for a pattern that is an error (always false).
#: Bounded: cleared when full.
_TESTS: dict[tuple[str, str], BytesTest | None] = {}
_TESTS_SIZE = 16384


def bytes_test(pattern: str, flags: str) -> BytesTest | None:
    """The test of ``REGEX(value, pattern, flags)`` over a value's UTF-8 bytes, or
    ``None`` when the pattern or its flags are an evaluation error (malformed, refused).

    Example:
        >>> bytes_test("^RED", "i")("red oak".encode()), bytes_test("(", "") is None
        (True, True)
    """
    key = (pattern, flags)
    if key in _TESTS:
        return _TESTS[key]
    test = _test_of(pattern, flags)
    if len(_TESTS) >= _TESTS_SIZE:
        _TESTS.clear()
    _TESTS[key] = test
    return test


def _test_of(pattern: str, flags: str) -> BytesTest | None:
    try:
        compiled = compile_regex(pattern, flags)
    except ValueError:
        return None
    match = compiled._regexp.Match  # noqa: SLF001  (the program itself, no conversions)

    def test(data: bytes) -> bool:
        return bool(match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH)

    return test


def holds_all(text: str, patterns: list[tuple[int, str, str]]) -> list[int]:
    """The numbers of the ``(number, pattern, flags)`` whose ``REGEX`` holds of the plain
    string ``text`` (as :func:`~semps.ingest.sparql.filters.regex_holds` has it)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # (a lone surrogate): the general evaluation decides
        return [n for n, pattern, flags in patterns if regex_holds(text, pattern, flags)]
    out = []
    for n, pattern, flags in patterns:
        test = bytes_test(pattern, flags)
        if test is not None and test(data):
            out.append(n)
    return out
