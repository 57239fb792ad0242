"""Snapshots of semantic subscriptions parsed: saved once, loaded without lexing or parsing.

A semantic index holds compiled FILTERs (Python closures), so a snapshot holds *data*: the
subscriptions' ids and texts and their parsed queries (:class:`~semps.ingest.sparql.Query`,
with its patterns, FILTER ASTs and algebra trees) in a tagged JSON form, each distinct text
once. Loading decodes the queries and registers every subscription through the matcher's
own ``add`` inside :func:`~semps.ingest.sparql.parse_memo`, so compiling and indexing are
the matcher's, unchanged; only lexing and parsing are skipped.

The file (no pickle anywhere) is three parts::

    semps-semantic-index\\n        the magic line
    {header JSON}\\n               format, version, count, the limits the texts were parsed
                                  under, the SHA-256 of the subscriptions (ids and texts,
                                  :func:`subscriptions_digest`) and of the payload, its size
    payload                       orjson: {"ids", "texts", "query_of", "terms", "queries"}

Each distinct term (IRI, variable, literal, and every other string of a query: AST tags,
operators) is written once in ``terms`` and named by its number in ``queries``.

Loading treats the file as hostile and its work as bounded by its size: the header line is
at most 64 KiB, the payload must be exactly the rest of the file and match its digest
before it is decoded; decoding accepts only the tags below and the query model's own
classes, nested at most :data:`MAX_NESTING` deep; one distinct text in :data:`SPOT_CHECK`
is parsed again and must give its stored query. Any failure is one
:class:`~semps.errors.SubscriptionError` naming the file. A snapshot parsed under other
limits than the loading matcher's (those parsing reads, :func:`~semps.limits.parse_limits`)
is refused (its parses might not be the matcher's), as is
one whose subscriptions' digest differs from the caller's (a stale snapshot).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

import orjson

from semps.errors import SempsError, SubscriptionError
from semps.gcpolicy import paused_gc
from semps.ingest.sparql import Query, TriplePattern, Var, algebra, parse_memo, parse_query
from semps.ingest.sparql.filters import Expression
from semps.limits import DEFAULT_LIMITS, Limits, parse_limits
from semps.matcher.values import Subscription
from semps.terms import Literal

__all__ = [
    "FORMAT",
    "MAX_NESTING",
    "SPOT_CHECK",
    "VERSION",
    "SHIPPED",
    "Snapshot",
    "Source",
    "register_snapshot",
    "read_snapshot",
    "save_snapshot",
    "snapshot_bytes",
    "snapshot_file_bytes",
    "snapshot_header",
    "subscriptions_digest",
]

#: The magic first line and the header's ``format``.
FORMAT = "semps-semantic-index"
#: The header's ``version``: snapshots of another version are refused.
VERSION = 1
#: Deepest nesting of tagged values a snapshot may hold (orjson writes at most 254 levels;
#: the parser's depth limit, ``max_query_depth``, keeps real queries well below).
MAX_NESTING = 250
_MAX_HEADER = 64 * 1024
#: Loading parses one distinct text in this many again (at least one, drawn at random) and
#: refuses a snapshot whose stored query differs: one written by a semps that parses
#: differently, or altered with its digest recomputed.
SPOT_CHECK = 64

# Tags of the encoded values (the first item of each JSON array).
_TUPLE, _LIST, _LITERAL, _VAR, _EXPRESSION, _NODE = range(6)
#: The classes a snapshot may name, by number (append only: the numbers are the format).
_CLASSES: tuple[type, ...] = (
    (Query, TriplePattern)
    + tuple(
        getattr(algebra, name)
        for name in "BGP Join LeftJoin Union Minus Filter Extend Values Exists WithExists".split()
    )
    + (algebra.PathPattern,)
)
_NUMBER = {cls: k for k, cls in enumerate(_CLASSES)}
_FIELDS = [tuple(f.name for f in dataclasses.fields(cls) if f.init) for cls in _CLASSES]
_PATTERN = _NUMBER[TriplePattern]


#: A snapshot: its file, or the bytes of one (:func:`snapshot_bytes`, shipped to Spark's
#: executors).
Source = Path | bytes
#: What errors call a snapshot given as bytes, unless the caller names it.
SHIPPED = "the shipped snapshot"


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """A snapshot read and decoded: the subscriptions in order and each text's query."""

    subscriptions: tuple[Subscription, ...]
    queries: dict[str, Query]
    limits: Limits
    subscriptions_sha256: str


