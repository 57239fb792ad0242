"""The lexer's tokens are the grammar's: at each position (after whitespace and comments)
the first token kind, in the order of the SPARQL terminals below, that matches there."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from semps_test_support import WORKLOADS

from semps.errors import SubscriptionSyntaxError
from semps.ingest.sparql._lexer import _TOKENS, tokenize

_RX = dict(_TOKENS)
#: The plain terminals, operators last, as a reference scanner tries them one by one.
_ORDER = [
    ("IRIREF", _RX["IRIREF"]),
    ("STRING_LONG", _RX["STRING_LONG"]),
    ("STRING", _RX["STRING"]),
    ("BNODE", _RX["BNODE"]),
    ("PNAME", _RX["PNAME"].removeprefix(_RX["PNAME"].partition(")")[0] + ")")),
    ("VAR", _RX["VAR"]),
    ("LANGTAG", _RX["LANGTAG"]),
    ("DOUBLE", _RX["DOUBLE"]),
    ("DECIMAL", _RX["DECIMAL"]),
    ("INTEGER", _RX["INTEGER"]),
    ("NAME", _RX["NAME"]),
    ("OP", r"\^\^|&&|\|\||!=|<=|>=|[{}()\[\].;,*=<>!+\-/^|?@]"),
]
_COMPILED = [(kind, re.compile(rx, re.DOTALL)) for kind, rx in _ORDER]
_SKIP = re.compile(r"(?:[ \t\r\n]+|\#[^\n]*)*")


def _reference(text: str) -> list[tuple[str, str, int]] | str:
    """(kind, text, offset) of each token, or the stray character (its repr)."""
    out = []
    at = _SKIP.match(text, 0).end()  # type: ignore[union-attr]
    while at < len(text):
        for kind, rx in _COMPILED:
            m = rx.match(text, at)
            if m:
                out.append((kind, m.group(), at))
                at = m.end()
                break
        else:
            return repr(text[at])
        at = _SKIP.match(text, at).end()  # type: ignore[union-attr]
    return out


def _ours(text: str) -> list[tuple[str, str, int]] | str:
    try:
        tokens = tokenize(text)
    except SubscriptionSyntaxError as exc:
        return str(exc).partition("unexpected character ")[2]
    return [(t.kind, t.text, t.column - 1) for t in tokens[:-1]]


def test_the_pname_lookahead_is_the_only_addition() -> None:
    assert _RX["PNAME"].startswith("(?=")


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="abXY09:._-?$<>\"'#@^ \t{}()[];,*=!+/|&eE\u00e9\u00b7", max_size=40))
def test_tokens_are_the_first_terminal_that_matches(text: str) -> None:
    assert _ours(text) == _reference(text)


def test_the_workloads_subscriptions_tokenize_as_the_terminals_say() -> None:
    texts = [
        " ".join(p.read_text(encoding="utf-8", errors="replace").split())
        for p in sorted(WORKLOADS.rglob("*.rq"))
    ]
    assert len(texts) > 1000
    for text in texts:
        if "\\u" not in text and "\\U" not in text:  # (escapes are replaced before lexing)
            assert _ours(text) == _reference(text), text
