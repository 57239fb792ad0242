"""The ``semps`` command line.

Each command group lives in its own module below :mod:`semps.cli` and exposes
``register(subparsers)``; modules are imported only when their command runs, so
``semps --help`` stays fast and a missing optional dependency (pyspark) only affects its
own commands.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence

from semps import __version__
from semps.errors import SempsError

#: command -> its one-line help; the command is the module ``semps.cli.<command>``.
COMMANDS: dict[str, str] = {
    "parse": "show how semps reads one RDF document (N-Triples or PartA/PartB)",
    "match": "match a folder of events against a folder of subscriptions",
    "explain": "say why one subscription matches one event, or why it does not",
    "index": "parse a folder of subscriptions once and save it as a snapshot",
    "graph": "load, update and export the knowledge graph of a data directory",
    "demo": "match the bundled demo case and explain each notification",
    "serve": "run the broker service (HTTP API, Server-Sent Events)",
    "token": "create, list and revoke the service's bearer tokens",
    "ontology": "repair a stopped service's stored ontology (reset)",
    "subscriptions": "register a folder of subscriptions on a running server, in bulk",
    "sepa": "use a SEPA application's JSAP file: its named queries as subscriptions",
    "composite": (
        "detect composite events (sequences, conjunctions, time windows) in a stream of events"
    ),
    "content": "match attribute-value events against range and equality constraints",
    "symmetric": "match event regions against subscription regions (overlap)",
    "spark": "match many events at once, or place subscriptions, on Apache Spark",
}


class _Parser(argparse.ArgumentParser):
    """A parser whose (sub)command refuses unknown arguments itself, so the usage printed is
    that command's, with a suggestion for a misspelt option."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            msg = f"unrecognized arguments: {' '.join(extras)}"
            options = [o for action in self._actions for o in action.option_strings]
            close = difflib.get_close_matches(extras[0].split("=")[0], options, n=1, cutoff=0.7)
            if extras[0].startswith("-") and close:
                msg += f" (did you mean {close[0]}?)"
            self.error(msg)
        return parsed, extras


def _build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = _Parser(prog="semps", description="semps: semantic RDF publish/subscribe")
    parser.add_argument("--version", action="version", version=f"semps {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = argv[0] if argv and argv[0] in COMMANDS else None
    for name, help_text in COMMANDS.items():
        if name != wanted:  # only the command run is imported and declared in full
            sub.add_parser(name, help=help_text)
            continue
        mod = importlib.import_module(f"semps.cli.{name}")
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
    except OSError as exc:  # a file named on the command line cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"semps: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"semps: error: a file is not UTF-8 text ({exc.reason})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
