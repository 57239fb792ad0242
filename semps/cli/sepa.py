"""``semps sepa``: a SEPA application's JSAP file (:mod:`semps.api.jsap`) used with semps.

``semps sepa queries FILE [--out DIR]`` writes the JSAP's named queries as SPARQL texts
(its ``namespaces`` as PREFIX lines, its forced bindings as a VALUES row): one JSON line
``{"name", "sparql"}`` each on stdout, or one ``NAME.rq`` file each in ``DIR`` (what
``semps subscriptions load DIR`` registers).

``semps sepa subscribe FILE --url URL [--token T] [--query NAME]...`` registers them (or
the ones named) on a running server as semantic subscriptions named after the queries
(``POST /subscriptions/batch``): one ``<name>\\t<id>`` line each on stdout, each refused one
a ``semps: <name>: <why>`` line on stderr (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from semps.api.jsap import Jsap, JsapError, read_jsap
from semps.cli.options import server_options, token_of
from semps.cli.subscriptions import report
from semps.client import Client


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps sepa``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    queries = _action(
        sub,
        run_queries,
        "write a JSAP's named queries as SPARQL texts",
        "write a JSAP's named queries (prefixes and forced bindings applied) as JSON lines, "
        "or as NAME.rq files in a folder",
    )
    queries.add_argument("--out", type=Path, metavar="DIR", help="write NAME.rq files here")
    subscribe = _action(
        sub,
        run_subscribe,
        "register a JSAP's named queries as subscriptions on a server",
        "register a JSAP's named queries as semantic subscriptions named after them, "
        "through POST /subscriptions/batch",
    )
    server_options(subscribe)
    subscribe.add_argument(
        "--query", action="append", metavar="NAME", help="only this query (repeatable)"
    )


def _action(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], int],
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """``semps sepa ACTION FILE``: ``run_ACTION`` on a JSAP file."""
    action = sub.add_parser(run.__name__.removeprefix("run_"), help=help, description=description)
    action.add_argument("jsap", type=Path, metavar="FILE", help="a JSAP file (JSON)")
    action.set_defaults(func=run)
    return action


def _read(path: Path) -> Jsap:
    jsap = read_jsap(path.read_text(encoding="utf-8"))
    if not jsap.queries:
        msg = f"{path}: the JSAP names no queries"
        raise JsapError(msg)
    if jsap.updates:
        names = ", ".join(jsap.updates)
        print(f"semps: {path}: updates not read ({names}): POST them to /update", file=sys.stderr)
    return jsap


def run_queries(args: argparse.Namespace) -> int:
    """Write the queries."""
    jsap = _read(args.jsap)
    if args.out is None:
        for name, text in jsap.queries.items():
            print(json.dumps({"name": name, "sparql": text}, ensure_ascii=False))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in jsap.queries.items():
        if not name or "/" in name or name.startswith("."):
            msg = f"query name {name!r} cannot be a file name"
            raise JsapError(msg)
        (args.out / f"{name}.rq").write_text(text + "\n", encoding="utf-8")
    print(f"semps: wrote {len(jsap.queries)} queries to {args.out}", file=sys.stderr)
    return 0


def run_subscribe(args: argparse.Namespace) -> int:
    """Register the queries; 1 if any was refused."""
    token = token_of(args)
    jsap = _read(args.jsap)
    chosen = args.query or list(jsap.queries)
    unknown = [n for n in chosen if n not in jsap.queries]
    if unknown:
        msg = f"no query {unknown[0]!r} in {args.jsap} (it names {', '.join(jsap.queries)})"
        raise JsapError(msg)
    with Client(args.url, token, timeout=args.timeout) as client:
        outcomes = client.subscribe_many([(jsap.queries[n], n) for n in chosen])
    return 1 if report(chosen, outcomes) else 0
