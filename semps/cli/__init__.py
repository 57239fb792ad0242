"""The ``semps`` command line.

Each command group lives in its own module below :mod:`semps.cli` and exposes
``register(subparsers)``; modules are imported only when their command runs, so
``semps --help`` stays fast and a missing optional dependency (pyspark) only affects its
own commands.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from semps import __version__
from semps.errors import SempsError

#: command -> (module below semps.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "parse": ("parse", "show how semps reads one RDF document (N-Triples or PartA/PartB)"),
    "match": ("match", "match a folder of events against a folder of subscriptions"),
    "demo": ("demo", "match the bundled demo case and explain each notification"),
    "serve": ("serve", "run the broker service (HTTP API, Server-Sent Events)"),
    "token": ("token", "create bearer tokens for the service"),
    "composite": ("composite", "composite event detection (seed 003)"),
    "content": ("content", "content-based matching: predicate table, REIN, HCEM (seeds 000/002)"),
    "symmetric": ("symmetric", "symmetric region matching (seed 000)"),
    "spark": ("spark", "bulk matching and placement on Apache Spark (seed 004)"),
}


def _build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="semps", description="semps: semantic RDF publish/subscribe"
    )
    parser.add_argument("--version", action="version", version=f"semps {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = argv[0] if argv and argv[0] in COMMANDS else None
    for name, (module, help_text) in COMMANDS.items():
        if wanted is not None and name != wanted:
            sub.add_parser(name, help=help_text)
            continue
        if wanted is None:
            sub.add_parser(name, help=help_text)
            continue
        mod = importlib.import_module(f"semps.cli.{module}")
        mod.register(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (errors print one line to stderr, exit 2)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser(args_list)
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if not args_list else 2
    try:
        return int(args.func(args) or 0)
    except SempsError as exc:
        print(f"semps: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `semps match ... | head`
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
