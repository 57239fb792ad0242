"""Fixtures of the semantic matcher's tests: counting what the SPARQL parser reads."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from semps.ingest.sparql import Query, parser


@pytest.fixture
def count_parses(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """Call it to start counting: the list it returns gets every text the parser reads from
    then on (lexed and parsed, not answered by a memo)."""

    def start() -> list[str]:
        seen: list[str] = []
        parse = parser._parse

        def counted(text: str, *args: object) -> Query:
            seen.append(text)
            return parse(text, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(parser, "_parse", counted)
        return seen

    return start
