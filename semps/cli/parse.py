"""``semps parse``: show how semps reads one RDF document."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semps.cli.options import base_option, ontology_option
from semps.cli.paths import need_input
from semps.errors import IngestError, SempsError
from semps.ingest.rdf import read_event
from semps.matcher.partab import npn, to_partab
from semps.ontology import Expansion, load_expansion
from semps.ontology.closure import close
from semps.terms import n3


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps parse``."""
    parser.add_argument("file", type=Path, help="an RDF document (.rdf, .ttl, .nt, .jsonld)")
    base_option(parser, "base IRI (default urn:semps:event:<file stem>/)")
    parser.add_argument(
        "--to",
        choices=["ntriples", "closed", "partab"],
        default="ntriples",
        help="print the triples (ntriples), the event after inference under --ontology as "
        "N-Triples (closed), or the event as the matcher sees it (partab)",
    )
    ontology_option(
        parser,
        "the ontology to infer with (--to closed) or to expand PartA/PartB through (--to partab)",
    )
    parser.add_argument("--media-type", help="override the syntax chosen by file suffix")
    parser.set_defaults(func=run)


#: The outputs that read ``--ontology``.
USES_ONTOLOGY = ("closed", "partab")


def run(args: argparse.Namespace) -> int:
    if args.ontology is not None and args.to not in USES_ONTOLOGY:
        msg = (
            f"--ontology is read by --to {' or '.join(USES_ONTOLOGY)} only: --to {args.to} "
            "prints the document's own triples, without inference"
        )
        raise SempsError(msg)
    need_input(args.ontology, "ontology")
    try:
        data = args.file.read_bytes()
    except OSError as exc:
        msg = f"{args.file}: {exc.strerror or exc}"
        raise IngestError(msg) from exc
    try:
        event = read_event(
            data,
            event_id=args.file.stem,
            media_type=args.media_type,
            filename=args.file.name,
            base=args.base,
        )
    except IngestError as exc:
        msg = f"{args.file}:{exc}"
        raise IngestError(msg) from exc
    expansion = load_expansion(args.ontology) if args.ontology else Expansion()
    if args.to in ("ntriples", "closed"):
        triples = event.triples if args.to == "ntriples" else close(expansion, event.triples)
        for s, p, o in triples:
            sys.stdout.write(f"{n3(s)} <{p}> {n3(o)} .\n")
        return 0
    parts = to_partab(event, expansion)
    doc = {
        "event": event.id,
        "PartA": {p: [npn(s, o) for s, o in pairs] for p, pairs in parts.part_a.items()},
        "PartB": parts.part_b,
    }
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
