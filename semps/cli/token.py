"""``semps token create``: print a new bearer token for the service."""

from __future__ import annotations

import argparse
from pathlib import Path

from semps.broker.store import ROLES, Store
from semps.cli.serve import DEFAULT_DATA_DIR


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps token``."""
    sub = parser.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create", help="create a token and print it")
    create.add_argument("--role", choices=ROLES, required=True)
    create.add_argument("--subject", help="who the token is for (default: generated)")
    create.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    create.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = Store(args.data_dir / "semps.sqlite3")
    try:
        print(store.create_token(args.role, args.subject))
    finally:
        store.close()
    return 0
