"""``REGEX`` over plain strings, many patterns against one value: literal alternatives as
string operations, other patterns by their RE2 program asked directly over the value's
UTF-8 bytes, encoded once.

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

#: A test of one value, given as a string and as its UTF-8 bytes: True when the pattern
#: matches somewhere in it.
ValueTest = Callable[[str, bytes], bool]

#: The wrapper's own constant, and below its program's ``Match``: private names of
#: google-re2, so a version without them falls back to the public ``search``.
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_NO_MATCH = (-1, -1)
#: What is not a literal character in a pattern (RE2's syntax, and XPath's).
_META = frozenset("\\.+*?()|[]{}^$")

#: Tests by (pattern, flags), ``None`` for a pattern that is an error (always false).
#: Bounded: cleared when full.
_TESTS: dict[tuple[str, str], ValueTest | None] = {}
_TESTS_SIZE = 16384


def value_test(pattern: str, flags: str) -> ValueTest | None:
    """The test of ``REGEX(value, pattern, flags)``, or ``None`` when the pattern or its
    flags are an evaluation error (malformed, refused). Alternatives of literal strings,
    each maybe anchored (``^`` ``$``), with no flag or ``i`` are tested as string
    operations (with ``i``, on ASCII values only: there both engines fold ASCII letters
    alone); everything else by the RE2 program over the bytes.

    Example:
        >>> test = value_test("^RED|oak$", "i")
        >>> test("red fir", b"red fir"), test("fir red", b"fir red"), value_test("(", "")
        (True, False, None)
    """
    key = (pattern, flags)
    if key in _TESTS:
        return _TESTS[key]
    test = _test_of(pattern, flags)
    if len(_TESTS) >= _TESTS_SIZE:
        _TESTS.clear()
    _TESTS[key] = test
    return test


def _test_of(pattern: str, flags: str) -> ValueTest | None:
    try:
        compiled = compile_regex(pattern, flags)
    except ValueError:
        return None
    match = getattr(getattr(compiled, "_regexp", None), "Match", None)
    if match is None or _UNANCHORED is None:

        def program(text: str, data: bytes) -> bool:
            return compiled.search(text) is not None

    else:

        def program(text: str, data: bytes) -> bool:
            return bool(match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH)

    literal = _literal_test(pattern, flags)
    if literal is None:
        return program
    if not flags:
        return literal

    def folded(text: str, data: bytes) -> bool:
        if text.isascii():
            return literal(text.lower(), data)
        return program(text, data)

    return folded


def _literal_test(pattern: str, flags: str) -> ValueTest | None:
    """The string operations a pattern of literal alternatives amounts to (lower-cased
    with the ``i`` flag, for lower-cased ASCII values), or ``None``."""
    if flags not in ("", "i") or (flags and not pattern.isascii()):
        return None
    if flags:
        pattern = pattern.lower()
    alternatives = []
    for alt in pattern.split("|"):
        start = alt.startswith("^")
        end = alt.endswith("$") and len(alt) > start
        body = alt[int(start) : len(alt) - int(end)]
        if any(c in _META for c in body):
            return None
        alternatives.append((start, end, body))

    def test(text: str, data: bytes) -> bool:
        for start, end, body in alternatives:
            if start and end:
                if text == body:
                    return True
            elif start:
                if text.startswith(body):
                    return True
            elif end:
                if text.endswith(body):
                    return True
            elif body in text:
                return True
        return False

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
        test = value_test(pattern, flags)
        if test is not None and test(text, data):
            out.append(n)
    return out
