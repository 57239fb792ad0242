"""``semps composite run``: composite-event detection over a stream of primitive events.

The stream is read in chunks of lines, decoded with orjson (the standard library behind it,
so what a line means and which lines are refused do not change), handed to the compiled
tree as node ids in one call per chunk, and the detections are written per chunk.

Each arrival happens at its ``"time"`` (a finite number of seconds), else at its line's
index; times never go backwards (an arrival before the one ahead of it stops the run), and a
detection is reported ``"at"`` the time of the arrival that completed it, as the stream gave
it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
import orjson

from semps.cli.paths import need_input
from semps.errors import CompositeDefinitionError, SempsError
from semps.matcher.composite import EventTree, parse_definitions

#: Bytes of stream read per chunk (about 100k short lines).
_CHUNK_BYTES = 2 << 20


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps composite``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    run_p = sub.add_parser("run", help="detect composite events in a stream of events (JSONL)")
    run_p.add_argument(
        "--definitions",
        type=Path,
        required=True,
        help="text file of composite event definitions (create event NAME ...; see "
        "docs/composite.md)",
    )
    run_p.add_argument(
        "--stream",
        type=Path,
        required=True,
        help='JSONL file of arrivals, {"event": name, "time": seconds (optional)} a line',
    )
    run_p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    need_input(args.definitions, "definitions")
    need_input(args.stream, "stream")
    try:
        definitions = parse_definitions(args.definitions.read_text(encoding="utf-8"))
    except CompositeDefinitionError as exc:
        msg = f"{args.definitions}:{exc}"
        raise CompositeDefinitionError(msg) from exc
    tree = EventTree(constituents=False)  # the output names detections only
    tree.define(definitions)
    writer = _Writer(tree, sys.stdout)
    at = 0  # the line index: an arrival's default time
    last: tuple[float, object, int] = (-math.inf, None, -1)  # the last arrival: time, label, line
    try:
        with args.stream.open("rb") as stream:
            while lines := stream.readlines(_CHUNK_BYTES):
                batch = _arrivals(tree, lines, at)
                batch = _in_order(batch, last)
                writer.detect(batch.ids, batch.times, batch.labels)  # what came before a bad line
                if batch.bad is not None:
                    line, reason = batch.bad
                    raise SempsError(f"{args.stream}:{line + 1}: {reason}")
                if len(batch.times):
                    last = (float(batch.times[-1]), batch.labels[-1], int(batch.lines[-1]))
                at += len(lines)
    finally:
        writer.close()
    return 0


class _Batch(NamedTuple):
    """A chunk's arrivals: node ids, times, labels (the time as the stream gave it: the
    ``"at"`` written), line indexes, whether each gave its time (``None``: none did); and
    the first bad line (index, reason), if any."""

    ids: np.ndarray
    times: np.ndarray
    labels: np.ndarray
    lines: np.ndarray
    given: np.ndarray | None
    bad: tuple[int, str] | None

    def cut(self, k: int, bad: tuple[int, str]) -> _Batch:
        """The arrivals before the ``k``-th, and ``bad``."""
        given = None if self.given is None else self.given[:k]
        return _Batch(self.ids[:k], self.times[:k], self.labels[:k], self.lines[:k], given, bad)


def _in_order(batch: _Batch, last: tuple[float, object, int]) -> _Batch:
    """``batch`` up to its first arrival earlier than the one before it (``last``: the
    previous chunk's last arrival), which becomes its bad line."""
    last_time, last_label, last_line = last
    before = np.concatenate(([last_time], batch.times[:-1]))
    back = np.flatnonzero(batch.times < before)
    if not len(back):
        return batch
    k = int(back[0])
    line = int(batch.lines[k])
    prev_label, prev_line = (
        (last_label, last_line) if k == 0 else (batch.labels[k - 1], int(batch.lines[k - 1]))
    )
    given = batch.given is not None and bool(batch.given[k])
    said = "" if given else " (its line's index: the line gives no time)"
    reason = (
        f"time {batch.labels[k]}{said} is before {prev_label}, the time of line "
        f"{prev_line + 1}: times must not go backwards"
    )
    return batch.cut(k, (line, reason))


_BLANK, _ODD = -2, -3


def _arrivals(tree: EventTree, lines: list[bytes], first: int) -> _Batch:
    """The arrivals among ``lines`` (line ``first`` on), up to the first bad line.

    A stream repeats a few lines (one per primitive) many times, so each distinct line is
    decoded once; lines with a ``time``, and bad ones, are read one by one.
    """
    kinds: dict[bytes, int] = dict.fromkeys(lines, 0)
    for line in kinds:
        kinds[line] = _kind(tree, line)
    codes = np.fromiter(map(kinds.__getitem__, lines), np.int64, count=len(lines))
    if (codes == _ODD).any():
        return _arrivals_each(tree, lines, first)
    keep = np.flatnonzero(codes != _BLANK)
    arrivals = keep + first
    return _Batch(codes[keep], arrivals.astype(np.float64), arrivals, arrivals, None, None)


def _kind(tree: EventTree, line: bytes) -> int:
    """A line's node id (-1: no definition uses it), or blank, or odd (read it alone)."""
    if not line.strip():
        return _BLANK
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _ODD
    if type(item) is not dict or "event" not in item or "time" in item:
        return _ODD
    name = item["event"]
    return int(tree.node_ids([name if type(name) is str else str(name)])[0])


def _arrivals_each(tree: EventTree, lines: list[bytes], first: int) -> _Batch:
    """:func:`_arrivals` one line at a time, as ``json.loads`` reads them."""
    names: list[str] = []
    labels: list[object] = []
    done: list[int] = []
    given: list[bool] = []
    bad = None
    for at, line in enumerate(lines, start=first):
        try:
            if not line.decode("utf-8").strip():  # Unicode spaces too, as before
                continue
            item: Any = json.loads(line)
            name = str(item["event"])
        except (ValueError, KeyError, TypeError):
            found = line.decode("utf-8").strip()[:60]  # not UTF-8: the command says so
            bad = (at, f'expected {{"event": name}} but found {found!r}')
            break
        time = item.get("time", at)
        if type(time) not in (int, float) or not math.isfinite(time):
            bad = (at, f"time must be a finite number of seconds, not {time!r}")
            break
        names.append(name)
        labels.append(time)
        done.append(at)
        given.append("time" in item)
    times = np.array([float(t) for t in labels], np.float64)  # type: ignore[arg-type]
    stamps = np.array(labels, object)
    return _Batch(
        tree.node_ids(names), times, stamps, np.array(done, np.int64), np.array(given, bool), bad
    )


class _Writer:
    """Runs batches through the tree and writes ``{"at", "detected"}`` lines (``at``: the
    completing arrival's time, as the stream gave it).

    Lines are formatted and written by one worker thread, in batch order, while the next
    batch runs in the compiled tree (which releases the GIL).
    """

    def __init__(self, tree: EventTree, out: IO[str]) -> None:
        self.tree = tree
        self.out = out
        names = tree.node_names()
        self.quoted = np.array([encode_basestring_ascii(n) for n in names.tolist()], object)
        order = sorted(range(len(names)), key=names.__getitem__)
        self.rank = np.empty(len(names), np.int64)
        self.rank[order] = np.arange(len(names))
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pending: deque[Future[None]] = deque()

    def detect(self, ids: np.ndarray, times: np.ndarray, labels: np.ndarray) -> None:
        """Run one batch (``labels``: each arrival's ``"at"``); its lines are written before
        any later batch's."""
        if not len(ids):
            return
        at, nodes = self.tree.run_nodes(ids, times)
        if not len(at):
            return
        while len(self._pending) > 1:  # at most two batches' detections waiting
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self._write, at, nodes, labels))

    def close(self) -> None:
        """Wait for every line to be written (re-raising a failed write)."""
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pool.shutdown()

    def _write(self, at: np.ndarray, nodes: np.ndarray, labels: np.ndarray) -> None:
        # Per arrival, composites by name: ``at`` is sorted already, so a stable sort of
        # (arrival, name rank) only reorders inside arrivals (runs timsort merges fast).
        order = np.argsort(at * len(self.rank) + self.rank[nodes], kind="stable")
        at, nodes = at[order], nodes[order]
        quoted = self.quoted[nodes].tolist()
        cut = np.flatnonzero(np.diff(at)) + 1
        bounds = [0, *cut.tolist(), len(at)]
        lines = labels[at[bounds[:-1]]].tolist()
        join = ", ".join
        self.out.write(
            "".join(
                [
                    f'{{"at": {n}, "detected": [{join(quoted[a:b])}]}}\n'
                    for n, a, b in zip(lines, bounds, bounds[1:], strict=False)
                ]
            )
        )
