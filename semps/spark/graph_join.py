"""The GraphFrames engine: a bulk graph join picks candidate events, the broker's matcher
answers.

- **The graph.** Each event, closed under the ontology (:func:`~semps.spark.placed.close_event`),
  becomes edges ``(src, dst, relationship)`` of one :class:`GraphFrame`; a vertex id is
  ``"<event id>\\t<term>"``, so events never share vertices, and each edge also carries its
  event id and its subject and IRI object.
- **The join.** Each semantic subscription is reduced to one *key* per alternative of its
  required part (:mod:`semps.matcher.semantic.required`; a basic graph pattern has one
  alternative): the alternative's most constrained pattern, its property and its IRI ends
  (a literal end or a variable reads as "any node"). One motif ``find("()-[e]->()")``
  joined with the keys on the property (and the ends a key names) gives, in bulk, the
  (event, subscription) pairs where that pattern has a matching triple. A subscription with
  an alternative of no pattern, or of another kind, is a candidate of every event.
- **The answers.** An event with a candidate goes to the very matcher the ``matcher``
  engine runs (:func:`semps.spark.bulk.match_events`); an event without one matches nothing
  and is answered ``{}``. A key only ever weakens a required pattern, so an event the
  matcher would match always has a candidate: answers equal the matcher engine's by
  construction.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from semps.errors import SparkError
from semps.event import Event
from semps.ingest.sparql import parse_query
from semps.matcher.semantic.codes import ANY_PROPERTY, STAR
from semps.matcher.semantic.compile_query import compile_query
from semps.matcher.semantic.compiled import Pattern
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion
from semps.spark.bulk import match_events, one_per_event
from semps.spark.jars import HOW_TO_PROVISION
from semps.spark.partition import Results
from semps.spark.placed import close_event

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import DataFrame, SparkSession

#: Separates the event id from the term in a vertex id (terms never hold a raw tab).
SEP = "\t"

#: A candidate key: (subscription id, property or None for any, subject IRI, object IRI).
Key = tuple[str, str | None, str | None, str | None]


def _iri(term: object) -> str | None:
    """``term`` when it is an IRI or blank node (a plain ``str``), else ``None``."""
    return term if type(term) is str and term != STAR else None


def _best(alternative: Sequence[Pattern]) -> Pattern:
    """The alternative's pattern with the most IRI constants (a property one first)."""
    return max(
        alternative,
        key=lambda p: (
            p.prop != ANY_PROPERTY,
            (_iri(p.key[0]) is not None) + (_iri(p.key[1]) is not None),
        ),
    )


def candidate_keys(subscription: Subscription) -> list[Key] | None:
    """The keys whose matching triples make an event a candidate of ``subscription``, or
    ``None`` when every event is one (another kind, or an alternative with no pattern).

    Example:
        >>> q = "SELECT * { ?x a <http://e/C> ; <http://e/p> 1 }"
        >>> candidate_keys(Subscription("s", "semantic", q))
        [('s', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', None, 'http://e/C')]
        >>> candidate_keys(Subscription("s", "semantic", "ASK { FILTER(true) }")) is None
        True
    """
    if subscription.kind != "semantic":
        return None
    compiled = compile_query(subscription.id, parse_query(subscription.text))
    alternatives = compiled.alternatives if compiled.algebra is not None else (compiled.patterns,)
    if not alternatives or any(not alt for alt in alternatives):
        return None
    keys: list[Key] = []
    for alt in alternatives:
        p = _best(alt)
        prop = None if p.prop == ANY_PROPERTY else p.prop
        keys.append((subscription.id, prop, _iri(p.key[0]), _iri(p.key[1])))
    return keys


def _edges(
    event: Event, expansion: Expansion
) -> Iterator[tuple[str, str, str, str, str, str | None]]:
    closed = close_event(event, expansion)
    for s, p, o in closed.triples:
        yield (f"{event.id}{SEP}{s}", f"{event.id}{SEP}{o}", p, event.id, s, _iri(o))


def graphframe(spark: SparkSession, edges: DataFrame) -> Any:
    """A ``GraphFrame`` over ``edges`` (vertices: every ``src`` and ``dst``).

    Raises:
        SparkError: the GraphFrames jar is not on the session.
    """
    jar = next((j for j in _session_jars(spark) if "graphframes" in j), None)
    if jar is not None and jar not in sys.path:
        sys.path.insert(0, jar)  # the jar carries GraphFrames' Python wrapper too
    try:
        from graphframes import GraphFrame

        vertices = edges.selectExpr("src AS id").union(edges.selectExpr("dst AS id")).distinct()
        with warnings.catch_warnings():  # its wrapper reads DataFrame.sql_ctx (deprecated)
            warnings.simplefilter("ignore", UserWarning)
            return GraphFrame(vertices, edges)
    except Exception as exc:  # ImportError, or Py4J's error for a class not on the JVM
        msg = f"the GraphFrames jar is not on the Spark session: {HOW_TO_PROVISION}"
        raise SparkError(msg) from exc


def _session_jars(spark: SparkSession) -> list[str]:
    jars = spark.sparkContext.getConf().get("spark.jars", "") or ""
    return [j.removeprefix("file:") for j in jars.split(",") if j and os.sep in j]


def candidates(
    spark: SparkSession,
    events: RDD[Event],
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
) -> tuple[RDD[tuple[str, bool]], list[str]]:
    """The events with a candidate subscription, found by one GraphFrames motif join, and
    the subscriptions every event is a candidate of.

    Returns:
        ``(RDD of (event id, True), [subscription ids of every event])``.
    """
    from pyspark.sql import functions as F  # noqa: N812

    keys: list[Key] = []
    everywhere: list[str] = []
    for sub in subscriptions:
        found = candidate_keys(sub)
        if found is None:
            everywhere.append(sub.id)
        else:
            keys.extend(found)
    schema = "src string, dst string, relationship string, ev string, s string, o string"
    edges = spark.createDataFrame(events.flatMap(lambda e: _edges(e, expansion)), schema)
    graph = graphframe(spark, edges)
    key_schema = "sid string, kp string, ks string, ko string"
    table = F.broadcast(spark.createDataFrame(keys, key_schema))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        found = graph.find("()-[e]->()").select("e.*")
    ends = (F.col("ks").isNull() | (F.col("ks") == F.col("s"))) & (
        F.col("ko").isNull() | (F.col("ko") == F.col("o"))
    )
    # An equi-join on the property (a hash join), and the rare any-property keys apart.
    by_property = found.join(
        table.where("kp IS NOT NULL"), (F.col("kp") == F.col("relationship")) & ends
    )
    any_property = found.join(table.where("kp IS NULL"), ends)
    hits = by_property.select("ev").union(any_property.select("ev")).distinct()
    return hits.rdd.map(lambda row: (row.ev, True)), everywhere


def match_graph(
    spark: SparkSession,
    events: RDD[Event],
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
) -> Results:
    """Match ``events`` against ``subscriptions`` (see :func:`semps.spark.bulk.match_events`),
    handing the matcher only the events the GraphFrames join found a candidate for.

    Raises:
        SparkError: the GraphFrames jar is not on the session; stateful subscriptions.
    """
    hits, everywhere = candidates(spark, events, subscriptions, expansion)
    if everywhere:  # every event is a candidate: the join prunes nothing
        chosen = events
    else:
        keyed = events.map(lambda ev: (ev.id, ev))
        chosen = keyed.join(hits).map(lambda pair: pair[1][0])
    matched = match_events(chosen, subscriptions, expansion, validate=False)
    return one_per_event(events, matched)


__all__ = ["candidate_keys", "candidates", "match_graph"]
