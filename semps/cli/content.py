"""``semps content match``: content subscriptions against content events, as JSONL."""

from __future__ import annotations

import argparse
import gc
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from semps import pool
from semps.cli.paths import need_input, need_output
from semps.cli.progress import progress
from semps.errors import JSONEventError, SempsError, SubscriptionError
from semps.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.content import ALGORITHMS, ContentMatcher, subscription_from_json
from semps.matcher.content.bulk import ParsedSubscriptions, parse_json_many
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.index import CompiledIndex, ContentIndex
from semps.matcher.content.parse import parse_constraints
from semps.matcher.content.snapshot import file_digest, load_index, save_index
from semps.matcher.kernels import max_threads, set_threads

from ._lines_out import LineWriter
from .jsonl import decode_lines, duplicate_message, load_each, located, raw_chunks, read_jsonl


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps content``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    m = sub.add_parser("match", help="match content events (JSONL) against subscriptions (JSONL)")
    m.add_argument(
        "--algorithm",
        choices=list(ALGORITHMS),
        default="hcem",
        help="the index: all give the same answers, at different speeds (default hcem)",
    )
    source = m.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--subscriptions",
        type=Path,
        help='JSONL file: {"id", "constraints"} a line; constraints as a JSON list or as text, '
        'e.g. "a3 between 0.1 and 0.6 and a7 >= 0.3"',
    )
    source.add_argument(
        "--index",
        type=Path,
        help="a snapshot written by semps content index, instead of --subscriptions "
        "(its algorithm and buckets are used)",
    )
    m.add_argument(
        "--events", type=Path, required=True, help='JSONL file: {"id", "values": {attr: value}}'
    )
    m.add_argument("--batch", type=int, default=1000, help="events matched together (HCEM)")
    m.add_argument("--buckets", type=int, default=1000, help="REIN/HCEM buckets per list")
    threads_option(m)
    m.add_argument(
        "--interface-limit",
        type=int,
        help="predicate table: aggregate an interface's entries beyond this many",
    )
    m.set_defaults(func=run)
    i = sub.add_parser(
        "index", help="build a REIN/HCEM index of subscriptions (JSONL) and save it as a snapshot"
    )
    i.add_argument("--subscriptions", type=Path, required=True, help="JSONL file, as for match")
    i.add_argument("--output", type=Path, required=True, help="the snapshot file to write (.npz)")
    i.add_argument(
        "--algorithm", choices=["rein", "hcem"], default="hcem", help="the index (default hcem)"
    )
    i.add_argument("--buckets", type=int, default=1000, help="REIN/HCEM buckets per list")
    threads_option(i)
    i.set_defaults(func=run_index)


def threads_option(parser: argparse.ArgumentParser) -> None:
    """``--threads N``: the cores a run may use."""
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help=f"cores to use: processes parsing the subscriptions, threads matching an HCEM "
        f"batch and writing its answers (default: all, here {max_threads()})",
    )


def use_threads(args: argparse.Namespace) -> int:
    """Apply ``--threads`` (checked) to the compiled kernels; the count to use."""
    if args.threads is None:
        return max_threads()
    if not 1 <= args.threads <= max_threads():
        msg = f"--threads must be between 1 and {max_threads()}, not {args.threads}"
        raise SubscriptionError(msg)
    set_threads(args.threads)
    return int(args.threads)


def _subscription(doc: object) -> ContentSubscription:
    return subscription_from_json(text_constraints(doc))


