"""The GraphFrames engine: events as one graph, subscriptions as motif queries.

- **The graph.** Every event, closed under the ontology by the same
  :meth:`~semps.ontology.Expansion.close` the matcher uses, becomes edges
  ``(src, dst, p, ev)``; a vertex id is ``"<event id>\\t<N-Triples term>"``, so events never
  share vertices. Edges whose property no subscription names are dropped before Spark sees
  them (the semi-join), and the frames stay narrow: ids, property, event id.
- **Templates.** Subscriptions with the same shape (which pattern positions are variables,
  which are constants, and how variables repeat) share one motif: ``?x ub:worksFor <d0>``
  and ``?y ub:memberOf <d1>`` are both ``(v0)-[e0]->()``. Each template runs one
  ``GraphFrame.find``; its properties and constants come from a broadcast parameter table
  joined on equality (one join per template, then a union: never a join on ``OR``).
- **Verification.** FILTERs, DISTINCT and ASK are applied per solution row by the parsed
  subscription's own filter objects (the ones the matcher evaluates), and solutions are
  counted as the matcher counts them.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from semps._types import Term
from semps.event import Event
from semps.ingest.sparql import parse_query
from semps.matcher.base import Subscription
from semps.matcher.semantic.compiled import CompiledSubscription, compile_query
from semps.ontology.expansion import Expansion
from semps.spark.bulk import one_per_event
from semps.spark.session import graphframe_class
from semps.terms import n3, parse_n3

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import DataFrame, SparkSession

#: Separates the event id from the term in a vertex id (terms never hold a raw tab).
SEP = "\t"

Role = tuple[str, int]  # ("v", variable index) or ("c", constant index)


@dataclass(frozen=True)
class Template:
    """A subscription's shape: the roles of each pattern's subject and object."""

    roles: tuple[tuple[Role, Role], ...]

    @property
    def variables(self) -> int:
        return 1 + max((r[1] for pair in self.roles for r in pair if r[0] == "v"), default=-1)

    @property
    def constants(self) -> int:
        return sum(r[0] == "c" for pair in self.roles for r in pair)

    def occurrences(self) -> dict[int, list[tuple[int, str]]]:
        """Variable index -> its (pattern index, ``"src"``/``"dst"``) positions."""
        found: dict[int, list[tuple[int, str]]] = {}
        for i, (s, o) in enumerate(self.roles):
            for role, end in ((s, "src"), (o, "dst")):
                if role[0] == "v":
                    found.setdefault(role[1], []).append((i, end))
        return found

    def motif(self) -> str:
        """The GraphFrames motif: ``(v0)-[e0]->(); ...``. Only variables that join patterns
        are named (each named vertex costs a join with the vertex table); the others, and
        constants, are anonymous and read from their edge's ``src``/``dst``."""
        shared = {k for k, places in self.occurrences().items() if len(places) > 1}

        def vertex(role: Role) -> str:
            return f"v{role[1]}" if role[0] == "v" and role[1] in shared else ""

        return "; ".join(
            f"({vertex(s)})-[e{i}]->({vertex(o)})" for i, (s, o) in enumerate(self.roles)
        )


@dataclass(frozen=True)
class Shape:
    """A subscription split into its template and its parameters."""

    template: Template
    variables: tuple[str, ...]  # variable names, by index
    properties: tuple[str, ...]  # one per pattern
    constants: tuple[str, ...]  # N-Triples terms, by constant index


def shape_of(sub: CompiledSubscription) -> Shape:
    """Split a compiled subscription into a template and its parameters.

    Example:
        >>> from semps.ingest.sparql import parse_query
        >>> c = compile_query("s", parse_query("SELECT * { ?x <http://p> <http://o> }"))
        >>> s = shape_of(c)
        >>> s.template.motif(), s.properties, s.constants
        ('()-[e0]->()', ('http://p',), ('<http://o>',))
        >>> c = compile_query("s", parse_query("SELECT * { ?x <http://p> ?y . ?y <http://q> 1 }"))
        >>> shape_of(c).template.motif()
        '()-[e0]->(v1); (v1)-[e1]->()'
    """
    names: dict[str, int] = {}
    constants: list[str] = []
    roles = []

    def role(var: str | None, const: Term) -> Role:
        if var is not None:
            return ("v", names.setdefault(var, len(names)))
        constants.append(n3(const))
        return ("c", len(constants) - 1)

    for p in sub.patterns:
        s_role = role(p.s_var, p.key[0])
        o_role = role(p.o_var, p.key[1])
        roles.append((s_role, o_role))
    return Shape(
        Template(tuple(roles)),
        tuple(sorted(names, key=names.__getitem__)),
        tuple(p.prop for p in sub.patterns),
        tuple(constants),
    )


