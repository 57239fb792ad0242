"""``semps token create|list|revoke``: manage the service's bearer tokens.

These work on the data directory directly (the server need not run; a running server sees
a new or revoked token within seconds). ``semps token create`` prints the secret alone on
standard output (scripts capture it) and its id on standard error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime

from semps.broker.sqlite_store import SQLiteStore
from semps.broker.tokens import ROLES, TokenInfo
from semps.cli.options import data_dir_option
from semps.errors import SempsError
from semps.settings import default_data_dir, parse_duration


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps token``."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = sub.add_parser(
        "create", help="create a token and print it", description="Create a token and print it."
    )
    create.add_argument(
        "--role",
        choices=ROLES,
        required=True,
        help="what the token may do: admin (everything), publisher (publish events), "
        "subscriber (own subscriptions and their notifications)",
    )
    create.add_argument("--subject", help="who the token is for (default: a generated name)")
    create.add_argument(
        "--expires-in",
        metavar="DURATION",
        help="the token stops working after this long, e.g. 30d, 12h, 90m (default: never)",
    )
    data_dir_option(create)
    create.set_defaults(func=run_create)
    listing = sub.add_parser(
        "list", help="list the tokens (never their secrets)", description="List the tokens."
    )
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    data_dir_option(listing)
    listing.set_defaults(func=run_list)
    revoke = sub.add_parser(
        "revoke", help="revoke a token by its id", description="Revoke a token by its id."
    )
    revoke.add_argument("token_id", metavar="ID", help="the token's id (tok-..., see list)")
    data_dir_option(revoke)
    revoke.set_defaults(func=run_revoke)


def _store(args: argparse.Namespace, *, create: bool = False) -> SQLiteStore:
    path = (args.data_dir or default_data_dir()) / "semps.sqlite3"
    if not create and not path.exists():
        msg = f"no service data in {path.parent} (give --data-dir or set SEMPS_DATA_DIR)"
        raise SempsError(msg)
    return SQLiteStore(path)


def run_create(args: argparse.Namespace) -> int:
    expires = None
    if args.expires_in is not None:
        expires = time.time() + parse_duration(args.expires_in)
    store = _store(args, create=True)
    try:
        token_id, secret = store.create_token(args.role, args.subject, expires_at=expires)
    finally:
        store.close()
    print(secret)
    print(f"token id {token_id}", file=sys.stderr)
    return 0


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _state(token: TokenInfo, now: float) -> str:
    if token.revoked is not None:
        return "revoked"
    return "active" if token.active(now) else "expired"


def run_list(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        tokens = store.list_tokens()
    finally:
        store.close()
    now = time.time()
    if args.json:
        for t in tokens:
            row = {
                "id": t.id,
                "role": t.role,
                "subject": t.subject,
                "created": t.created,
                "expires": t.expires,
                "revoked": t.revoked,
                "state": _state(t, now),
            }
            print(json.dumps(row))
        return 0
    print(f"{'ID':<17} {'ROLE':<10} {'STATE':<8} {'EXPIRES':<20} SUBJECT")
    for t in tokens:
        print(f"{t.id:<17} {t.role:<10} {_state(t, now):<8} {_when(t.expires):<20} {t.subject}")
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        token = store.revoke_token(args.token_id)
    finally:
        store.close()
    print(f"revoked {token.id} ({token.role}, {token.subject})")
    return 0
