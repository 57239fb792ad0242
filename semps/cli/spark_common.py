"""What the ``semps spark`` commands share (``match``, ``place``, ``convert`` in
:mod:`semps.cli.spark`, ``stream`` in :mod:`semps.cli.spark_stream`): their common options,
the Spark session they ask for, a mined placement's options, and reading subscriptions of
any kind before Spark starts."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from semps.errors import GraphLimitExceeded, SempsError, SubscriptionError
from semps.limits import DEFAULT_LIMITS
from semps.matcher.base import Matcher
from semps.matcher.values import Subscription

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from semps.graph.view import GraphView
    from semps.ingest.sparql import Query
    from semps.ontology.expansion import Expansion
    from semps.spark.placement import PlacementOptions

__all__ = [
    "common_arguments",
    "graph_arguments",
    "load_any_subscriptions",
    "ontology_and_graph",
    "placement_arguments",
    "placement_options",
    "session",
]


def common_arguments(parser: argparse.ArgumentParser) -> None:
    """``--master``, ``--conf``, ``--py-files``, ``--jars`` and ``--verbose``: every Spark
    command's."""
    parser.add_argument("--master", help="Spark master URL (default local[*])")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting"
    )
    parser.add_argument(
        "--py-files",
        help="comma-separated .zip/.py files for the executors (semps spark package's zip)",
    )
    parser.add_argument("--jars", help="comma-separated jars, added before the JVM starts")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show Spark's own log lines on stderr (by default they go to a file)",
    )


def placement_arguments(parser: argparse.ArgumentParser, choice: str | None = None) -> None:
    """The options of a mined placement, and with a ``choice`` help text, ``--placement``
    (``none`` or ``mined``) to ask for one."""
    if choice is not None:
        parser.add_argument("--placement", choices=("none", "mined"), default="none", help=choice)
    parser.add_argument("--partitions", type=int, default=8, help="placement partitions")
    parser.add_argument("--min-support", type=float, default=0.05, help="FPGrowth support")
    parser.add_argument("--virtual", type=int, help="M, virtual N-itemsets (default P/4)")
    parser.add_argument("--overload", type=float, default=2.0, help="spread above this x mean")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    parser.add_argument(
        "--mine-sample",
        type=int,
        default=10_000,
        help="mine a random sample of this many subscriptions (0: all of them)",
    )


def session(args: argparse.Namespace) -> SparkSession:
    """The Spark session for a command's ``--master`` and ``--conf`` options."""
    from semps.spark.session import spark_session

    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            msg = f"--conf expects KEY=VALUE, not {item!r}"
            raise SempsError(msg)
        conf[key.strip()] = value.strip()
    if getattr(args, "py_files", None):
        conf["spark.submit.pyFiles"] = args.py_files
    if getattr(args, "jars", None):
        conf["spark.jars"] = args.jars
    if getattr(args, "engine", None) == "graphframes":
        from semps.spark.jars import with_graphframes_jar

        conf = with_graphframes_jar(conf)
    if sys.stderr.isatty():
        conf.setdefault("spark.ui.showConsoleProgress", "true")
    return spark_session(args.master, conf=conf, verbose=getattr(args, "verbose", False))


def load_any_subscriptions(
    path: Path, parses: dict[str, Query] | None = None
) -> list[Subscription]:
    """Semantic subscriptions from a folder of ``.rq`` files, or content and region
    subscriptions from JSON Lines (``{"id", "constraints"}`` / ``{"id", "region"}``),
    validated here so a bad one is named before Spark starts (semantic texts parsed on the
    way are added to ``parses``: the workers get them as a snapshot)."""
    from semps.cli.jsonl import read_jsonl
    from semps.cli.match import build_matcher, load_subscriptions
    from semps.ingest.sparql import parse_memo
    from semps.matcher.semantic import SemanticMatcher

    if path.is_dir():
        subscriptions = load_subscriptions(path)
        with parse_memo({} if parses is None else parses, SemanticMatcher.limits):
            build_matcher(subscriptions, workers=1).close()  # errors name the file
        return subscriptions
    validators: dict[str, Matcher] = {}
    found = list(
        read_jsonl(path, lambda doc: _json_subscription(doc, validators), SubscriptionError)
    )
    seen: set[str] = set()
    for number, sub in enumerate(found, start=1):
        if sub.id in seen:
            msg = f"{path}: duplicate subscription id {sub.id!r} (subscription {number})"
            raise SubscriptionError(msg)
        seen.add(sub.id)
    return found


