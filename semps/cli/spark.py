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

from semps.cli.paths import need_output
from semps.errors import SempsError, SparkError, SubscriptionError
from semps.matcher.base import Matcher, Subscription
from semps.spark.sources import FORMATS

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import SparkSession

    from semps.event import Event
    from semps.ingest.sparql import Query
    from semps.spark.placement import Placement, PlacementOptions


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
    _common(match)
    match.add_argument("--ontology", type=Path, help="OWL/RDFS ontology file")
    match.add_argument(
        "--subscriptions",
        type=Path,
        help="folder of .rq files, or JSON Lines of content/region subscriptions",
    )
    match.add_argument(
        "--index",
        type=Path,
        help="a snapshot written by semps index, read instead of parsing the subscriptions "
        "(with --subscriptions too, it is refused unless built from exactly those)",
    )
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
    match.add_argument("--base", help="base IRI for relative references (default per event)")
    match.set_defaults(func=spark_edge(run_match))

    place = sub.add_parser("place", help="report the placement mined from the subscriptions")
    _common(place)
    place.add_argument(
        "--subscriptions", type=Path, required=True, help="folder of .rq files, or JSON Lines"
    )
    place.add_argument("--events", help="events to route (as for spark match)")
    place.add_argument("--events-format", choices=FORMATS, help="how to read --events")
    place.add_argument("--ontology", type=Path, help="OWL/RDFS ontology file")
    placement_arguments(place)
    place.add_argument(
        "--forwarding-degree", type=int, default=8, help="D: copies a node sends itself"
    )
    place.add_argument("--plot", default="placement.png", help="PNG file for the plot")
    place.add_argument("--json", dest="json_out", help="also write the report as JSON here")
    place.add_argument("--base", help="base IRI for relative references (default per event)")
    place.set_defaults(func=spark_edge(run_place))

    convert = sub.add_parser("convert", help="write events as a triples table")
    _common(convert)
    convert.add_argument("--events", required=True, help="RDF file or folder")
    convert.add_argument("--events-format", choices=FORMATS, help="how to read --events")
    convert.add_argument("--output", required=True, help="a Parquet folder or a .jsonl folder")
    convert.add_argument("--base", help="base IRI for relative references (default per event)")
    convert.set_defaults(func=spark_edge(run_convert))

    package = sub.add_parser(
        "package", help="write the zip and driver script a cluster's executors need"
    )
    package.add_argument(
        "--output", type=Path, default=Path("dist"), help="folder to write into (default dist)"
    )
    package.set_defaults(func=run_package)

    from semps.cli.spark_stream import register_stream

    register_stream(sub)


def _common(parser: argparse.ArgumentParser) -> None:
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


def _events(spark: SparkSession, args: argparse.Namespace) -> RDD[Event]:
    from pyspark import StorageLevel

    from semps.spark.sources import load_events, raise_load_errors

    events = load_events(spark, args.events, base=args.base, kind=args.events_format)
    events = events.persist(StorageLevel.MEMORY_AND_DISK)
    raise_load_errors(events)
    return events  # type: ignore[return-value]  # no LoadError is left


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
    from semps.ontology import Expansion, load_expansion
    from semps.spark.answers import is_lines, write_lines, write_results
    from semps.spark.bulk import match_events, match_lines
    from semps.spark.session import note
    from semps.spark.sources import check_local, load_events, without_load_errors
    from semps.spark.waiting import ResourceWatch

    started = time.perf_counter()
    expansion = load_expansion(args.ontology) if args.ontology else Expansion()
    need_output(args.output)
    check_local(args.events)
    parses: dict[str, Query] = {}
    subscriptions, snapshot = _match_subscriptions(args, parses)
    if args.engine == "graphframes" and args.placement != "none":
        msg = "--engine graphframes matches without placement: drop --placement"
        raise SempsError(msg)
    spark = session(args)
    with ResourceWatch(spark.sparkContext):
        placement, items = None, None
        if args.placement == "mined":  # events go through two paths: read them once
            events = _events(spark, args)
            placement, items = _mine(spark, subscriptions, args)
            errors = None
        elif args.engine == "graphframes":  # the graph join and the matcher read them
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
                events, subscriptions, expansion, validate=False, queries=parses, snapshot=snapshot
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


def placement_options(args: argparse.Namespace) -> PlacementOptions:
    """The mined placement's options given by :func:`placement_arguments`."""
    from semps.spark.placement import PlacementOptions

    return PlacementOptions(
        args.partitions, args.min_support, args.virtual, args.overload, args.seed
    )


def _mine(
    spark: SparkSession, subscriptions: list[Subscription], args: argparse.Namespace
) -> tuple[Placement, list[frozenset[str]]]:
    """The placement mined from the subscriptions, and their items (mined once, used again
    to place them)."""
    from semps.spark.bulk import subscription_items

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
