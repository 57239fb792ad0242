"""``semps composite run``: composite-event detection over a stream of primitive events.

The stream is read in chunks of lines, decoded with orjson (the standard library behind it,
so what a line means and which lines are refused do not change), handed to the compiled
tree as node ids in one call per chunk, and the detections are written per chunk.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, Any

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
    at = 0  # the line index: an arrival's default time and its "at"
    try:
        with args.stream.open("rb") as stream:
            while lines := stream.readlines(_CHUNK_BYTES):
                ids, times, arrivals, bad = _arrivals(tree, lines, at)
                writer.detect(ids, times, arrivals)  # what came before a bad line
                if bad is not None:
                    found = lines[bad - at].decode("utf-8").strip()[:60]
                    msg = f'{args.stream}:{bad + 1}: expected {{"event": name}} but found '
                    raise SempsError(msg + repr(found))
                at += len(lines)
    finally:
        writer.close()
    return 0


_BLANK, _ODD = -2, -3


def _arrivals(
    tree: EventTree, lines: list[bytes], first: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int | None]:
    """(node ids, times, line indexes) of the arrivals among ``lines`` (line ``first`` on),
    up to the first bad line, whose index comes last (``None`` when all are good).

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
    return codes[keep], arrivals.astype(np.float64), arrivals, None


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


def _arrivals_each(
    tree: EventTree, lines: list[bytes], first: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int | None]:
    """:func:`_arrivals` one line at a time, as ``json.loads`` reads them."""
    names: list[str] = []
    times: list[float] = []
    done: list[int] = []
    bad = None
    for at, line in enumerate(lines, start=first):
        try:
            if not line.decode("utf-8").strip():  # Unicode spaces too, as before
                continue
            item: Any = json.loads(line)
            name = str(item["event"])
            now = float(item.get("time", at))
        except (ValueError, KeyError, TypeError):
            bad = at
            break
        names.append(name)
        times.append(now)
        done.append(at)
    return tree.node_ids(names), np.array(times, np.float64), np.array(done, np.int64), bad


class _Writer:
    """Runs batches through the tree and writes ``{"at", "detected"}`` lines.

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

    def detect(self, ids: np.ndarray, times: np.ndarray, arrivals: np.ndarray) -> None:
        """Run one batch; its lines are written before any later batch's."""
        if not len(ids):
            return
        at, nodes = self.tree.run_nodes(ids, times)
        if not len(at):
            return
        while len(self._pending) > 1:  # at most two batches' detections waiting
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self._write, at, nodes, arrivals))

    def close(self) -> None:
        """Wait for every line to be written (re-raising a failed write)."""
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pool.shutdown()

    def _write(self, at: np.ndarray, nodes: np.ndarray, arrivals: np.ndarray) -> None:
        # Per arrival, composites by name: ``at`` is sorted already, so a stable sort of
        # (arrival, name rank) only reorders inside arrivals (runs timsort merges fast).
        order = np.argsort(at * len(self.rank) + self.rank[nodes], kind="stable")
        at, nodes = at[order], nodes[order]
        quoted = self.quoted[nodes].tolist()
        cut = np.flatnonzero(np.diff(at)) + 1
        bounds = [0, *cut.tolist(), len(at)]
        lines = arrivals[at[bounds[:-1]]].tolist()
        join = ", ".join
        self.out.write(
            "".join(
                [
                    f'{{"at": {n}, "detected": [{join(quoted[a:b])}]}}\n'
                    for n, a, b in zip(lines, bounds, bounds[1:], strict=False)
                ]
            )
        )