def subscriptions_digest(subscriptions: Iterable[Subscription]) -> str:
    """SHA-256 (hex) of the subscriptions' ids and texts, in order: what a snapshot was
    built from, to compare with what would be registered now.

    Example:
        >>> a = [Subscription("s1", "semantic", "ASK { ?x ?p ?o }")]
        >>> subscriptions_digest(a) == subscriptions_digest(list(a))
        True
    """
    h = hashlib.sha256()
    for sub in subscriptions:
        h.update(orjson.dumps([sub.id, sub.text]))
    return h.hexdigest()


def snapshot_bytes(
    subscriptions: Sequence[Subscription],
    queries: dict[str, Query],
    limits: Limits = DEFAULT_LIMITS,
) -> bytes:
    """The snapshot of the subscriptions with their parsed queries (``queries[text]``, as
    ``parse_query(text, limits=limits)`` gave them), as the bytes of its file (what Spark
    ships to its executors: :func:`register_snapshot` reads them as it reads a file).

    Raises:
        SubscriptionError: a text without its query, or a query holding something the
            format cannot say.
    """
    with paused_gc():  # many small lists, no cycles: collections would rescan the queries
        return _snapshot_bytes(subscriptions, queries, limits)


def _snapshot_bytes(
    subscriptions: Sequence[Subscription], queries: dict[str, Query], limits: Limits
) -> bytes:
    number: dict[str, int] = {}
    texts: list[str] = []
    terms = _Terms()
    encoded: list[Any] = []
    query_of: list[int] = []
    for sub in subscriptions:
        k = number.get(sub.text)
        if k is None:
            query = queries.get(sub.text)
            if query is None:
                msg = f"subscription {sub.id!r} has no parsed query to save"
                raise SubscriptionError(msg)
            k = number[sub.text] = len(texts)
            texts.append(sub.text)
            encoded.append(terms.encode(query))
        query_of.append(k)
    data = {"texts": texts, "query_of": query_of, "terms": terms.table, "queries": encoded}
    try:
        payload = orjson.dumps({"ids": [s.id for s in subscriptions], **data})
    except orjson.JSONEncodeError as exc:  # nested past what orjson writes
        msg = f"a subscription nests too deep for a snapshot ({exc})"
        raise SubscriptionError(msg) from exc
    header = {
        "format": FORMAT,
        "version": VERSION,
        "count": len(subscriptions),
        "limits": dataclasses.asdict(limits),
        "subscriptions_sha256": subscriptions_digest(subscriptions),
        "payload_bytes": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
    }
    return FORMAT.encode() + b"\n" + orjson.dumps(header) + b"\n" + payload