@contextlib.contextmanager
def _quiet_graphframes() -> Iterator[None]:
    """GraphFrames 0.8 uses PySpark internals that PySpark 3.5 warns about; not ours."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "DataFrame constructor is internal", UserWarning)
        warnings.filterwarnings("ignore", "DataFrame.sql_ctx is an internal", UserWarning)
        yield


def _edges(
    event: Event, expansion: Expansion, wanted: frozenset[str]
) -> Iterator[tuple[str, str, str, str]]:
    ev = event.id
    for s, p, o in expansion.close(event.triples):
        if p in wanted:
            yield (f"{ev}{SEP}{n3(s)}", f"{ev}{SEP}{n3(o)}", p, ev)


def _template_frame(
    spark: SparkSession, graph: Any, template: Template, params: list[tuple[str, ...]]
) -> DataFrame:
    """One template's solutions: ``(ev, sub, vals)`` with vals the variables' vertex ids."""
    from pyspark.sql import functions as sf

    n_patterns = len(template.roles)
    columns = ["sub"] + [f"p{i}" for i in range(n_patterns)]
    columns += [f"c{j}" for j in range(template.constants)]
    table = sf.broadcast(spark.createDataFrame(params, columns))
    with _quiet_graphframes():
        found = graph.find(template.motif())
    for i in range(n_patterns):  # pushed down to the edge scans, before the motif's joins
        wanted = sorted({row[1 + i] for row in params})
        found = found.filter(sf.col(f"e{i}.p").isin(wanted))
        if i:
            found = found.filter(sf.col(f"e{i}.ev") == sf.col("e0.ev"))
    keys = [sf.col(f"e{i}.p") == table[f"p{i}"] for i in range(n_patterns)]
    for i, (s, o) in enumerate(template.roles):
        for role, end in ((s, "src"), (o, "dst")):
            if role[0] == "c":
                term = sf.concat(sf.col(f"e{i}.ev"), sf.lit(SEP), table[f"c{role[1]}"])
                keys.append(sf.col(f"e{i}.{end}") == term)
    joined = found.join(table, on=keys)
    places = template.occurrences()
    values = [sf.col(f"e{places[k][0][0]}.{places[k][0][1]}") for k in range(template.variables)]
    selected: DataFrame = joined.select(
        sf.col("e0.ev").alias("ev"),
        table["sub"].alias("sub"),
        (sf.array(*values) if values else sf.array().cast("array<string>")).alias("vals"),
    )
    return selected


def match_with_motifs(
    events: RDD[Event], subscriptions: Sequence[Subscription], expansion: Expansion
) -> RDD[tuple[str, dict[str, int]]]:
    """Match with GraphFrames motifs; returns ``(event id, {subscription: count})`` pairs."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as sf

    spark = SparkSession.getActiveSession()
    assert spark is not None
    context = events.context
    frame_cls = graphframe_class()
    compiled = {s.id: compile_query(s.id, parse_query(s.text)) for s in subscriptions}
    shapes = {sid: shape_of(c) for sid, c in compiled.items()}
    wanted = frozenset(p for shape in shapes.values() for p in shape.properties)
    if not shapes:
        return one_per_event(events, context.parallelize([]))
    onto = context.broadcast(expansion)
    edge_rdd = events.flatMap(lambda e: _edges(e, onto.value, wanted))
    edges = spark.createDataFrame(edge_rdd, "src string, dst string, p string, ev string")
    edges = edges.cache()
    vertices = edges.select(sf.col("src").alias("id")).union(edges.select("dst")).distinct()
    vertices = vertices.cache()  # every named motif vertex joins it
    with _quiet_graphframes():
        graph = frame_cls(vertices, edges)
    groups: dict[Template, list[tuple[str, ...]]] = {}
    for sid, shape in sorted(shapes.items()):
        groups.setdefault(shape.template, []).append((sid, *shape.properties, *shape.constants))
    frames = [_template_frame(spark, graph, t, rows) for t, rows in groups.items()]
    solutions = frames[0]
    for frame in frames[1:]:
        solutions = solutions.unionAll(frame)
    texts = context.broadcast({s.id: s.text for s in subscriptions})
    keyed = solutions.rdd.mapPartitions(lambda rows: _verify(rows, texts.value))
    counted = keyed.distinct().map(lambda k: ((k[0], k[1]), 1)).reduceByKey(operator.add)
    return one_per_event(events, counted.map(lambda kv: (kv[0][0], {kv[0][1]: kv[1]})))


_COMPILED: dict[tuple[str, str], tuple[CompiledSubscription, Shape]] = {}


def _verify(
    rows: Iterable[Any], texts: dict[str, str]
) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """Apply FILTERs to solution rows; yield one key per solution to count.

    A non-DISTINCT solution's key is unique (all its variables), a DISTINCT one's is its
    projection, and an ASK subscription keeps one key per event: counting distinct keys
    then counts solutions exactly as the matcher's verifier does.
    """
    for row in rows:
        ev, sid, vals = row["ev"], row["sub"], row["vals"]
        key = (sid, texts[sid])
        found = _COMPILED.get(key)
        if found is None:
            sub = compile_query(sid, parse_query(key[1]))
            found = _COMPILED[key] = (sub, shape_of(sub))
        sub, shape = found
        bindings = {
            name: parse_n3(value.rsplit(SEP, 1)[1])
            for name, value in zip(shape.variables, vals, strict=True)
        }
        if not all(f.evaluate(bindings) for f in sub.filters):
            continue
        if sub.ask:
            yield (ev, sid, ())
        elif sub.distinct:
            yield (ev, sid, tuple(n3(bindings[v]) if v in bindings else "" for v in sub.projection))
        else:
            yield (ev, sid, tuple(vals))


__all__ = ["Shape", "Template", "match_with_motifs", "shape_of"]
