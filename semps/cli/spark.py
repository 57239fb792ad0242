"""``semps spark``: bulk matching, placement reports and triples tables on Apache Spark.

    semps spark match --ontology FILE --subscriptions DIR|--index SNAP --events PATH [--output PATH]
    semps spark place --subscriptions DIR [--events PATH] [--plot placement.png]
    semps spark convert --events PATH --output TABLE.parquet
    semps spark package --output DIR
    semps spark stream --events DIR --subscriptions DIR --checkpoint DIR --output DIR

Every command takes ``--master URL`` (default ``$SEMPS_SPARK_MASTER`` or ``local[*]``) and
``--conf KEY=VALUE``; under ``spark-submit`` the submitted settings win. Answers go to stdout
(or ``--output``), everything else to stderr (the JVM's under ``spark-submit``), and a Spark
failure is one ``semps: error:`` line with exit status 2.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from semps.cli.options import base_option, index_option, ontology_option
from semps.cli.paths import need_output
from semps.cli.spark_common import (
    check_graph_options,
    common_arguments,
    graph_arguments,
    load_any_subscriptions,
    ontology_and_graph,
    placement_arguments,
    placement_options,
    session,
)
from semps.cli.spark_stream import register_stream
from semps.errors import SempsError, SparkError
from semps.matcher.values import Subscription
from semps.spark.sources import FORMATS

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import SparkSession

    from semps.event import Event
    from semps.ingest.sparql import Query
    from semps.spark.placement import Placement


def spark_edge(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` with Spark's own failures (Py4J errors, ``AnalysisException``, failed tasks)
    turned into one-line :class:`SparkError` s; under ``spark-submit``, which merges our
    stderr into stdout, errors are written to the JVM's stderr here (exit status 2)."""

    @functools.wraps(run)
    def edged(args: argparse.Namespace) -> int:
        from semps.spark.session import note, under_spark_submit

        try:
            try:
                return run(args)
            except SempsError:
                raise
            except Exception as exc:
                if not _is_spark_error(exc):
                    raise
                from semps.spark.session import first_line

                raise SparkError(f"Spark failed: {first_line(exc)}") from exc
        except SempsError as exc:
            if not under_spark_submit():
                raise
            note(f"semps: error: {exc}")
            return 2

    return edged


def _is_spark_error(exc: Exception) -> bool:
    """An error raised by Spark or its Py4J bridge (their modules, by name)."""
    module = type(exc).__module__ or ""
    return module.startswith(("py4j", "pyspark"))