def save_snapshot(
    path: Path,
    subscriptions: Sequence[Subscription],
    queries: dict[str, Query],
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Write :func:`snapshot_bytes` to ``path`` atomically.

    Raises:
        SubscriptionError: a text without its query, or a query holding something the
            format cannot say.
    """
    data = snapshot_bytes(subscriptions, queries, limits)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # several writers: each its own
    # Owner-only, as every file of the service's data directory (the texts are in it).
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def register_snapshot(
    path: Source,
    add: Callable[[Subscription], None],
    limits: Limits,
    *,
    expect_sha256: str | None = None,
    name: str = SHIPPED,
) -> None:
    """Register every subscription of the snapshot at ``path`` through ``add`` (a
    matcher's), with the snapshot's parses (:func:`parse_memo`; the queries were parsed
    under ``limits``, the matcher's).

    Args:
        path: the snapshot's file, or its bytes (:func:`snapshot_bytes`).
        add: registers one subscription (compiles and indexes it).
        limits: the adding matcher's limits (a snapshot parsed under others is refused).
        expect_sha256: when given, the :func:`subscriptions_digest` the snapshot must have
            been built from (else it is stale and refused).
        name: what errors call a snapshot given as bytes.

    Raises:
        SubscriptionError: the file is missing, damaged, of another version, stale, or
            parsed under other limits, or holds a query ``add`` cannot index.
    """
    snapshot = read_snapshot(path, name=name, expect_sha256=expect_sha256, limits=limits)
    where = _where(path, name)
    try:
        with parse_memo(snapshot.queries, limits):
            for sub in snapshot.subscriptions:
                add(sub)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise _refuse(where, f"a query the matcher cannot index ({exc})") from exc


def _refuse(path: Path | str, why: str) -> SubscriptionError:
    return SubscriptionError(f"{path}: not a usable semantic index snapshot: {why}")


def _where(source: Source, name: str) -> Path | str:
    return name if isinstance(source, bytes) else source


def read_snapshot(
    path: Source,
    *,
    name: str = SHIPPED,
    expect_sha256: str | None = None,
    limits: Limits | None = None,
) -> Snapshot:
    """The snapshot at ``path`` (a file, or its bytes, which errors call ``name``),
    checked and decoded (see the module doc); with ``expect_sha256`` it must have been
    built from subscriptions of that :func:`subscriptions_digest`, with ``limits`` parsed
    under them.

    Raises:
        SubscriptionError: the file is missing, not a snapshot, of another version,
            altered or inconsistent, stale, or parsed under other limits.
    """
    header, payload = _read(path, name)
    where = _where(path, name)
    with paused_gc():  # many small objects, all kept: collections would only rescan them
        snapshot = _decoded(where, header, payload)
    if expect_sha256 is not None and snapshot.subscriptions_sha256 != expect_sha256:
        raise _refuse(where, "stale: the subscriptions changed since it was built")
    if limits is not None and parse_limits(snapshot.limits) != parse_limits(limits):
        raise _refuse(where, "parsed under other limits than this matcher's")
    return snapshot


def snapshot_file_bytes(path: Path) -> bytes:
    """The snapshot file at ``path`` as bytes for :func:`read_snapshot` and
    :func:`register_snapshot`, its frame checked first (format, version, header and payload
    size, the payload's digest; a file that is no snapshot is not read beyond its header).

    Raises:
        SubscriptionError: the file is missing, not a snapshot, of another version, or
            altered.
    """
    header, payload = _read(path, SHIPPED)
    return FORMAT.encode() + b"\n" + orjson.dumps(header) + b"\n" + payload


def snapshot_header(path: Path) -> dict[str, Any]:
    """The header of the snapshot at ``path``, its frame checked (format, version, size,
    the payload's digest) but its payload not decoded.

    Raises:
        SubscriptionError: the file is missing, not a snapshot, of another version, or
            altered.
    """
    return _read(path, SHIPPED)[0]


def _decoded(path: Path | str, header: dict[str, Any], payload: bytes) -> Snapshot:
    try:
        data = orjson.loads(payload)
        limits = Limits(**header["limits"])
        ids, texts, query_of = data["ids"], data["texts"], data["query_of"]
        encoded = data["queries"]
        if not (
            len(ids) == len(query_of) == header["count"]
            and len(texts) == len(encoded)
            and all(type(x) is str for x in ids)
            and all(type(x) is str for x in texts)
            and all(type(k) is int and 0 <= k < len(texts) for k in query_of)
        ):
            raise _refuse(path, "its ids, texts and queries do not line up")
        if len(set(ids)) != len(ids):
            raise _refuse(path, "an id appears twice")
        terms = [_term(t) for t in data["terms"]]
        queries = {}
        for text, item in zip(texts, encoded, strict=True):
            query = _decode(item, terms, 0) if type(item) is list else None
            if type(query) is not Query:
                raise _refuse(path, "an entry of its queries is not a query")
            queries[text] = query
        _spot_check(path, queries, limits)
        subscriptions = tuple(
            Subscription(sub_id, "semantic", texts[k])
            for sub_id, k in zip(ids, query_of, strict=True)
        )
        digest = str(header["subscriptions_sha256"])
    except SubscriptionError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise _refuse(path, f"inconsistent content ({exc})") from exc
    return Snapshot(subscriptions, queries, limits, digest)


def _spot_check(path: Path | str, queries: dict[str, Query], limits: Limits) -> None:
    """Parse one distinct text in :data:`SPOT_CHECK` (at least one, drawn at random) and
    refuse the snapshot unless each gives its stored query."""
    texts = list(queries)
    for text in random.sample(texts, min(len(texts), max(1, len(texts) // SPOT_CHECK))):
        try:
            same = parse_query(text, limits=limits) == queries[text]
        except SempsError:
            same = False
        if not same:
            msg = "a stored query is not what this semps parses of its text (another version?)"
            raise _refuse(path, msg)


def _read(source: Source, name: str) -> tuple[dict[str, Any], bytes]:
    """The header and the payload of a file (read up to its header line first) or of bytes."""
    path = _where(source, name)
    opened: BinaryIO
    if isinstance(source, bytes):
        size, opened = len(source), io.BytesIO(source)
    elif not source.is_file():
        msg = f"file not found: {source}"
        raise SubscriptionError(msg)
    else:
        size, opened = source.stat().st_size, source.open("rb")
    with opened as stream:
        magic = stream.readline(len(FORMAT) + 1)
        if magic != FORMAT.encode() + b"\n":
            raise _refuse(path, f"it does not start with {FORMAT!r}")
        line = stream.readline(_MAX_HEADER)
        if not line.endswith(b"\n"):
            raise _refuse(path, "no header line (or one over 64 KiB)")
        header = _header(path, line)
        rest = size - stream.tell()
        if header.get("payload_bytes") != rest:
            raise _refuse(path, f"{rest} bytes after the header, not {header.get('payload_bytes')}")
        payload = stream.read(rest)
    if len(payload) != rest or hashlib.sha256(payload).hexdigest() != header.get("payload_sha256"):
        raise _refuse(path, "its digest does not match its content (altered or damaged)")
    return header, payload


def _header(path: Path | str, line: bytes) -> dict[str, Any]:
    """The header line, of this format and version."""
    try:
        header: dict[str, Any] = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _refuse(path, "the header is not JSON") from exc
    found = (header.get("format"), header.get("version")) if type(header) is dict else None
    if found is None or found[0] != FORMAT:
        raise _refuse(path, f"the header's format is not {FORMAT!r}")
    if found[1] != VERSION:
        raise _refuse(path, f"version {found[1]!r}, this semps reads version {VERSION}")
    return header


class _Terms:
    """The terms table being written, and the encoder that fills it."""

    def __init__(self) -> None:
        self.table: list[Any] = []
        # one dict a kind of term (a string, a variable and a literal never share a number)
        self.strings: dict[str, int] = {}
        self.variables: dict[Var, int] = {}
        self.literals: dict[Literal, int] = {}

    def term(self, value: str | Var | Literal) -> int:
        """The number of a string, variable or literal in the table."""
        kind = type(value)
        numbers: dict[Any, int] = (
            self.strings if kind is str else self.variables if kind is Var else self.literals
        )
        found = numbers.get(value)
        if found is None:
            found = numbers[value] = len(self.table)
            if kind is Var:
                self.table.append([_VAR, value.name])  # type: ignore[union-attr]
            elif kind is Literal:
                self.table.append([_LITERAL, *cast("Literal", value)])
            else:
                self.table.append(value)
        return found

    def encode(self, value: Any) -> Any:
        """``value`` as JSON data: terms as their numbers, ``True``/``False``/``None`` as
        themselves, anything else as ``[tag, ...]``."""
        kind = type(value)
        if kind is str:
            found = self.strings.get(value)
            return self.term(value) if found is None else found
        if kind is Var or kind is Literal:
            return self.term(value)
        if kind is bool or value is None:
            return value
        encode = self.encode
        if kind is tuple:
            return [_TUPLE, *[encode(x) for x in value]]
        if kind is list:
            return [_LIST, *[encode(x) for x in value]]
        if kind is Expression:
            return [_EXPRESSION, encode(value.ast)]
        if kind is TriplePattern:
            return [_NODE, _PATTERN, encode(value.s), encode(value.p), encode(value.o)]
        number = _NUMBER.get(kind)
        if number is None:
            msg = f"a parsed query holds a {kind.__name__}, which a snapshot cannot hold"
            raise SubscriptionError(msg)
        return [_NODE, number, *[encode(getattr(value, name)) for name in _FIELDS[number]]]


def _term(value: Any) -> str | Var | Literal:
    """A term of the table (ValueError on anything :class:`_Terms` would not write)."""
    if type(value) is str:
        return sys.intern(value)  # as the parser interns IRIs and names
    if type(value) is list and value and value[0] == _VAR and len(value) == 2:
        if type(value[1]) is str:
            return Var(sys.intern(value[1]))
    elif type(value) is list and value and value[0] == _LITERAL and len(value) == 4:
        lexical, datatype, lang = value[1:]
        if type(lexical) is str and type(datatype) is str and (lang is None or type(lang) is str):
            return Literal(lexical, sys.intern(datatype), lang)
    msg = f"{value!r} is not a term"
    raise ValueError(msg)


def _decode(value: list[Any], terms: list[Any], depth: int) -> Any:
    """The inverse of :meth:`_Terms.encode` for an array (ValueError on anything it would
    not write); its items are decoded in line (terms, booleans) or recursively."""
    if type(value) is not list or not value or type(value[0]) is not int or depth > MAX_NESTING:
        msg = "nested too deep, or a value without its tag"
        raise ValueError(msg)
    tag, depth = value[0], depth + 1
    number = value[1] if tag == _NODE and len(value) > 1 else None  # a class, not a term
    items: list[Any] = [
        terms[x]
        if type(x) is int
        else x
        if x is None or type(x) is bool
        else _decode(x, terms, depth)
        for x in value[1 if number is None else 2 :]
    ]
    if tag == _TUPLE:
        return tuple(items)
    if tag == _LIST:
        return items
    if tag == _EXPRESSION and len(items) == 1:
        return Expression(items[0])
    if type(number) is int and 0 <= number < len(_CLASSES):
        if len(items) == len(_FIELDS[number]):
            return _CLASSES[number](*items)
    msg = f"a value tagged {tag!r} that no query holds"
    raise ValueError(msg)
