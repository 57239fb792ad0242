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
    tree = EventTree()
    tree.define(definitions)
    with args.stream.open(encoding="utf-8") as stream:
        for at, line in enumerate(stream):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                name = str(item["event"])
                now = float(item.get("time", at))
            except (ValueError, KeyError, TypeError) as exc:
                found = line.strip()[:60]
                msg = f'{args.stream}:{at + 1}: expected {{"event": name}} but found {found!r}'
                raise SempsError(msg) from exc
            found = tree.occur(name, now, [{"event": name, "at": at}])
            if found:
                sys.stdout.write(
                    json.dumps({"at": at, "detected": sorted(n for n, _ in found)}) + "\n"
                )
    return 0
