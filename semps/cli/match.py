"""``semps match``: a folder of events against a folder of subscriptions, as JSONL."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from semps._types import Triple
from semps.cli.options import base_option, graph_option, index_option, ontology_option
from semps.cli.progress import progress
from semps.errors import SempsError, SubscriptionError
from semps.event import Event
from semps.gcpolicy import BatchCollector, paused_gc
from semps.graph.view import GraphView
from semps.ingest.rdf import read_events
from semps.matcher.base import MatchContext
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.bulk import add_parsed_ahead
from semps.matcher.semantic.matcher import load_matcher
from semps.matcher.semantic.snapshot import subscriptions_digest
from semps.matcher.values import Subscription
from semps.ontology import Expansion, load_ontology

RDF_SUFFIXES = (".rdf", ".owl", ".xml", ".ttl", ".nt", ".jsonld")
BATCH = 64
IN_FLIGHT = 3  # batches queued ahead with several workers
#: Moves the progress bar on (by events written).
Tick = Callable[[int], object]


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps match``."""
    ontology_option(parser)
    parser.add_argument("--subscriptions", type=Path, help="a folder of .rq files, or one .rq file")
    index_option(parser)
    parser.add_argument(
        "--events", type=Path, required=True, help="an RDF file or a folder of RDF files"
    )
    graph_option(
        parser,
        "a knowledge graph: an RDF file, a folder of RDF files, or a data directory "
        "(semps graph load); each event then matches with the solutions it adds to the "
        "graph's answers",
    )
    parser.add_argument("--workers", type=int, default=1, help="cores for verification")
    base_option(parser)
    parser.set_defaults(func=run)


class SubscriptionFiles(list[Subscription]):
    """Subscriptions read from ``.rq`` files, and the file each came from (``paths``: by
    id), so an error names the file as the user gave it, as event errors do."""

    def __init__(self, found: list[tuple[Subscription, Path]]) -> None:
        super().__init__(sub for sub, _ in found)
        self.paths = {sub.id: path for sub, path in found}


def load_subscriptions(path: Path) -> SubscriptionFiles:
    """Every ``*.rq`` in the folder ``path`` (id = file stem), sorted by id; or the one
    ``.rq`` file ``path``.

    Raises:
        SempsError: ``path`` is missing, or a file that is not ``.rq``.
    """
    expected = "expected a folder of .rq files, or one .rq file"
    if path.is_file():
        if path.suffix.lower() != ".rq":
            msg = f"--subscriptions {path} is a file but not a .rq file ({expected})"
            raise SempsError(msg)
        paths = [path]
    elif path.is_dir():
        # what sorted(path.glob("*.rq")) gives, without comparing 100k Paths part by part
        with os.scandir(path) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".rq"))
        paths = [path / name for name in names]
    else:
        msg = f"subscriptions not found: {path} ({expected})"
        raise SempsError(msg)
    found = []
    with progress(len(paths), "subscription", "reading") as tick:
        for rq in paths:
            found.append((Subscription(rq.stem, "semantic", _read_text(rq)), rq))
            tick(1)
    return SubscriptionFiles(found)