def register(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``semps spark``."""
    sub = parser.add_subparsers(dest="spark_command", metavar="COMMAND", required=True)
    match = sub.add_parser("match", help="match events against subscriptions in bulk")
    common_arguments(match)
    ontology_option(match)
    match.add_argument(
        "--subscriptions",
        type=Path,
        help="folder of .rq files, or JSON Lines of content/region subscriptions",
    )
    index_option(match)
    match.add_argument(
        "--events", required=True, help="RDF file/folder, triples table, or JSON events"
    )
    match.add_argument(
        "--events-format", choices=FORMATS, help="how to read --events (default: guessed)"
    )
    match.add_argument(
        "--output", help="a .jsonl file, or a Parquet folder (default: JSON lines on stdout)"
    )
    placement_arguments(
        match, "partition subscriptions by the mined placement instead of broadcasting them all"
    )
    match.add_argument(
        "--engine",
        choices=("matcher", "graphframes"),
        default="matcher",
        help="graphframes: a GraphFrames join picks each event's candidate subscriptions "
        "first (needs the provisioned jar; python -m semps.spark.jars)",
    )
    graph_arguments(match)
    base_option(match)
    match.set_defaults(func=spark_edge(run_match))

    place = sub.add_parser("place", help="report the placement mined from the subscriptions")
    common_arguments(place)
    place.add_argument(
        "--subscriptions", type=Path, required=True, help="folder of .rq files, or JSON Lines"
    )
    place.add_argument("--events", help="events to route (as for spark match)")
    place.add_argument("--events-format", choices=FORMATS, help="how to read --events")
    ontology_option(place)
    placement_arguments(place)
    place.add_argument(
        "--forwarding-degree", type=int, default=8, help="D: copies a node sends itself"
    )
    place.add_argument("--plot", default="placement.png", help="PNG file for the plot")
    place.add_argument("--json", dest="json_out", help="also write the report as JSON here")
    base_option(place)
    place.set_defaults(func=spark_edge(run_place))

    convert = sub.add_parser("convert", help="write events as a triples table")
    common_arguments(convert)
    convert.add_argument("--events", required=True, help="RDF file or folder")
    convert.add_argument("--events-format", choices=FORMATS, help="how to read --events")
    convert.add_argument("--output", required=True, help="a Parquet folder or a .jsonl folder")
    base_option(convert)
    convert.set_defaults(func=spark_edge(run_convert))

    package = sub.add_parser(
        "package", help="write the zip and driver script a cluster's executors need"
    )
    package.add_argument(
        "--output", type=Path, default=Path("dist"), help="folder to write into (default dist)"
    )
    package.set_defaults(func=run_package)

    register_stream(sub)


def _events(spark: SparkSession, args: argparse.Namespace) -> RDD[Event]:
    from pyspark import StorageLevel

    from semps.spark.sources import load_events, raise_load_errors

    events = load_events(spark, args.events, base=args.base, kind=args.events_format)
    events = events.persist(StorageLevel.MEMORY_AND_DISK)
    raise_load_errors(events)
    return events  # type: ignore[return-value]  # no LoadError is left


def _match_subscriptions(
    args: argparse.Namespace, parses: dict[str, Query]
) -> tuple[list[Subscription], bytes | None]:
    """The subscriptions of ``--index`` (checked against ``--subscriptions`` when both are
    given; its parses added to ``parses``) and its bytes, or those of ``--subscriptions``."""
    if args.index is None:
        if args.subscriptions is None:
            msg = "give the subscriptions: --subscriptions PATH or --index SNAPSHOT"
            raise SempsError(msg)
        return load_any_subscriptions(args.subscriptions, parses), None
    from semps.cli.match import load_subscriptions
    from semps.matcher.semantic import SemanticMatcher
    from semps.matcher.semantic.snapshot import (
        read_snapshot,
        snapshot_file_bytes,
        subscriptions_digest,
    )

    expect = None
    if args.subscriptions is not None:
        expect = subscriptions_digest(load_subscriptions(args.subscriptions))
    data = snapshot_file_bytes(args.index)
    limits = SemanticMatcher.limits
    snapshot = read_snapshot(data, name=str(args.index), expect_sha256=expect, limits=limits)
    parses.update(snapshot.queries)
    return list(snapshot.subscriptions), data


def run_match(args: argparse.Namespace) -> int:
    from semps.spark.answers import is_lines, write_lines, write_results
    from semps.spark.bulk import match_events, match_lines
    from semps.spark.session import note
    from semps.spark.sources import check_local, load_events, without_load_errors
    from semps.spark.waiting import ResourceWatch

    started = time.perf_counter()
    need_output(args.output)
    check_local(args.events)
    if args.engine == "graphframes" and args.placement != "none":
        msg = "--engine graphframes matches without placement: drop --placement"
        raise SempsError(msg)
    semantic = args.index is not None or (args.subscriptions and args.subscriptions.is_dir())
    check_graph_options(args, bool(semantic))
    parses: dict[str, Query] = {}
    subscriptions, snapshot = _match_subscriptions(args, parses)
    expansion, graph = ontology_and_graph(args)
    spark = session(args)
    with ResourceWatch(spark.sparkContext):
        placement, items = None, None
        if args.placement == "mined":  # events are matched where they are read, as below
            placement, items = _mine(spark, subscriptions, args)
        if args.engine == "graphframes":  # the graph join and the matcher read them
            events, errors = _events(spark, args), None
        else:  # read and match in one pass, nothing cached in between
            loaded = load_events(spark, args.events, base=args.base, kind=args.events_format)
            events, errors = without_load_errors(spark, loaded)
        if args.engine == "graphframes":
            from semps.spark.graph_join import match_graph

            results = match_graph(spark, events, subscriptions, expansion)
            count = write_results(spark, results, args.output, errors)
        elif placement is None and is_lines(args.output):  # lines written by the executors
            lines = match_lines(
                events,
                subscriptions,
                expansion,
                validate=False,
                queries=parses,
                snapshot=snapshot,
                graph=graph,
            )
            count = write_lines(lines, args.output, errors)
        else:
            results = match_events(
                events,
                subscriptions,
                expansion,
                placement=placement,
                seed=args.seed,
                validate=False,  # load_any_subscriptions did, naming the file
                items=items,
                queries=parses,
                snapshot=snapshot,
                graph=graph,
            )
            count = write_results(spark, results, args.output, errors)
    elapsed = time.perf_counter() - started
    note(
        f"semps: {count} events against {len(subscriptions)} subscriptions in {elapsed:.1f} s "
        f"(engine {args.engine}, placement {args.placement}, "
        f"{events.getNumPartitions()} partitions, "
        f"master {spark.sparkContext.master})"
    )
    return 0


def _mine(
    spark: SparkSession, subscriptions: list[Subscription], args: argparse.Namespace
) -> tuple[Placement, list[frozenset[str]]]:
    """The placement mined from the subscriptions, and their items (mined once, used again
    to place them)."""
    from semps.spark.placed import subscription_items

    items = subscription_items(subscriptions)
    return placement_options(args).mine(spark, items), items


def run_place(args: argparse.Namespace) -> int:
    from semps.ontology import Expansion, load_expansion
    from semps.spark.report import placement_report
    from semps.spark.sources import check_local

    check_local(args.events)
    for output in (args.plot, args.json_out):  # written after the Spark jobs
        need_output(output)
    subscriptions = load_any_subscriptions(args.subscriptions)
    expansion = load_expansion(args.ontology) if args.ontology else Expansion()
    spark = session(args)
    events = _events(spark, args) if args.events else None
    placement, items = _mine(spark, subscriptions, args)
    report = placement_report(
        placement,
        subscriptions,
        events,
        expansion,
        forwarding_degree=args.forwarding_degree,
        seed=args.seed,
        items=items,
    )
    print(report.text())
    if args.plot:
        report.plot(Path(args.plot))
        print(f"plot: {args.plot}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report.as_dict(), indent=2) + "\n")
    return 0


def run_convert(args: argparse.Namespace) -> int:
    from semps.spark.session import note
    from semps.spark.sources import check_local, write_table
    from semps.spark.waiting import ResourceWatch

    check_local(args.events)
    need_output(args.output)
    spark = session(args)
    with ResourceWatch(spark.sparkContext):
        events = _events(spark, args)
        triples = write_table(spark, events, args.output)
        note(f"semps: wrote {triples} triples of {events.count()} events to {args.output}")
    return 0


def run_package(args: argparse.Namespace) -> int:
    from semps.spark.package import build_package

    built = build_package(args.output)
    print(built.zip)
    print(built.main)
    print(
        f"semps: {built.files} files in {built.zip}; submit with\n"
        f"  spark-submit --master URL --py-files {built.zip} {built.main} spark match ...",
        file=sys.stderr,
    )
    return 0
