"""``semps symmetric match``: subscription regions against publication regions, as JSONL."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from semps.errors import JSONEventError
from semps.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.symmetric import RegionSubscription, SymmetricMatcher
from semps.matcher.symmetric.region import parse_region_subscription

from .jsonl import load_each, match_jsonl


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps symmetric``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
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
    matcher = SymmetricMatcher()
    return match_jsonl(
        args.subscriptions,
        args.events,
        matcher=matcher,
        load=lambda path: load_each(path, _subscription, matcher.index.add),
        event=_event,
        batch=args.batch,
    )
