"""``semps composite run``: composite-event detection over a stream of primitive events."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semps.errors import CompositeDefinitionError, SempsError
from semps.matcher.composite import EventTree, parse_definitions


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps composite``."""
    sub = parser.add_subparsers(dest="action", required=True)
    run_p = sub.add_parser("run", help="detect composites over a JSONL stream")
    run_p.add_argument("--definitions", type=Path, required=True, help="create event ...; text")
    run_p.add_argument("--stream", type=Path, required=True, help='JSONL: {"event": name, "time"?}')
    run_p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        definitions = parse_definitions(args.definitions.read_text(encoding="utf-8"))
    except CompositeDefinitionError as exc:
        msg = f"{args.definitions}:{exc}"
        raise CompositeDefinitionError(msg) from exc
    tree = EventTree(constituents=False)  # the output names detections only
    tree.define(definitions)
    with args.stream.open(encoding="utf-8") as stream:
        names: list[str] = []
        times: list[float] = []
        arrivals: list[int] = []
        for at, line in enumerate(stream):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                name = str(item["event"])
                now = float(item.get("time", at))
            except (ValueError, KeyError, TypeError) as exc:
                _detect(tree, names, times, arrivals)  # what came before the bad line
                found = line.strip()[:60]
                msg = f'{args.stream}:{at + 1}: expected {{"event": name}} but found {found!r}'
                raise SempsError(msg) from exc
            names.append(name)
            times.append(now)
            arrivals.append(at)
            if len(names) == _BATCH:
                _detect(tree, names, times, arrivals)
                names, times, arrivals = [], [], []
        _detect(tree, names, times, arrivals)
    return 0


#: Arrivals handed to the compiled tree in one call.
_BATCH = 65_536


def _detect(tree: EventTree, names: list[str], times: list[float], arrivals: list[int]) -> None:
    """Run one batch and write a line per arrival that detected something."""
    if not names:
        return
    detected: dict[int, list[str]] = {}
    found = tree.run(names, times)
    for i, name in zip(found.at.tolist(), found.names, strict=True):
        detected.setdefault(arrivals[i], []).append(name)
    sys.stdout.write(
        "".join(
            json.dumps({"at": at, "detected": sorted(composites)}) + "\n"
            for at, composites in detected.items()
        )
    )
