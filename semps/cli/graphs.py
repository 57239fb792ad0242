"""The knowledge graph ``semps match --graph`` matches against: an RDF file, a folder of RDF
files, or a data directory's stored graph (read, never written)."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

from semps._types import Triple
from semps.cli.progress import progress
from semps.errors import GraphLimitExceeded, IngestError
from semps.graph.batch import BatchReader
from semps.graph.graph import DATABASE, KnowledgeGraph, connect
from semps.graph.view import GraphView
from semps.limits import Limits
from semps.ontology.expansion import Expansion

RDF_SUFFIXES = (".rdf", ".owl", ".xml", ".ttl", ".nt", ".jsonld")
#: Loads from the command line are the user's own files: no triples limit (the machine's
#: memory is), a large closure allowed.
CLI_LIMITS = Limits(
    max_load_triples=1 << 40,
    max_edit_inferred=1 << 40,
    max_graph_triples=1 << 40,
    graph_timeout=math.inf,
)


def graph_files(path: Path) -> list[Path]:
    """The RDF files of a graph folder, sorted."""
    return sorted(p for p in path.iterdir() if p.suffix.lower() in RDF_SUFFIXES)


def load_graph(
    path: Path | None,
    expansion: Expansion,
    facts: Sequence[Triple],
    base: str | None,
    limits: Limits = CLI_LIMITS,
) -> GraphView:
    """The graph of ``path`` (a data directory, a folder of RDF files or one file) under
    ``expansion``, with ``facts`` merged in (an ontology document's individuals);
    ``limits.max_load_triples`` bounds its asserted triples (by default, none).

    Raises:
        IngestError: a file does not parse (named in the message).
        StoreError: a data directory's graph cannot be read.
        GraphLimitExceeded: more asserted triples than ``limits.max_load_triples``.
    """
    if path is not None and path.is_dir() and (path / DATABASE).is_file():
        graph = KnowledgeGraph.open(connect(path / DATABASE), expansion, limits=limits, write=False)
        if facts:
            graph.view.apply(graph.plan_load(list(facts)))
        _check_asserted(graph.view, limits)
        return graph.view
    files = [] if path is None else graph_files(path) if path.is_dir() else [path]
    reader = BatchReader(limits)
    reader.extend(facts)
    total = sum(f.stat().st_size for f in files)
    with progress(total, "B", "reading the graph", in_bytes=True) as tick:
        for f in files:
            try:
                reader.read(f.read_bytes(), filename=f.name, base=base)
            except IngestError as exc:
                msg = f"{f}:{exc}"
                raise IngestError(msg) from exc
            tick(f.stat().st_size)
            bound = limits.max_load_triples  # told before the rest is read (repeats aside)
            if reader.read_so_far > bound and len(reader.batch()) > bound:
                break
    graph = KnowledgeGraph(expansion, limits=limits)
    with progress(1 << 40, "triple", "closing the graph") as tick:
        graph.load(reader.batch(), tick=tick)
    if sys.stderr.isatty():
        print(f"semps: the graph holds {len(graph)} triples with its closure", file=sys.stderr)
    return graph.view


def _check_asserted(view: GraphView, limits: Limits) -> None:
    """Refuse a stored graph with more asserted triples than ``limits.max_load_triples``."""
    asserted = sum(int(seg.packed()[1].sum()) for seg in view.triples.segments.values())
    if asserted > limits.max_load_triples:
        msg = (
            f"the graph holds {asserted} triples, over the limit of "
            f"{limits.max_load_triples} (max_load_triples)"
        )
        raise GraphLimitExceeded(msg)
