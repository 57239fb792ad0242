"""``semps graph``: the knowledge graph of a data directory, from the command line.

- ``semps graph load FILE... --data-dir DIR``: bulk-load RDF documents (merged, or
  ``--replace``), progress on stderr;
- ``semps graph update 'SPARQL UPDATE' --data-dir DIR`` (or ``--file FILE``, ``-`` for
  stdin): run a SPARQL 1.1 Update, all or nothing;
- ``semps graph export --data-dir DIR``: the asserted triples (``--closure``: the inferred
  ones too) as Turtle, N-Triples, RDF/XML or JSON-LD on stdout;
- ``semps graph info --data-dir DIR``: sizes, as JSON.

The ontology is ``--ontology FILE``, else the data directory's own (``ontology.sqlite3``,
what ``semps serve`` keeps), else none. Run these on a data directory no ``semps serve``
is using (a running service keeps the graph in memory: edit it over HTTP instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from semps.cli.options import base_option
from semps.cli.progress import progress
from semps.errors import SempsError
from semps.graph.change import GraphChange
from semps.graph.formats import export_type
from semps.graph.graph import DATABASE, KnowledgeGraph, connect
from semps.graph.store import GraphStore, fingerprint
from semps.limits import DEFAULT_LIMITS
from semps.ontology.expansion import Expansion

ONTOLOGY_DATABASE = "ontology.sqlite3"


#: The offline tool's limits: the service's, without its clock and its total size (the
#: operator's own data, on the operator's time; the bound on what one load infers stays).
OFFLINE = dataclasses.replace(DEFAULT_LIMITS, graph_timeout=math.inf, max_graph_triples=1 << 40)


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps graph``."""
    sub = parser.add_subparsers(dest="graph_command", metavar="COMMAND", required=True)
    load = sub.add_parser("load", help="bulk-load RDF documents into the knowledge graph")
    load.add_argument("files", type=Path, nargs="+", help="RDF documents (.ttl, .nt, .rdf, ...)")
    load.add_argument("--replace", action="store_true", help="replace the graph's triples")
    load.add_argument("--media-type", help="override the syntax chosen by file suffix")
    base_option(load, "base IRI for relative references")
    load.set_defaults(func=run_load)
    update = sub.add_parser("update", help="run a SPARQL 1.1 Update on the knowledge graph")
    update.add_argument("text", nargs="?", help="the update (or --file)")
    update.add_argument("--file", type=Path, help="read the update from a file ('-': stdin)")
    base_option(update, "base IRI for relative references")
    update.set_defaults(func=run_update)
    export = sub.add_parser("export", help="write the knowledge graph as an RDF document")
    export.add_argument(
        "--format", default="turtle", help="turtle, nt, rdfxml, jsonld (or a media type)"
    )
    export.add_argument("--closure", action="store_true", help="inferred triples too")
    export.set_defaults(func=run_export)
    info = sub.add_parser("info", help="the knowledge graph's sizes, as JSON")
    info.set_defaults(func=run_info)
    for command in (load, update, export, info):
        command.add_argument("--data-dir", type=Path, required=True, help="the data directory")
        command.add_argument("--ontology", type=Path, help="the ontology (default: DIR's own)")


def data_dir_ontology(args: argparse.Namespace) -> Expansion:
    """``--ontology``, else the data directory's ontology store, else none."""
    if args.ontology is not None:
        from semps.ontology.load import load_expansion

        return load_expansion(args.ontology)
    path = args.data_dir / ONTOLOGY_DATABASE
    if not path.is_file():
        return Expansion()
    return _stored_ontology(path)


def _stored_ontology(path: Path) -> Expansion:
    from semps.ontology.store import OntologyStore

    store = OntologyStore(path)
    try:
        return store.expansion()
    finally:
        store.close()


@contextmanager
def _stage(what: str) -> Iterator[Callable[[int], object]]:
    """A progress bar for a stage of unknown length (its count shown as it grows)."""
    with progress(1 << 40, "triple", what) as tick:
        yield tick


def open_graph(args: argparse.Namespace, write: bool = True) -> KnowledgeGraph:
    """The data directory's graph. Under an ontology named with ``--ontology`` other than
    the one it was closed under, its closure is recomputed (and stored when ``write``);
    without ``--ontology``, a graph closed under another ontology than the data
    directory's is refused (rather than recomputed under the wrong one)."""
    if not args.data_dir.is_dir() and args.graph_command != "load":
        msg = f"data directory not found: {args.data_dir}"
        raise SempsError(msg)
    expansion = data_dir_ontology(args)
    conn = connect(args.data_dir / DATABASE)
    stored = GraphStore(conn).meta("ontology")
    if args.ontology is None and stored is not None and stored != fingerprint(expansion):
        msg = (
            f"the graph in {args.data_dir} was closed under another ontology than the data "
            "directory's: name it with --ontology FILE"
        )
        raise SempsError(msg)
    with _stage("closing under the ontology") as tick:
        return KnowledgeGraph.open(conn, expansion, tick=tick, write=write, limits=OFFLINE)


def _report(change: GraphChange, started: float, graph: KnowledgeGraph) -> None:
    summary = change.summary()
    print(
        f"semps: graph version {summary['version']}: {summary['inserted']} triples inserted, "
        f"{summary['deleted']} deleted; {summary['inferred_added']} inferred added, "
        f"{summary['inferred_removed']} removed; {len(graph)} in the closure "
        f"({time.perf_counter() - started:.2f} s)",
        file=sys.stderr,
    )


def run_load(args: argparse.Namespace) -> int:
    for path in args.files:  # every file named is checked before the long work
        if not path.is_file():
            msg = f"graph document not found: {path}"
            raise SempsError(msg)
    graph = open_graph(args)
    started = time.perf_counter()
    total = sum(p.stat().st_size for p in args.files)
    with progress(total, "B", "reading", in_bytes=True) as tick:
        from semps.graph.batch import BatchReader

        reader = BatchReader(graph.limits)
        for path in args.files:
            try:
                reader.read(
                    path.read_bytes(),
                    media_type=args.media_type,
                    filename=path.name,
                    base=args.base,
                )
            except SempsError as exc:
                msg = f"{path}:{exc}"
                raise type(exc)(msg) from exc
            tick(path.stat().st_size)
    with _stage("closing and storing") as tick:
        change = graph.load(reader.batch(), replace=args.replace, tick=tick)
    _report(change, started, graph)
    return 0


def run_update(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.file is None):
        msg = "give the update as an argument or with --file (not both)"
        raise SempsError(msg)
    if args.file is not None:
        text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text("utf-8")
    else:
        text = args.text
    graph = open_graph(args)
    started = time.perf_counter()
    change = graph.update(text, base=args.base)
    _report(change, started, graph)
    return 0


def run_export(args: argparse.Namespace) -> int:
    media_type = export_type(args.format)  # a bad format is told before the graph is read
    graph = open_graph(args, write=False)
    sys.stdout.buffer.write(graph.export(media_type, closure=args.closure))
    sys.stdout.flush()
    return 0


def run_info(args: argparse.Namespace) -> int:
    graph = open_graph(args, write=False)
    assert graph.store is not None
    asserted = sum(1 for _ in graph.view.triples.triples(asserted_only=True))
    sizes = graph.store.size()
    info = {
        "version": graph.version,
        "asserted": asserted,
        "closure": len(graph),
        **sizes,
        "file_bytes": (args.data_dir / DATABASE).stat().st_size,
    }
    print(json.dumps(info, indent=2))
    return 0
