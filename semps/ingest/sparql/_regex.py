"""SPARQL ``REGEX`` on RE2: matching in time linear in the text, whatever the pattern.

Python's ``re`` backtracks: ``^(a+)+$`` against 37 a's and a ``!`` runs for hours, and a
subscriber chooses the pattern. RE2 (PyPI ``google-re2``) never backtracks, so it cannot do
what needs backtracking; those features are refused when a subscription registers
(:func:`compile_regex`, which the parser calls on a constant pattern), naming the feature:

- backreferences (``\\1``, ``(?P=name)``, ``\\k<name>``), lookahead and lookbehind
  (``(?=``, ``(?!``, ``(?<=``, ``(?<!``), atomic groups ``(?>``, conditionals ``(?(``,
  possessive quantifiers (``a*+``), comment groups ``(?#``.

RE2 runs in time linear in the text, times the size of the compiled pattern when its DFA
runs out of memory and it falls back to simulating the NFA; a pattern too large to compile
in RE2's default 8 MiB is refused (``bad regex: pattern too large - compile failed``).

The XPath flags (``fn:matches``) map to RE2: ``i`` case-insensitive, ``s`` dot matches
newlines, ``m`` ``^``/``$`` at line ends, ``q`` the pattern is a literal string, ``x``
whitespace outside character classes is removed. ``\\w``, ``\\d`` and ``\\s`` are rewritten
to their Unicode meaning, as Python's ``re`` has them (RE2's are ASCII); ``\\b`` and, inside
a character class, ``\\W`` and ``\\S`` stay ASCII. ``\\Z`` (Python's end of text) becomes RE2's
``\\z``. Without ``m``, ``$`` matches at the end of the text only (XPath; Python's ``re``
also matches before a final newline).
"""

from __future__ import annotations

import re
from functools import lru_cache

import re2

#: Python ``str.isspace()`` characters: RE2's ``\s`` is only ``[\t\n\f\r ]``.
_SPACE = r"\s\v\x1c-\x1f\x85\p{Z}"
_WORD = r"\p{L}\p{N}_"
_OUTSIDE = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "Z": r"\z",
}
_INSIDE = {"w": _WORD, "d": r"\p{Nd}", "D": r"\P{Nd}", "s": _SPACE}

_GROUPS = [
    ("(?=", "regex lookahead"),
    ("(?!", "regex lookahead"),
    ("(?<=", "regex lookbehind"),
    ("(?<!", "regex lookbehind"),
    ("(?>", "regex atomic group"),
    ("(?(", "regex conditional"),
    ("(?P=", "regex backreference"),
    ("(?#", "regex comment group"),
]
_QUANTIFIER_END = set("*+?}")


class RegexRefused(ValueError):
    """A pattern RE2 cannot run: ``construct`` names the feature, ``text`` shows it."""

    def __init__(self, construct: str, text: str) -> None:
        self.construct = construct
        self.text = text
        super().__init__(f"{construct} {text!r} is not supported in subscriptions")


class RegexError(ValueError):
    """A malformed pattern or flag."""


@lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str, *, capture: bool = False) -> re2._Regexp:
    """The RE2 program for a SPARQL ``REGEX(text, pattern, flags)`` (``capture``: with
    capture groups, for ``REPLACE``'s ``$1``).

    Raises:
        RegexRefused: the pattern uses a feature RE2 cannot run (names it).
        RegexError: the pattern or a flag is malformed.

    Example:
        >>> compile_regex("^(a+)+$", "").search("a" * 37 + "!") is None
        True
    """
    for flag in flags:
        if flag not in "smixq":
            msg = f"bad regex flag {flag!r}"
            raise RegexError(msg)
    options = re2.Options()
    options.log_errors = False
    # Only "does it match" is asked: without capture groups RE2 answers with its DFA, where
    # submatch tracking would take its NFA (time x program size: "(.*){100}" on 100 KB 0.5 s).
    options.never_capture = not capture
    if "q" in flags:
        options.literal = True
        options.case_sensitive = "i" not in flags
        return _compile(pattern, options)
    if "x" in flags:
        pattern = _strip_whitespace(pattern)
    inline = "".join(f for f in "ims" if f in flags)
    translated = _translate(pattern)
    return _compile(f"(?{inline}){translated}" if inline else translated, options)


def _compile(pattern: str, options: re2.Options) -> re2._Regexp:
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        msg = f"bad regex: {detail}"
        raise RegexError(msg) from None


_SPECIAL = re.compile(r"\\.|\[|\]|\(\?[=!>(#]|\(\?<[=!]|\(\?P=|[*+?}]\+", re.S)


def _translate(pattern: str) -> str:
    """Refuse what RE2 cannot do; rewrite ``\\w``, ``\\d``, ``\\s``, ``\\Z``.

    One pass over the pattern's escapes, brackets and group openers (``finditer``), so the
    work is linear in the pattern."""
    out: list[str] = []
    last = 0
    in_class = False
    class_start = -1
    for m in _SPECIAL.finditer(pattern):
        token = m.group()
        start = m.start()
        if in_class:
            if token == "]" and start > class_start:
                in_class = False
            elif token[0] == "\\" and token[1] in _INSIDE:
                out.append(pattern[last:start] + _INSIDE[token[1]])
                last = m.end()
            continue
        if token == "[":
            in_class = True
            # "[]" and "[^]" start a class whose first member is "]"
            class_start = m.end() + (pattern.startswith("^", m.end()))
            continue
        if token[0] == "\\":
            _check_escape(token, pattern, start)
            if token[1] in _OUTSIDE:
                out.append(pattern[last:start] + _OUTSIDE[token[1]])
                last = m.end()
        elif token[0] == "(":
            construct = dict(_GROUPS)[token]
            raise RegexRefused(construct, pattern[start : start + 12])
        elif token[-1] == "+" and len(token) == 2:
            raise RegexRefused("regex possessive quantifier", _around(pattern, m.end()))
    out.append(pattern[last:])
    return "".join(out)


def _check_escape(token: str, pattern: str, start: int) -> None:
    char = token[1]
    if char in "123456789" or (char == "k" and pattern.startswith("<", start + 2)):
        raise RegexRefused("regex backreference", pattern[start : start + 12].split(")")[0])


def _around(pattern: str, end: int) -> str:
    return pattern[max(0, end - 6) : end]


_CLASS_OR_SPACE = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]?|[ \t\n\r]+", re.S)


def _strip_whitespace(pattern: str) -> str:
    """The ``x`` flag: whitespace outside character classes is removed (XPath, not Python's
    verbose mode: ``#`` starts no comment)."""
    return _CLASS_OR_SPACE.sub(lambda m: "" if m.group()[0] in " \t\n\r" else m.group(), pattern)
