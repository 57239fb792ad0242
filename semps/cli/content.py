"""``semps content match``: content subscriptions against content events, as JSONL."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semps.errors import JSONEventError, SubscriptionError
from semps.ingest.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.base import MatchContext
from semps.matcher.content import ALGORITHMS, ContentMatcher, subscription_from_json
from semps.matcher.content.constraints import ContentSubscription

from .jsonl import read_jsonl


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
    if args.batch < 1:
        raise SubscriptionError(f"--batch must be at least 1, not {args.batch}")
    matcher = ContentMatcher(args.algorithm, **options(args))
    seen: dict[str, int] = {}
    for number, sub in enumerate(
        read_jsonl(args.subscriptions, _subscription, SubscriptionError), start=1
    ):
        if sub.id in seen:
            msg = f"{args.subscriptions}: duplicate subscription id {sub.id!r}"
            raise SubscriptionError(msg)
        seen[sub.id] = number
        matcher.index.add(sub)
    batch: list[Event] = []
    for event in read_jsonl(args.events, _event, JSONEventError):
        batch.append(event)
        if len(batch) == args.batch:
            _flush(matcher, batch)
    _flush(matcher, batch)
    return 0


def _flush(matcher: ContentMatcher, batch: list[Event]) -> None:
    contexts = [MatchContext(e) for e in batch]
    for event, matches in zip(batch, matcher.match_batch(batch, contexts), strict=True):
        line = {"event": event.id, "matches": [m.subscription for m in matches]}
        sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    batch.clear()
