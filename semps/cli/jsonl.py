"""Reading JSON Lines inputs with errors that say FILE:LINE[:COL]."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar

from semps.errors import IngestError, JSONEventError, SempsError, SubscriptionError
from semps.ingest.event import Event
from semps.ingest.json_event import refuse_json_constant
from semps.matcher.base import Match, MatchContext

__all__ = ["match_jsonl", "read_jsonl"]

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
                doc = json.loads(line, parse_constant=refuse_json_constant)
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


class _Indexed(Protocol):
    """A matcher whose subscriptions are added to its index directly."""

    def match_batch(
        self, events: list[Event], contexts: list[MatchContext]
    ) -> list[list[Match]]: ...


def match_jsonl(
    subscriptions: Path,
    events: Path,
    *,
    matcher: _Indexed,
    add: Callable[[T], None],
    subscription: Callable[[object], T],
    event: Callable[[object], Event],
    batch: int,
) -> int:
    """``semps content|symmetric match``: index every subscription line (ids unique), then
    print ``{"event", "matches"}`` per event line, matching ``batch`` events together."""
    if batch < 1:
        raise SubscriptionError(f"--batch must be at least 1, not {batch}")
    seen: set[str] = set()
    for sub in read_jsonl(subscriptions, subscription, SubscriptionError):
        sub_id = sub.id  # type: ignore[attr-defined]
        if sub_id in seen:
            msg = f"{subscriptions}: duplicate subscription id {sub_id!r}"
            raise SubscriptionError(msg)
        seen.add(sub_id)
        add(sub)
    pending: list[Event] = []
    for item in read_jsonl(events, event, JSONEventError):
        pending.append(item)
        if len(pending) == batch:
            _flush(matcher, pending)
    _flush(matcher, pending)
    return 0


def _flush(matcher: _Indexed, batch: list[Event]) -> None:
    contexts = [MatchContext(e) for e in batch]
    for item, matches in zip(batch, matcher.match_batch(batch, contexts), strict=True):
        line = {"event": item.id, "matches": [m.subscription for m in matches]}
        sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    batch.clear()
