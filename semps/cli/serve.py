"""``semps serve``: run the broker service (FastAPI under uvicorn)."""

from __future__ import annotations

import argparse
import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from semps.limits import Limits

DEFAULT_DATA_DIR = Path(os.environ.get("SEMPS_DATA_DIR", "var/semps"))


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps serve``."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--max-body", type=int, default=16 * 1024 * 1024, help="bytes")
    parser.add_argument("--webhook-attempts", type=int, default=5)
    parser.add_argument("--webhook-backoff", type=float, default=0.5, help="seconds, doubling")
    parser.add_argument(
        "--webhook-allow",
        action="append",
        default=[],
        metavar="CIDR_OR_HOST",
        help="let webhooks call this network or host name although it is loopback, private, "
        "link-local or otherwise non-public (repeatable; refused by default)",
    )
    parser.add_argument(
        "--max-streams",
        type=int,
        default=16,
        help="open SSE and WebSocket streams per subscriber (one more is a 429)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="matching processes, each holding every subscription index (default: up to 2)",
    )
    add_limit_flags(parser)
    parser.set_defaults(func=run)


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """One ``--max-...`` flag per documented limit (:class:`semps.limits.Limits`)."""
    from dataclasses import fields

    from semps.limits import DEFAULT_LIMITS, Limits

    for f in fields(Limits):
        if f.name == "max_event_bytes":  # that one is --max-body
            continue
        default = getattr(DEFAULT_LIMITS, f.name)
        parser.add_argument(
            "--" + f.name.replace("_", "-"),
            type=type(default),
            default=default,
            help=f"limit (default {default}); see the README's limits table",
        )


def limits_from(args: argparse.Namespace) -> Limits:
    """The :class:`semps.limits.Limits` the flags ask for."""
    from dataclasses import fields

    from semps.limits import Limits

    values = {f.name: getattr(args, f.name) for f in fields(Limits) if hasattr(args, f.name)}
    return Limits(**{**values, "max_event_bytes": args.max_body})


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from semps.api.app import create_app

    app = create_app(
        args.data_dir,
        max_body=args.max_body,
        webhook_attempts=args.webhook_attempts,
        webhook_backoff=args.webhook_backoff,
        webhook_allow=args.webhook_allow,
        max_streams=args.max_streams,
        limits=limits_from(args),
        workers=args.workers,
    )
    # Requests allocate many short-lived objects and few cycles: collect seldom, and never
    # walk what start-up built (the subscriptions, the ontology).
    gc.set_threshold(50_000, 20, 100)
    gc.collect()
    gc.freeze()
    uvicorn.run(
        app, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=3
    )
    return 0