def _json_subscription(doc: object, validators: dict[str, Matcher]) -> Subscription:
    from semps.matcher.registry import create_matcher

    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str) or not doc["id"]:
        msg = 'a subscription line needs a non-empty string "id"'
        raise SubscriptionError(msg)
    kind = "symmetric" if "region" in doc else "content"
    sub = Subscription(doc["id"], kind, json.dumps(doc))
    validator = validators.get(kind)
    if validator is None:
        validator = validators[kind] = create_matcher(kind)
    validator.add(sub)  # a SubscriptionError here is located by read_jsonl
    return sub


def placement_options(args: argparse.Namespace) -> PlacementOptions:
    """The mined placement's options given by :func:`placement_arguments`."""
    from semps.spark.placement import PlacementOptions

    sample = args.mine_sample if args.mine_sample > 0 else None
    return PlacementOptions(
        args.partitions, args.min_support, args.virtual, args.overload, args.seed, sample
    )


def graph_arguments(parser: argparse.ArgumentParser) -> None:
    """``--graph`` and ``--max-graph-triples``: a knowledge graph to match with, as
    ``semps match --graph``."""
    parser.add_argument(
        "--graph",
        type=Path,
        metavar="FILE_OR_DIR",
        help="a knowledge graph: an RDF file, a folder of RDF files, or a data directory "
        "(semps graph load), loaded and closed on the driver and shipped to the executors "
        "once; each event then matches with the solutions it adds to the graph's answers",
    )
    parser.add_argument(
        "--max-graph-triples",
        type=int,
        default=DEFAULT_LIMITS.max_load_triples,
        metavar="N",
        help="refuse a graph of more asserted triples than this (default %(default)s, "
        "max_load_triples): every executor holds its closure in memory",
    )


def check_graph_options(args: argparse.Namespace, semantic: bool) -> None:
    """Refuse what cannot match a graph, before anything is loaded: a missing ``--graph``,
    a bound that is not positive, subscriptions that are not semantic (``semantic``), and a
    mined placement or the GraphFrames engine (both pick an event's subscriptions from what
    the event alone carries).

    Raises:
        SempsError: one of those, said.
    """
    if args.max_graph_triples <= 0:
        msg = f"--max-graph-triples must be a positive number, not {args.max_graph_triples}"
        raise SempsError(msg)
    if args.graph is None:
        return
    if not args.graph.exists():
        msg = f"graph not found: {args.graph}"
        raise SempsError(msg)
    if not semantic:
        msg = "--graph matches SPARQL subscriptions: give a folder of .rq files or --index"
        raise SempsError(msg)
    _refuse_routing(args, "--graph")


def _refuse_routing(args: argparse.Namespace, what: str) -> None:
    """Refuse a mined placement or the GraphFrames engine with a graph (``what`` says where
    it came from)."""
    if getattr(args, "placement", "none") != "none":
        msg = (
            f"{what} matches without placement (it routes events by what they carry "
            "alone): drop --placement"
        )
        raise SempsError(msg)
    if getattr(args, "engine", "matcher") != "matcher":
        msg = f"{what} matches with the matcher engine: drop --engine graphframes"
        raise SempsError(msg)


def ontology_and_graph(args: argparse.Namespace) -> tuple[Expansion, GraphView | None]:
    """The ontology's rules (``--ontology``) and the knowledge graph to match with
    (``--graph``, with the individuals the ontology document holds), loaded and closed on
    the driver as ``semps match`` loads them; ``None`` for no graph. One line on stderr
    says what was loaded.

    Raises:
        OntologyError, IngestError: a file that does not parse (named).
        GraphLimitExceeded: more than ``--max-graph-triples`` asserted triples.
        SempsError: individuals in the ontology document (a graph) with a placement or the
            GraphFrames engine.
    """
    from semps.cli.graphs import load_graph
    from semps.cli.match import ontology_and_facts
    from semps.limits import Limits
    from semps.spark.session import note

    expansion, facts = ontology_and_facts(args.ontology)
    if args.graph is None and not facts:
        return expansion, None
    if args.graph is None:
        _refuse_routing(args, f"a graph (the individuals of --ontology {args.ontology})")
    limits = Limits(
        max_load_triples=args.max_graph_triples,
        max_edit_inferred=1 << 40,
        max_graph_triples=1 << 40,
        graph_timeout=math.inf,
    )
    try:
        graph = load_graph(args.graph, expansion, facts, args.base, limits)
    except GraphLimitExceeded as exc:
        where = f"--graph {args.graph}" if args.graph is not None else f"--ontology {args.ontology}"
        msg = f"{where}: {exc}; --max-graph-triples raises the limit"
        raise GraphLimitExceeded(msg) from exc
    note(
        f"semps: the graph holds {len(graph)} triples with its closure ({len(graph.terms)} "
        "terms), shipped to the executors once"
    )
    return expansion, graph
