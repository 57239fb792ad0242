"""``semps index``: parse a folder of semantic subscriptions once and save a snapshot."""

from __future__ import annotations

import argparse
from pathlib import Path

from semps.cli.paths import need_output
from semps.ingest.sparql import Query, parse_memo
from semps.limits import DEFAULT_LIMITS
from semps.matcher.semantic.snapshot import save_snapshot

from .match import build_matcher, load_subscriptions


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps index``."""
    parser.add_argument(
        "--subscriptions", type=Path, required=True, help="a folder of .rq files, or one .rq file"
    )
    parser.add_argument(
        "--output", type=Path, required=True, help="the snapshot to write (for semps match --index)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Register every subscription as ``semps match`` does (so the snapshot holds only
    what registers), keeping each text's parse, and save them; one summary line."""
    need_output(args.output)
    subscriptions = load_subscriptions(args.subscriptions)
    queries: dict[str, Query] = {}
    with parse_memo(queries, DEFAULT_LIMITS):
        matcher = build_matcher(subscriptions, 1)
    save_snapshot(args.output, subscriptions, queries, matcher.limits)
    size = args.output.stat().st_size
    print(
        f"{args.output}: {len(subscriptions)} subscriptions, {len(queries)} distinct texts, "
        f"{size} bytes"
    )
    return 0
