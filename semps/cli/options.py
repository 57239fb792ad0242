"""Options that mean the same in several commands, declared once so that their flag, type
and help stay alike from one command to the next.

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="semps explain")
    >>> ontology_option(parser)
    >>> parser.parse_args(["--ontology", "campus.ttl"]).ontology
    PosixPath('campus.ttl')
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from semps.errors import SempsError

__all__ = [
    "base_option",
    "data_dir_option",
    "graph_option",
    "index_option",
    "ontology_option",
    "server_options",
    "token_of",
]

#: ``--base`` of the commands that read events: each event's own base by default.
EVENT_BASE = "base IRI for relative references (default per event)"


def ontology_option(parser: argparse.ArgumentParser, help: str = "OWL/RDFS ontology file") -> None:
    """``--ontology FILE``: the ontology the command reasons with (``help`` says how)."""
    parser.add_argument("--ontology", type=Path, help=help)


def base_option(parser: argparse.ArgumentParser, help: str = EVENT_BASE) -> None:
    """``--base IRI``: what relative references in the documents read are resolved against."""
    parser.add_argument("--base", help=help)


def graph_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--graph FILE_OR_DIR``: a knowledge graph (an RDF file, a folder of them, or a data
    directory) the events are matched against."""
    parser.add_argument("--graph", type=Path, metavar="FILE_OR_DIR", help=help)


def index_option(parser: argparse.ArgumentParser) -> None:
    """``--index FILE``: a snapshot of parsed subscriptions (``semps index``), read instead
    of the subscriptions themselves."""
    parser.add_argument(
        "--index",
        type=Path,
        help="a snapshot written by semps index, read instead of parsing the subscriptions "
        "(with --subscriptions too, it is refused unless built from exactly those)",
    )


def data_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--data-dir DIR``: the service's data directory, as ``semps serve`` finds it."""
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="the service's data directory (default: $SEMPS_DATA_DIR or var/semps)",
    )


def server_options(parser: argparse.ArgumentParser) -> None:
    """``--url``, ``--token`` and ``--timeout``: the server a command registers on."""
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", help="a subscriber token (default $SEMPS_TOKEN)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a request may take")


def token_of(args: argparse.Namespace) -> str:
    """``--token``, else ``$SEMPS_TOKEN``.

    Raises:
        SempsError: neither is given.
    """
    token = args.token or os.environ.get("SEMPS_TOKEN")
    if not token:
        msg = "no token: pass --token or set SEMPS_TOKEN (a subscriber token)"
        raise SempsError(msg)
    return str(token)
