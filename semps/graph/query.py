"""A SPARQL query's answers over the knowledge graph's closure (``/query``, and the current
answers a SEPA subscription starts with).

The query is one a subscription may be (:func:`~semps.ingest.sparql.parser.parse_query`:
SELECT or ASK, its WHERE clause with OPTIONAL, UNION, MINUS, FILTER, EXISTS, BIND, VALUES
and paths). Its WHERE clause is evaluated by the evaluator every matcher and every update
uses (:class:`~semps.ingest.sparql.evaluate.Evaluator`) over the graph's materialised
closure (:class:`~semps.graph.pairs.GraphPairs`): the triples asserted and those the
ontology infers, as a subscription's change notifications see them. Then the solutions are
projected (multiplicities kept, DISTINCT applied); an ASK is true when there is one.

The work is bounded while it is done: at most ``max_query_rows`` rows visited (counted as
the evaluator produces them, far below an update's ``max_update_rows``: a query is
anyone's, an update a publisher's), and ``graph_timeout`` seconds; the answer holds at
most ``max_answer_rows`` rows. Past any, :class:`~semps.errors.GraphLimitExceeded` names the limit.

Example:
    >>> from semps.graph.graph import KnowledgeGraph
    >>> from semps.ingest.sparql.parser import parse_query
    >>> g = KnowledgeGraph()
    >>> _ = g.insert([("http://ex/a", "http://ex/p", "http://ex/b")])
    >>> found = answer(g.view, parse_query("SELECT ?s WHERE { ?s <http://ex/p> ?o }"))
    >>> found.variables, found.rows
    (('s',), ({'s': 'http://ex/a'},))
    >>> answer(g.view, parse_query("ASK { ?s <http://ex/q> ?o }")).boolean
    False
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from semps._types import Term
from semps.errors import GraphLimitExceeded
from semps.graph.pairs import GraphPairs
from semps.graph.view import GraphView
from semps.ingest.sparql.algebra import BGP, Filter, Node
from semps.ingest.sparql.evaluate import Evaluator, OutOfBudget, Pairs, plan
from semps.ingest.sparql.model import Query
from semps.limits import DEFAULT_LIMITS, Limits

__all__ = ["Answers", "answer", "where_clause"]

#: Ticks of the evaluator between two looks at the clock.
_CLOCK_EVERY = 4096
#: Seconds a query's thread sleeps at each look at the clock (every couple of milliseconds
#: of work), letting go of the interpreter: a query runs on a reader thread beside the
#: event loop and the edits, which otherwise wait for the interpreter at each of their
#: system calls (5 ms apiece) and fall behind.
_YIELD = 0.001


@dataclass(frozen=True, slots=True)
class Answers:
    """A query's answers: its projected variables, its rows (variable -> term; an unbound
    variable is left out), and whether it is an ASK (then ``rows`` holds one empty row
    when true, none when false)."""

    variables: tuple[str, ...]
    rows: tuple[dict[str, Term], ...]
    ask: bool = False

    @property
    def boolean(self) -> bool:
        """An ASK's answer (for a SELECT: whether it has a row)."""
        return bool(self.rows)


class _Overtime(Exception):
    """The evaluation ran past its deadline."""


class _Timed(Evaluator):
    """The evaluator with a deadline: the clock is read every :data:`_CLOCK_EVERY` ticks."""

    def __init__(self, pairs: Pairs, budget: int, deadline: float) -> None:
        super().__init__(pairs, budget)
        self.deadline = deadline
        self.until_clock = _CLOCK_EVERY

    def tick(self, n: int = 1) -> None:
        super().tick(n)
        self.until_clock -= n
        if self.until_clock <= 0:
            self.until_clock = _CLOCK_EVERY
            if time.monotonic() > self.deadline:
                raise _Overtime
            time.sleep(_YIELD)


def where_clause(query: Query) -> Node:
    """A parsed query's WHERE clause as algebra (a basic graph pattern with FILTERs
    rebuilt from its patterns and filters)."""
    if query.algebra is not None:
        return query.algebra
    node: Node = BGP(query.patterns)
    return Filter(node, query.filters) if query.filters else node


def answer(view: GraphView, query: Query, *, limits: Limits = DEFAULT_LIMITS) -> Answers:
    """``query``'s answers over ``view``'s closure (see the module docstring).

    Raises:
        GraphLimitExceeded: the evaluation visits more than ``max_query_rows`` rows or
            runs longer than ``graph_timeout`` seconds, or the answer holds more than
            ``max_answer_rows`` rows.
    """
    rows = limits.max_query_rows
    evaluator = _Timed(GraphPairs(view), rows, time.monotonic() + limits.graph_timeout)
    try:
        found = evaluator.solutions(plan(where_clause(query)), {})
    except OutOfBudget:
        msg = f"the query visits more than {rows} rows of the graph (max_query_rows)"
        raise GraphLimitExceeded(msg) from None
    except _Overtime:
        msg = (
            f"answering the query took more than {limits.graph_timeout:g} s; it was cut off "
            "(graph_timeout)"
        )
        raise GraphLimitExceeded(msg) from None
    if query.form == "ASK":
        return Answers((), ({},) if found else (), ask=True)
    names = query.projected()
    projected = [{v: s[v] for v in names if v in s} for s in found]
    if query.distinct:
        unique: dict[frozenset[tuple[str, Term]], dict[str, Term]] = {}
        for r in projected:
            unique.setdefault(frozenset(r.items()), r)
        projected = list(unique.values())
    if len(projected) > limits.max_answer_rows:
        msg = f"the query has more than {limits.max_answer_rows} answers (max_answer_rows)"
        raise GraphLimitExceeded(msg)
    return Answers(names, tuple(projected))
