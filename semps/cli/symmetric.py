"""``semps symmetric match``: subscription regions against publication regions, as JSONL."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semps.errors import JSONEventError, SubscriptionError
from semps.ingest.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.base import MatchContext
from semps.matcher.symmetric import RegionSubscription, SymmetricMatcher
from semps.matcher.symmetric.region import parse_region_subscription

from .jsonl import read_jsonl


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps symmetric``."""
    sub = parser.add_subparsers(dest="action", required=True)
    m = sub.add_parser("match", help="match publication regions against subscription regions")
    m.add_argument("--subscriptions", type=Path, required=True, help='JSONL: {"id", "region"}')
    m.add_argument("--events", type=Path, required=True, help='JSONL: {"id", "region"}')
    m.add_argument("--batch", type=int, default=1000, help="publications matched together")
    m.set_defaults(func=run)


def _subscription(doc: object) -> RegionSubscription:
    return parse_region_subscription(json.dumps(doc))


def _event(doc: object) -> Event:
    event = parse_json_event(doc)
    if not event.regions:
        raise JSONEventError('a symmetric publication needs "region"')
    return event


def run(args: argparse.Namespace) -> int:
    if args.batch < 1:
        raise SubscriptionError(f"--batch must be at least 1, not {args.batch}")
    matcher = SymmetricMatcher()
    seen: set[str] = set()
    for sub in read_jsonl(args.subscriptions, _subscription, SubscriptionError):
        if sub.id in seen:
            msg = f"{args.subscriptions}: duplicate subscription id {sub.id!r}"
            raise SubscriptionError(msg)
        seen.add(sub.id)
        matcher.index.add(sub)
    batch: list[Event] = []
    for event in read_jsonl(args.events, _event, JSONEventError):
        batch.append(event)
        if len(batch) == args.batch:
            _flush(matcher, batch)
    _flush(matcher, batch)
    return 0


def _flush(matcher: SymmetricMatcher, batch: list[Event]) -> None:
    contexts = [MatchContext(e) for e in batch]
    for event, matches in zip(batch, matcher.match_batch(batch, contexts), strict=True):
        line = {"event": event.id, "matches": [m.subscription for m in matches]}
        sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    batch.clear()