def text_constraints(doc: object) -> object:
    """A subscription line whose ``"constraints"`` is the text form for humans
    (``"a3 between 0.1 and 0.6 and colour = \\"red\\""``) as the JSON form; others unchanged.

    Raises:
        SubscriptionError: the text does not parse (the message says where in it).

    Example:
        >>> text_constraints({"id": "s1", "constraints": "a >= 1 and b between 2 and 3"})
        {'id': 's1', 'constraints': [{'attr': 'a', 'op': '>=', 'value': 1}, \
{'attr': 'b', 'op': 'between', 'low': 2, 'high': 3}]}
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("constraints"), str):
        return doc
    try:
        constraints = parse_constraints(doc["constraints"])
    except SubscriptionError as exc:
        msg = f"constraints: {exc}"
        raise SubscriptionError(msg) from exc
    return {**doc, "constraints": [_json_constraint(c) for c in constraints]}


def _json_constraint(c: Constraint) -> dict[str, object]:
    if c.op == "between":
        return {"attr": c.attr, "op": c.op, "low": c.low, "high": c.high}
    return {"attr": c.attr, "op": c.op, "value": c.value}


def _event(doc: object) -> Event:
    return parse_json_event(doc)


def options(args: argparse.Namespace) -> dict[str, object]:
    """Index options for the chosen algorithm."""
    if args.algorithm in ("rein", "hcem"):
        return {"buckets": args.buckets}
    if args.algorithm == "predicate-table":
        return {"interface_limit": args.interface_limit}
    return {}


def run_index(args: argparse.Namespace) -> int:
    """``semps content index``: load, build, save; one summary line on stdout."""
    if args.buckets < 1:
        raise SubscriptionError(f"--buckets must be at least 1, not {args.buckets}")
    need_output(args.output)
    threads = use_threads(args)
    index = ContentMatcher(args.algorithm, buckets=args.buckets).index
    load_bulk(args.subscriptions, index, workers=min(4, threads))
    if not isinstance(index, CompiledIndex):  # pragma: no cover (rein and hcem are)
        raise TypeError(type(index))
    save_index(index, args.output, source_digest=file_digest(args.subscriptions))
    print(f"{args.output}: {len(index)} subscriptions, {args.algorithm}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.batch < 1:
        raise SubscriptionError(f"--batch must be at least 1, not {args.batch}")
    need_input(args.events, "events")  # told before the subscriptions load, not after
    threads = use_threads(args)
    matcher = ContentMatcher(args.algorithm, **options(args))
    if args.index is not None:
        matcher.index = load_index(args.index)
        matcher.algorithm = matcher.index.name
    elif matcher.index.bulk_loadable:
        load_bulk(args.subscriptions, matcher.index, workers=min(4, threads))
    else:
        load_each(args.subscriptions, _subscription, matcher.index.add)
    matcher.index.prepare(args.batch)  # e.g. HCEM's cell bitsets, for events one at a time
    writer = LineWriter(sys.stdout)
    pending: list[Event] = []
    for item in read_jsonl(args.events, _event, JSONEventError):
        pending.append(item)
        if len(pending) == args.batch:
            writer.write([e.id for e in pending], matcher.match_events(pending))
            pending.clear()
    if pending:
        writer.write([e.id for e in pending], matcher.match_events(pending))
    return 0


def load_bulk(path: Path, index: ContentIndex, *, workers: int | None = None) -> None:
    """Index every subscription line in chunks (:func:`parse_json_many`); the first bad
    line, or repeated id, stops the run as the one-by-one path would.

    Files over :data:`PARALLEL_BYTES` are decoded and validated by ``workers`` forked
    processes (:mod:`semps.pool`; default: one per core numba may use, at most 4); this
    process indexes their chunks in file order. Where it may not fork
    (:func:`semps.pool.can_fork`), it decodes them itself.
    """
    paused = gc.isenabled()
    gc.disable()  # millions of short-lived dicts, no cycles: collections would only rescan
    try:
        if workers is None:
            workers = min(4, max_threads())
        if not pool.can_fork():
            workers = 1
        size = path.stat().st_size if path.is_file() else 0
        with progress(size, "B", "loading", in_bytes=True) as tick:
            if workers > 1 and size > PARALLEL_BYTES:
                _load_parallel(path, index, workers, tick)
            else:
                for first, lines in raw_chunks(path):
                    _index_chunk(path, index, _parse_chunk(path, lines, first))
                    tick(sum(map(len, lines)))
    finally:
        if paused:
            gc.enable()


#: Files larger than this are parsed by worker processes.
PARALLEL_BYTES = 64 << 20


class _Parsed(NamedTuple):
    """A chunk parsed: its subscriptions, the ids of its lines before the first bad one
    (in line order), and the error that stops the run after them, if any."""

    parsed: ParsedSubscriptions
    ids: list[str]
    error: SempsError | None


def _parse_chunk(path: Path, lines: list[bytes], first: int) -> _Parsed:
    part = decode_lines(path, lines, first, SubscriptionError)
    docs, text_error = list(part.docs), None
    for i, doc in enumerate(docs):
        try:
            docs[i] = text_constraints(doc)
        except SubscriptionError as exc:
            docs, text_error = docs[:i], (i, exc)
            break
    parsed, bad = parse_json_many(docs)
    bad = bad or text_error
    end = bad[0] if bad else len(docs)
    error = located(path, part.numbers[end], bad[1]) if bad is not None else part.error
    return _Parsed(parsed, [doc["id"] for doc in docs[:end]], error)


def _parse_task(path: str, start: int, end: int) -> tuple[_Parsed, int]:
    """A worker's chunk: the bytes ``[start, end)`` of the file, parsed; and its line count.
    Line numbers are relative (the parent re-reads a chunk with an error to locate it)."""
    gc.disable()
    with open(path, "rb") as stream:
        stream.seek(start)
        lines = io.BytesIO(stream.read(end - start)).readlines()
    return _parse_chunk(Path(path), lines, 1), len(lines)


def _chunk_parser(path: str, progress: object) -> Callable[[tuple[int, int]], object]:
    """A worker's handler: a chunk's byte range -> :func:`_parse_task`'s answer."""
    del progress
    return lambda request: _parse_task(path, *request)


