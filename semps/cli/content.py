"""``semps content match``: content subscriptions against content events, as JSONL."""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

from semps.errors import SubscriptionError
from semps.ingest.event import Event
from semps.ingest.json_event import parse_json_event
from semps.matcher.content import ALGORITHMS, ContentMatcher, subscription_from_json
from semps.matcher.content.bulk import parse_json_many
from semps.matcher.content.constraints import ContentSubscription
from semps.matcher.content.index import ContentIndex

from .jsonl import duplicate_message, load_each, located, match_jsonl, read_chunks


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
    index = matcher.index

    def load(path: Path) -> None:
        if index.bulk_loadable:
            load_bulk(path, index)
        else:
            load_each(path, _subscription, index.add)

    return match_jsonl(
        args.subscriptions,
        args.events,
        matcher=matcher,
        load=load,
        event=_event,
        batch=args.batch,
    )


def load_bulk(path: Path, index: ContentIndex) -> None:
    """Index every subscription line in chunks (:func:`parse_json_many`); the first bad
    line, or repeated id, stops the run as the one-by-one path would."""
    paused = gc.isenabled()
    gc.disable()  # millions of short-lived dicts, no cycles: collections would only rescan
    try:
        _load_chunks(path, index)
    finally:
        if paused:
            gc.enable()


def _load_chunks(path: Path, index: ContentIndex) -> None:
    for part in read_chunks(path, SubscriptionError):
        parsed, bad = parse_json_many(part.docs)
        end = bad[0] if bad else len(part.docs)
        try:
            index.add_many(parsed)  # refuses ids already stored or repeated, changing nothing
        except ValueError:
            _repeated(path, [doc["id"] for doc in part.docs[:end]], index)
        if bad is not None:
            raise located(path, part.numbers[end], bad[1]) from bad[1]
        if part.error is not None:
            raise part.error


def _repeated(path: Path, ids: list[str], index: ContentIndex) -> None:
    """Raise for the first of ``ids`` (in line order) indexed or listed before it."""
    here: set[str] = set()
    for sub_id in ids:
        if sub_id in here or sub_id in index:
            raise SubscriptionError(duplicate_message(path, sub_id))
        here.add(sub_id)
    raise AssertionError("no repeated id")  # pragma: no cover
