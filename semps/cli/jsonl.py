"""Reading JSON Lines inputs with errors that say FILE:LINE[:COL]."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from semps.errors import IngestError, SempsError, SubscriptionError

__all__ = ["read_jsonl"]

T = TypeVar("T")


def read_jsonl(
    path: Path,
    build: Callable[[object], T],
    error: type[IngestError] | type[SubscriptionError],
) -> Iterator[T]:
    """``build(doc)`` for every non-blank line of ``path``.

    A line that is not JSON, or that ``build`` refuses, stops the run with ``error`` (or the
    SempsError ``build`` raised) located as ``FILE:LINE:`` (plus ``COL:`` for JSON syntax).
    """
    if not path.is_file():
        msg = f"file not found: {path}"
        raise SempsError(msg)
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line, parse_constant=_refuse_constant)
            except json.JSONDecodeError as exc:
                msg = f"{path}:{number}:{exc.colno}: invalid JSON: {exc.msg}"
                raise error(msg) from exc
            except (ValueError, RecursionError) as exc:
                raise error(f"{path}:{number}: invalid JSON: {exc}") from exc
            try:
                yield build(doc)
            except SempsError as exc:
                detail = getattr(exc, "detail", str(exc))
                raise type(exc)(f"{path}:{number}: {detail}") from exc


def _refuse_constant(name: str) -> object:
    msg = f"{name} is not a JSON number"
    raise ValueError(msg)