def _read_text(path: Path) -> str:
    """``path.read_text(encoding="utf-8")`` (newlines translated as it does), in a
    quarter less time."""
    with open(path, "rb") as file:
        text = file.read().decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def event_files(path: Path) -> list[Path]:
    """The RDF files to read, sorted by event id (file stem)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        msg = f"events not found: {path}"
        raise SempsError(msg)
    files = [p for p in path.iterdir() if p.suffix.lower() in RDF_SUFFIXES]
    return sorted(files, key=lambda p: p.stem)


@contextmanager
def _building() -> Iterator[None]:
    """The cyclic GC off while an index is built (:func:`paused_gc`), and what was built
    frozen out of later collections (frozen before the GC is back on: the first
    collection after would otherwise scan every object built, ~1 s at 100k
    subscriptions; registration leaves no cyclic garbage to collect)."""
    with paused_gc():
        yield
        gc.freeze()


def build_matcher(subscriptions: list[Subscription], workers: int) -> SemanticMatcher:
    """Register every subscription (an error names its file: the path it was read from,
    for :class:`SubscriptionFiles`); many are parsed ahead by a helper process on a second
    core (:mod:`semps.matcher.semantic.bulk`)."""
    matcher = SemanticMatcher(workers=workers)
    paths = subscriptions.paths if isinstance(subscriptions, SubscriptionFiles) else {}
    with _building(), progress(len(subscriptions), "subscription", "registering") as tick:

        def add(sub: Subscription) -> None:
            try:
                matcher.add(sub)
            except SubscriptionError as exc:
                msg = f"{paths.get(sub.id, f'{sub.id}.rq')}:{exc}"
                raise SubscriptionError(msg) from exc
            tick(1)

        add_parsed_ahead(subscriptions, add, matcher.limits)
    return matcher


def matcher_from(args: argparse.Namespace) -> SemanticMatcher:
    """The matcher of ``--index`` (checked against ``--subscriptions`` when both are
    given) or of ``--subscriptions``."""
    if args.index is None:
        if args.subscriptions is None:
            msg = "give the subscriptions: --subscriptions FOLDER or --index SNAPSHOT"
            raise SempsError(msg)
        return build_matcher(load_subscriptions(args.subscriptions), args.workers)
    expect = None
    if args.subscriptions is not None:
        expect = subscriptions_digest(load_subscriptions(args.subscriptions))
    with _building():
        return load_matcher(args.index, workers=args.workers, expect_sha256=expect)


def ontology_and_facts(path: Path | None) -> tuple[Expansion, tuple[Triple, ...]]:
    """The ontology's rules, and the facts its document holds (a note on stderr: they go
    to the knowledge graph, never dropped in silence)."""
    if path is None:
        return Expansion(), ()
    expansion, facts = load_ontology(path)
    note_facts(path, facts)
    return expansion, facts


def note_facts(path: Path, facts: Sequence[Triple]) -> None:
    """Say on stderr that an ontology document's facts join the knowledge graph (if any)."""
    if facts:
        print(
            f"semps: note: {path} holds {len(facts)} triples about individuals (facts, not "
            "axioms): they join the knowledge graph (--graph)",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    files = event_files(args.events)  # a wrong path is told before the long load
    if args.graph is not None and not args.graph.exists():
        msg = f"graph not found: {args.graph}"
        raise SempsError(msg)
    expansion, facts = ontology_and_facts(args.ontology)
    graph = None
    if args.graph is not None or facts:
        from semps.cli.graphs import load_graph

        graph = load_graph(args.graph, expansion, facts, args.base)
    matcher = matcher_from(args)
    matcher.start(graph, expansion)
    try:
        with progress(len(files), "event", "matching") as tick:
            if args.workers > 1:
                _pipelined(matcher, files, args.base, expansion, tick, graph)
                return 0
            batch: list[Event] = []
            collector = BatchCollector()  # the cyclic GC between batches, not during them
            for event in read_events(files, args.base):
                batch.append(event)
                if len(batch) == BATCH:
                    _flush(matcher, batch, expansion, collector, tick, graph)
            _flush(matcher, batch, expansion, collector, tick, graph)
    finally:
        matcher.close()
    return 0


def _pipelined(
    matcher: SemanticMatcher,
    files: list[Path],
    base: str | None,
    expansion: Expansion,
    tick: Tick,
    graph: GraphView | None = None,
) -> None:
    """Several workers: they read the event files themselves; a few batches in flight, so
    they never wait for this process to write (requests are paths: they never fill a
    pipe)."""
    pending: deque[tuple[int, Callable[[], list[str]]]] = deque()
    for start in range(0, len(files), BATCH):
        chunk = [str(p) for p in files[start : start + BATCH]]
        pending.append((len(chunk), matcher.submit_files(chunk, base, expansion, graph)))
        if len(pending) > IN_FLIGHT:
            _write(*pending.popleft(), tick)
    while pending:
        _write(*pending.popleft(), tick)


def _write(n: int, collect: Callable[[], list[str]], tick: Tick) -> None:
    sys.stdout.write("".join(line + "\n" for line in collect()))
    sys.stdout.flush()
    tick(n)


def _flush(
    matcher: SemanticMatcher,
    batch: list[Event],
    expansion: Expansion,
    collector: BatchCollector,
    tick: Tick,
    graph: GraphView | None = None,
) -> None:
    contexts = [MatchContext(e, expansion, graph=graph) for e in batch]
    # The output carries counts only: the same counts path as `semps spark match`.
    with collector.batch():
        lines = matcher.result_lines(contexts)
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
    tick(len(batch))
    batch.clear()
