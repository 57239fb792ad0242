"""``semps explain``: why one subscription matches one event, or why it does not."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semps._types import Triple
from semps.cli.match import note_facts
from semps.cli.options import base_option, graph_option, ontology_option
from semps.cli.paths import need_input
from semps.errors import SempsError, SubscriptionError
from semps.ingest.rdf import read_events
from semps.matcher.explanation import prefixes_of, render_text, to_json
from semps.matcher.semantic.explain import explain
from semps.matcher.values import Subscription
from semps.ontology import Expansion
from semps.ontology.compile import compile_axioms
from semps.ontology.load import ontology_triples
from semps.ontology.split import split


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps explain``."""
    parser.add_argument(
        "--subscription", type=Path, required=True, help="the subscription (.rq file)"
    )
    parser.add_argument(
        "--event", type=Path, required=True, help="the event (.rdf, .ttl, .nt, .jsonld)"
    )
    ontology_option(parser)
    graph_option(
        parser,
        "a knowledge graph (an RDF file, a folder of them, or a data directory): "
        "explain the solutions the event adds to the graph's",
    )
    base_option(parser, "base IRI of the event (default urn:semps:event:<stem>/)")
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text for people (the default), or one JSON document",
    )
    parser.set_defaults(func=run)


def _ontology(path: Path | None) -> tuple[Expansion, tuple[Triple, ...], tuple[Triple, ...]]:
    """The ontology's rules, its axiom triples and its facts (for the graph, with a note)."""
    if path is None:
        return Expansion(), (), ()
    found = split(ontology_triples(path))
    note_facts(path, found.facts)
    return compile_axioms(found.axioms), tuple(found.axioms), tuple(found.facts)


def _one_file(path: Path, what: str) -> None:
    """Stop unless ``path`` is a file (``semps match`` reads folders)."""
    need_input(path, what)
    if path.is_dir():
        msg = f"--{what} takes one file, not a folder: {path} (semps match reads folders)"
        raise SempsError(msg)


def run(args: argparse.Namespace) -> int:
    need_input(args.ontology, "ontology")
    if args.graph is not None and not args.graph.exists():
        msg = f"graph not found: {args.graph}"
        raise SempsError(msg)
    _one_file(args.subscription, "subscription")
    _one_file(args.event, "event")
    try:
        text = args.subscription.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read the subscription {args.subscription}: {exc}"
        raise SempsError(msg) from exc
    (event,) = read_events([args.event], args.base)
    expansion, axioms, facts = _ontology(args.ontology)
    graph = None
    if args.graph is not None or facts:
        from semps.cli.graphs import load_graph

        graph = load_graph(args.graph, expansion, facts, args.base)
    sub = Subscription(args.subscription.stem, "semantic", text)
    try:
        found = explain(sub, event, expansion, graph=graph, axioms=axioms)
    except SubscriptionError as exc:
        msg = f"{args.subscription}:{exc}"
        raise SubscriptionError(msg) from exc
    if args.format == "json":
        json.dump(to_json(found), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(found, prefixes_of(text)) + "\n")
    return 0
