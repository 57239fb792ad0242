"""Reading JSON Lines inputs with errors that say FILE:LINE[:COL], and writing answers.

Lines are read in chunks and decoded with orjson. orjson accepts a subset of what the
standard library accepts, with the same values, so a line orjson refuses is decoded again
with :func:`json.loads` (``NaN``/``Infinity`` refused as before): it either decodes (huge
integers, lone surrogates) or fails with the standard library's message and column, so
messages are exactly those of a one-line-at-a-time reader. Answers are written per batch
from :class:`~semps.matcher.results.MatchColumns`, byte for byte what ``json.dumps`` gave.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import numpy as np
import orjson

from semps.cli.paths import need_input
from semps.errors import IngestError, JSONEventError, SempsError, SubscriptionError
from semps.event import Event
from semps.ingest.json_event import refuse_json_constant
from semps.matcher.base import MatchContext
from semps.matcher.results import MatchColumns

__all__ = ["QuotedIds", "load_each", "match_jsonl", "read_chunks", "read_jsonl", "write_columns"]

T = TypeVar("T")

#: Lines decoded per chunk.
CHUNK = 65_536

_ErrorType = type[IngestError] | type[SubscriptionError] | type[SempsError]


class Chunk:
    """Decoded lines: ``docs[i]`` is line ``numbers[i]``; ``error`` (if any) is the JSON
    error of the line after the last one, to raise once the docs are used."""

    __slots__ = ("docs", "error", "numbers")

    def __init__(self, numbers: list[int], docs: list[Any], error: SempsError | None) -> None:
        self.numbers = numbers
        self.docs = docs
        self.error = error


def read_chunks(
    path: Path,
    error: _ErrorType,
    *,
    strict_constants: bool = True,
    chunk: int | None = None,
) -> Iterator[Chunk]:
    """The non-blank lines of ``path``, decoded, about ``chunk`` lines at a time.

    A line that is not JSON ends the reading: the chunk holding it carries its ``error``
    (``FILE:LINE:COL: invalid JSON: ...``, the standard library's message) after the lines
    before it.
    """
    for first, lines in raw_chunks(path, chunk):
        part = decode_lines(path, lines, first, error, strict_constants=strict_constants)
        yield part
        if part.error is not None:
            return


def raw_chunks(path: Path, chunk: int | None = None) -> Iterator[tuple[int, list[bytes]]]:
    """(number of the first line, lines) of ``path``, about ``chunk`` lines at a time
    (default :data:`CHUNK`)."""
    hint = (CHUNK if chunk is None else chunk) * 512
    if not path.is_file():
        msg = f"file not found: {path}"
        raise SempsError(msg)
    number = 1
    with path.open("rb") as stream:
        while lines := stream.readlines(hint):
            yield number, lines
            number += len(lines)


def decode_lines(
    path: Path,
    lines: list[bytes],
    first: int,
    error: _ErrorType,
    *,
    strict_constants: bool = True,
) -> Chunk:
    """Decode ``lines`` (line ``first`` on), skipping blank ones (see :func:`read_chunks`)."""
    numbers = [n for n, line in enumerate(lines, start=first) if line.strip()]
    raw = lines if len(numbers) == len(lines) else [lines[n - first] for n in numbers]
    try:
        return Chunk(numbers, list(map(orjson.loads, raw)), None)
    except orjson.JSONDecodeError:
        pass
    docs, failure = _decode_each(path, raw, numbers, error, strict_constants)
    numbers = [n for n, d in zip(numbers, docs, strict=False) if d is not _BLANK]
    return Chunk(numbers, [d for d in docs if d is not _BLANK], failure)


_BLANK = object()


def _decode_each(
    path: Path,
    raw: list[bytes],
    numbers: list[int],
    error: _ErrorType,
    strict_constants: bool,
) -> tuple[list[Any], SempsError | None]:
    """Line by line, with the standard library behind orjson (see the module doc)."""
    docs: list[Any] = []
    for line, number in zip(raw, numbers, strict=True):
        try:
            docs.append(orjson.loads(line))
            continue
        except orjson.JSONDecodeError:
            pass
        text = line.decode("utf-8")
        if not text.strip():  # blank for str.strip (Unicode spaces) though not for bytes
            docs.append(_BLANK)
            continue
        try:
            if strict_constants:
                docs.append(json.loads(text, parse_constant=refuse_json_constant))
            else:
                docs.append(json.loads(text))
        except json.JSONDecodeError as exc:
            msg = f"{path}:{number}:{exc.colno}: invalid JSON: {exc.msg}"
            return docs, _chained(error(msg), exc)
        except (ValueError, RecursionError) as exc:
            return docs, _chained(error(f"{path}:{number}: invalid JSON: {exc}"), exc)
    return docs, None


def _chained(exc: SempsError, cause: BaseException) -> SempsError:
    exc.__cause__ = cause
    return exc


def located(path: Path, number: int, exc: SempsError) -> SempsError:
    """``exc`` again, its message prefixed with ``FILE:LINE:``."""
    detail = getattr(exc, "detail", str(exc))
    return _chained(type(exc)(f"{path}:{number}: {detail}"), exc)


def read_jsonl(
    path: Path,
    build: Callable[[object], T],
    error: type[IngestError] | type[SubscriptionError],
) -> Iterator[T]:
    """``build(doc)`` for every non-blank line of ``path``.

    A line that is not JSON, or that ``build`` refuses, stops the run with ``error`` (or the
    SempsError ``build`` raised) located as ``FILE:LINE:`` (plus ``COL:`` for JSON syntax).
    """
    for part in read_chunks(path, error):
        for number, doc in zip(part.numbers, part.docs, strict=True):
            try:
                yield build(doc)
            except SempsError as exc:
                raise located(path, number, exc) from exc
        if part.error is not None:
            raise part.error


def load_each(path: Path, build: Callable[[object], T], add: Callable[[T], None]) -> None:
    """Index every subscription line one by one (ids unique)."""
    seen: set[str] = set()
    for sub in read_jsonl(path, build, SubscriptionError):
        sub_id = sub.id  # type: ignore[attr-defined]
        if sub_id in seen:
            raise SubscriptionError(duplicate_message(path, sub_id))
        seen.add(sub_id)
        add(sub)


def duplicate_message(path: Path, sub_id: str) -> str:
    """The message of a repeated subscription id."""
    return f"{path}: duplicate subscription id {sub_id!r}"


class _Columnar(Protocol):
    """A matcher that answers a batch as columns."""

    def match_columns(
        self, contexts: Sequence[MatchContext], *, solutions: bool = ...
    ) -> MatchColumns: ...


def match_jsonl(
    subscriptions: Path,
    events: Path,
    *,
    matcher: _Columnar,
    load: Callable[[Path], None],
    event: Callable[[object], Event],
    batch: int,
) -> int:
    """``semps content|symmetric match``: ``load`` every subscription line, then print
    ``{"event", "matches"}`` per event line, matching ``batch`` events together."""
    if batch < 1:
        raise SubscriptionError(f"--batch must be at least 1, not {batch}")
    need_input(events, "events")  # told before the subscriptions load, not after
    load(subscriptions)
    quoted = QuotedIds()
    out = sys.stdout
    pending: list[Event] = []
    for item in read_jsonl(events, event, JSONEventError):
        pending.append(item)
        if len(pending) == batch:
            _flush(matcher, pending, quoted, out)
    _flush(matcher, pending, quoted, out)
    return 0


def _flush(matcher: _Columnar, batch: list[Event], quoted: QuotedIds, out: IO[str]) -> None:
    if batch:
        columns = matcher.match_columns([MatchContext(e) for e in batch])
        write_columns(out, [e.id for e in batch], columns, quoted)
        out.flush()
    batch.clear()


class QuotedIds:
    """Subscription ids as they are written, prepared once per id list (kept while the
    list only grows): JSON-quoted one by one (``json.dumps`` of each), or, when no id needs
    an escape (the usual case), left bare so a line joins them with ``'", "'``."""

    #: What ``json.dumps`` (``ensure_ascii``) escapes inside a string.
    _ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f-\U0010ffff]')

    def __init__(self) -> None:
        self._source: Sequence[str] | None = None
        self._done = np.zeros(0, dtype=object)
        self.bare = True

    def of(self, ids: Sequence[str] | np.ndarray) -> np.ndarray:
        """``ids`` prepared for writing (an object array indexed like ``ids``): bare when
        :attr:`bare`, else quoted."""
        if ids is not self._source or len(ids) < len(self._done):
            self._source = ids  # type: ignore[assignment]
            self._done = np.zeros(0, dtype=object)
            self.bare = True
        have = len(self._done)
        if len(ids) > have:
            more = np.empty(len(ids) - have, dtype=object)
            more[:] = list(ids[have:])
            if self.bare and self._ESCAPED.search("".join(more.tolist())):
                self.bare = False  # quote them all from now on
                more = np.empty(len(ids), dtype=object)
                more[:] = list(ids)
                self._done = np.zeros(0, dtype=object)
            if not self.bare:
                more[:] = list(map(encode_basestring_ascii, more.tolist()))
            self._done = np.concatenate([self._done, more])
        return self._done


def write_columns(
    out: IO[str], event_ids: Sequence[str], columns: MatchColumns, quoted: QuotedIds
) -> None:
    """One ``{"event": id, "matches": [ids]}`` line per event, in batch order."""
    names: list[str] = quoted.of(columns.ids)[columns.subscription].tolist()
    offsets = columns.offsets().tolist()
    event = list(map(encode_basestring_ascii, event_ids))
    if quoted.bare:
        join = '", "'.join
        lines = [
            f'{{"event": {e}, "matches": ["{join(names[a:b])}"]}}\n'
            if b > a
            else f'{{"event": {e}, "matches": []}}\n'
            for e, a, b in zip(event, offsets, offsets[1:], strict=False)
        ]
    else:
        join = ", ".join
        lines = [
            f'{{"event": {e}, "matches": [{join(names[a:b])}]}}\n'
            for e, a, b in zip(event, offsets, offsets[1:], strict=False)
        ]
    out.write("".join(lines))