def _index_chunk(path: Path, index: ContentIndex, chunk: _Parsed) -> None:
    """Index a parsed chunk, then raise its error (if any)."""
    try:
        index.add_many(chunk.parsed)  # refuses ids already stored or repeated, changing nothing
    except ValueError:
        _repeated(path, chunk.ids, index)
    if chunk.error is not None:
        raise chunk.error


def _load_parallel(
    path: Path, index: ContentIndex, workers: int, tick: Callable[[int], object]
) -> None:
    parse_json_many([])  # compile (or load) the kernels once, before forking
    bounds = _chunk_bounds(path, CHUNK_BYTES)
    first = 1  # the number of the chunk's first line
    started = pool.start_workers(workers, _chunk_parser, (str(path),), inherit=True)
    try:
        results = pool.ordered_replies(started, bounds)
        for (start, end), (chunk, count) in zip(bounds, results, strict=True):
            if chunk.error is not None:  # parse it here again, to say which line
                with path.open("rb") as stream:
                    stream.seek(start)
                    lines = io.BytesIO(stream.read(end - start)).readlines()
                chunk = _parse_chunk(path, lines, first)
            _index_chunk(path, index, chunk)
            tick(end - start)
            first += count
    finally:
        for worker in started:  # each has its own pipe: stopping one leaves no lock held
            worker.kill()


#: Bytes of the file per worker chunk.
CHUNK_BYTES = 32 << 20


def _chunk_bounds(path: Path, size: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``size`` bytes, each ending after a newline (or at the end)."""
    total = path.stat().st_size
    bounds = []
    with path.open("rb") as stream:
        start = 0
        while start < total:
            stream.seek(min(total, start + size))
            stream.readline()
            end = min(total, stream.tell())
            bounds.append((start, end))
            start = end
    return bounds


def _repeated(path: Path, ids: list[str], index: ContentIndex) -> None:
    """Raise for the first of ``ids`` (in line order) indexed or listed before it."""
    here: set[str] = set()
    for sub_id in ids:
        if sub_id in here or sub_id in index:
            raise SubscriptionError(duplicate_message(path, sub_id))
        here.add(sub_id)
    raise AssertionError("no repeated id")  # pragma: no cover
