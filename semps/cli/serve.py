"""``semps serve``: run the broker service (FastAPI under uvicorn)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

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
    parser.set_defaults(func=run)


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
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
