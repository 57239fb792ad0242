"""``semps content match``: content subscriptions against content events, as JSONL."""

from __future__ import annotations

import argparse
from pathlib import Path

from semps.ingest.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.content import ALGORITHMS, ContentMatcher, subscription_from_json
from semps.matcher.content.constraints import ContentSubscription

from .jsonl import match_jsonl


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps content``."""
    sub = parser.add_subparsers(dest="action", required=True)
    m = sub.add_parser("match", help="match content events (JSONL) against subscriptions (JSONL)")
    m.add_argument("--algorithm", choices=list(ALGORITHMS), default="hcem")
    m.add_argument("--subscriptions", type=Path, required=True, help='JSONL: {"id", "constraints"}')
    m.add_argument("--events", type=Path, required=True, help='JSONL: {"id", "values"}')
    m.add_argument("--batch", type=int, default=1000, help="events matched together (HCEM)")
    m.add_argument("--buckets", type=int, default=1000, help="REIN/HCEM buckets per list")
    m.add_argument(
        "--interface-limit",
        type=int,
        default=None,
        help="predicate table: aggregate an interface's entries beyond this many",
    )
    m.set_defaults(func=run)


def _subscription(doc: object) -> ContentSubscription:
    return subscription_from_json(doc)


def _event(doc: object) -> Event:
    return parse_json_event(doc)


def options(args: argparse.Namespace) -> dict[str, object]:
    """Index options for the chosen algorithm."""
    if args.algorithm in ("rein", "hcem"):
        return {"buckets": args.buckets}
    if args.algorithm == "predicate-table":
        return {"interface_limit": args.interface_limit}
    return {}


def run(args: argparse.Namespace) -> int:
    matcher = ContentMatcher(args.algorithm, **options(args))
    return match_jsonl(
        args.subscriptions,
        args.events,
        matcher=matcher,
        add=matcher.index.add,
        subscription=_subscription,
        event=_event,
        batch=args.batch,
    )
