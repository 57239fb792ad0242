"""``semps subscriptions load``: register a folder of subscriptions on a running server, in
bulk (``POST /subscriptions/batch`` through :class:`~semps.client.Client`).

Each ``.rq`` file is one subscription named after its stem. stdout gets one line per
registered subscription, ``<name>\\t<id>``; each refused one is a ``semps: <file>: <why>``
line on stderr, with a summary at the end; the exit status is 1 when any was refused.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from semps.cli.options import server_options, token_of
from semps.cli.paths import need_input
from semps.cli.progress import progress
from semps.client import BatchSubscription, Client
from semps.errors import SempsError

#: Subscriptions a request carries by default.
CHUNK = 10_000


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps subscriptions``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    load = sub.add_parser(
        "load",
        help="register a folder of .rq files on a server, in bulk",
        description="register every .rq file of a folder (named after its stem) on a "
        "running server through POST /subscriptions/batch",
    )
    load.add_argument("folder", type=Path, metavar="DIR", help="a folder of .rq files")
    server_options(load)
    load.add_argument("--kind", default="semantic", help="the subscriptions' matcher")
    load.add_argument(
        "--chunk", type=int, default=CHUNK, help=f"subscriptions a request (default {CHUNK})"
    )
    load.set_defaults(func=run_load)


def report(
    names: Sequence[str],
    outcomes: Sequence[BatchSubscription],
    where: Sequence[str] | None = None,
) -> int:
    """One ``<name>\\t<id>`` line on stdout for each registered subscription, a ``semps:
    <where>: <why>`` line on stderr for each refused one (``where``: its name unless
    given); how many were refused."""
    refused = 0
    for i, (name, outcome) in enumerate(zip(names, outcomes, strict=True)):
        if isinstance(outcome, SempsError):
            refused += 1
            print(f"semps: {where[i] if where else name}: {outcome}", file=sys.stderr)
        else:
            print(f"{name}\t{outcome.id}")
    return refused


def run_load(args: argparse.Namespace) -> int:
    """Register the folder's subscriptions; 1 if any was refused."""
    token = token_of(args)
    need_input(args.folder, "subscriptions")
    if not args.folder.is_dir():
        msg = f"not a folder: {args.folder} (expected a folder of .rq files)"
        raise SempsError(msg)
    files = sorted(args.folder.glob("*.rq"))
    with (
        Client(args.url, token, timeout=args.timeout) as client,
        progress(len(files), "subscription", "registering") as tick,
    ):
        outcomes = client.subscribe_many(files, kind=args.kind, chunk=args.chunk, progress=tick)
    refused = report([path.stem for path in files], outcomes, [str(path) for path in files])
    print(
        f"semps: registered {len(files) - refused} of {len(files)} subscriptions"
        + (f" ({refused} refused)" if refused else ""),
        file=sys.stderr,
    )
    return 1 if refused else 0
