"""Tokenizer for the SPARQL-like subscription language."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

from semps.errors import SubscriptionSyntaxError

_PN_CHARS_BASE = (
    r"A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF"
    r"\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD"
)
_PN_CHARS = _PN_CHARS_BASE + r"_0-9\-\u00B7\u0300-\u036F\u203F-\u2040"
_PREFIX = rf"(?:[{_PN_CHARS_BASE}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?)?"
_PLX = r"%[0-9A-Fa-f]{2}|\\[-_~.!$&'()*+,;=/?#@%]"
_LOCAL_FIRST = rf"(?:[{_PN_CHARS}:]|{_PLX})"
_LOCAL_MID = rf"(?:[{_PN_CHARS}.:]|{_PLX})"
_LOCAL = rf"(?:{_LOCAL_FIRST}(?:{_LOCAL_MID}*{_LOCAL_FIRST})?)"

#: The longest prefix a prefixed name may have (``ex`` in ``ex:name``), in characters.
MAX_PREFIX = 256

# The alternatives are tried in this order, the first that matches wins: operators come
# second (half the tokens are operators: trying them last tried ten alternatives first),
# each written so that it matches exactly where no later alternative would (``.`` not
# before a digit, ``?`` not before a name character, ``@`` not before a letter) and
# after IRIREF (``<``), so the tokens are what they were with operators last.
_TOKENS = [
    ("WS", r"[ \t\r\n]+|\#[^\n]*"),
    ("IRIREF", r"<[^<>\"{}|^`\\\x00-\x20]*>"),
    (
        "OP",
        rf"\^\^|&&|\|\||!=|<=|>=|[{{}}()\[\];,*=<>!+\-/^|]|\.(?![0-9])|\?(?![{_PN_CHARS}])"
        r"|@(?![a-zA-Z])",
    ),
    ("VAR", rf"[?$][{_PN_CHARS}]+"),
    (
        "STRING_LONG",
        r"'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''|\"\"\"(?:(?:\"|\"\")?(?:[^\"\\]|\\.))*\"\"\"",
    ),
    ("STRING", r"'(?:[^'\\\n\r]|\\.)*'|\"(?:[^\"\\\n\r]|\\.)*\""),
    ("BNODE", rf"_:[{_PN_CHARS}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"),
    # The lookahead (a ':' after name characters) only fails sooner: no backtracking
    # through every bare word (SELECT, FILTER, ...) looking for the ':' of a prefix. It
    # looks MAX_PREFIX characters ahead at most: a run of name characters and dots with no
    # ':' (``a.a.a...``) would otherwise be scanned again from each of its tokens, a time
    # quadratic in the run's length (64 KiB of it took 8 s).
    ("PNAME", rf"(?=[{_PN_CHARS}.]{{0,{MAX_PREFIX}}}:){_PREFIX}:{_LOCAL}?"),
    ("LANGTAG", r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*"),
    ("DOUBLE", r"(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+"),
    ("DECIMAL", r"[0-9]*\.[0-9]+"),
    ("INTEGER", r"[0-9]+"),
    ("NAME", r"[A-Za-z_][A-Za-z0-9_]*"),
]
# Any character no token starts with is a one-character STRAY token (an error). Whitespace
# and comments are skipped in front of each token by the same match (half the matches); a
# match with no token is the whitespace at the end of the text.
_SCAN = re.compile(
    r"[ \t\r\n]*(?:\#[^\n]*[ \t\r\n]*)*(?:"
    + "|".join(f"(?P<{name}>{rx})" for name, rx in [*_TOKENS[1:], ("STRAY", ".")])
    + ")?",
    re.DOTALL,
).finditer


class Token(NamedTuple):
    """A token with its 1-based position (a tuple: thousands are made per second)."""

    kind: str
    text: str
    line: int
    column: int

    def is_op(self, text: str) -> bool:
        """True for the punctuation/operator token ``text``."""
        return self.text == text and self.kind == "OP"

    def is_keyword(self, *words: str) -> bool:
        """True for a bare word equal (case-insensitively) to one of ``words``."""
        return self.kind == "NAME" and self.text.upper() in words

    def describe(self) -> str:
        """The token as an error message shows it."""
        return "end of input" if self.kind == "EOF" else repr(self.text)


_CODEPOINT = re.compile(r"(\\\\)|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def unescape_codepoints(text: str) -> str:
    """Replace ``\\uXXXX`` and ``\\UXXXXXXXX`` everywhere (SPARQL 1.1 section 19.2: they are
    processed before the grammar, so ``<\\u0078>`` is ``<x>``); an escaped backslash stays.

    Raises:
        SubscriptionSyntaxError: a lone surrogate or a code point past U+10FFFF.
    """
    if "\\u" not in text and "\\U" not in text:
        return text
    out: list[str] = []
    pos = 0
    high: int | None = None
    for m in _CODEPOINT.finditer(text):
        if m.group(1):
            continue
        code = int(m.group(2) or m.group(3), 16)
        out.append(text[pos : m.start()])
        pos = m.end()
        if high is not None and 0xDC00 <= code <= 0xDFFF and out[-1] == "":
            out[-2] = chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
            high = None
            continue
        if high is not None or 0xDC00 <= code <= 0xDFFF or code > 0x10FFFF:
            break
        if 0xD800 <= code <= 0xDBFF:
            high = code
            out.append("")
            continue
        out.append(chr(code))
    else:
        if high is None:
            out.append(text[pos:])
            return "".join(out)
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1)
    msg = "bad escape sequence: a lone surrogate or a code point past U+10FFFF"
    raise SubscriptionSyntaxError(msg, line=line, column=max(column, 1))


_NEWLINE = re.compile("\n").finditer

#: ``Token``'s own ``__new__`` is Python code; the tuple's is not (half the lexer's time).
_new = tuple.__new__


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens; raises :class:`SubscriptionSyntaxError` on stray input."""
    text = unescape_codepoints(text)
    if "\n" not in text.rstrip(" \t\r\n"):  # tokens on one line (most subscriptions)
        tokens = [
            _new(Token, (kind, m.group(kind), 1, m.start(kind) + 1))
            for m in _SCAN(text)
            if (kind := m.lastgroup) is not None
        ]
    else:  # a token's line: the newlines before it, found by bisection
        ends = [m.start() for m in _NEWLINE(text)]
        tokens = [
            _new(Token, (kind, m.group(kind), (n := bisect_left(ends, at)) + 1, at - ends[n - 1]))
            if (at := m.start(kind)) > ends[0]
            else _new(Token, (kind, m.group(kind), 1, at + 1))
            for m in _SCAN(text)
            if (kind := m.lastgroup) is not None
        ]
    for tok in tokens:
        if tok.kind == "STRAY":
            _stray(tok)
        if tok.kind == "NAME" and len(tok.text) > MAX_PREFIX:
            _too_long(tok)
    tokens.append(Token("EOF", "", text.count("\n") + 1, len(text) - text.rfind("\n")))
    return tokens


def _stray(tok: Token) -> None:
    msg = f"unexpected character {tok.text!r}"
    raise SubscriptionSyntaxError(msg, line=tok.line, column=tok.column)


def _too_long(tok: Token) -> None:
    """A bare word (a keyword, a function's name) or a prefix over ``MAX_PREFIX``."""
    msg = (
        f"a name of {len(tok.text)} characters: keywords and prefixes (the 'ex' of "
        f"ex:name) are at most {MAX_PREFIX} characters"
    )
    raise SubscriptionSyntaxError(msg, line=tok.line, column=tok.column)
