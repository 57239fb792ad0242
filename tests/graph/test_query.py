"""A query's answers over the knowledge graph (semps.graph.query): held to
``max_query_rows`` (rows visited), ``graph_timeout`` and ``max_answer_rows``, each
refusal naming its limit. (The answers themselves are checked against owlrl and
pyoxigraph through a real server: tests/api/test_api_sepa_current.py.)"""

from __future__ import annotations

import pytest

from semps.errors import GraphLimitExceeded
from semps.graph.graph import KnowledgeGraph
from semps.graph.query import answer
from semps.ingest.sparql.parser import parse_query
from semps.limits import Limits

EX = "http://ex/"
#: Every pair of a chain of 80 links: 3,240 answers, more rows visited.
PATHS = parse_query(f"SELECT ?a ?b WHERE {{ ?a <{EX}next>+ ?b }}")


def _chain(n: int) -> KnowledgeGraph:
    g = KnowledgeGraph()
    g.insert([(f"{EX}n{i}", f"{EX}next", f"{EX}n{i + 1}") for i in range(n)])
    return g


def test_every_answer_within_the_limits() -> None:
    found = answer(_chain(80).view, PATHS)
    assert len(found.rows) == 80 * 81 // 2
    assert found.rows[0].keys() == {"a", "b"}


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (Limits(max_query_rows=1000), "visits more than 1000 rows of the graph (max_query_rows)"),
        (Limits(max_answer_rows=3000), "has more than 3000 answers (max_answer_rows)"),
        # a deadline long past when the clock is first read (after 4,096 rows)
        (Limits(graph_timeout=1e-9), "took more than 1e-09 s; it was cut off (graph_timeout)"),
    ],
)
def test_past_a_limit_the_query_is_refused(limits: Limits, message: str) -> None:
    with pytest.raises(GraphLimitExceeded) as refused:
        answer(_chain(80).view, PATHS, limits=limits)
    assert message in str(refused.value)


def test_a_cross_product_is_cut_off_by_the_default_query_budget() -> None:
    # 2,000 triples: the cross product is 4,000,000 rows, past max_query_rows (1,000,000 by
    # default), though under max_update_rows (10,000,000): a query is held to the lower one.
    g = KnowledgeGraph()
    _ = g.insert([(f"http://ex/n{i}", "http://ex/p", f"http://ex/n{i + 1}") for i in range(2000)])
    query = parse_query("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }")
    assert Limits().max_query_rows < 2000 * 2000 < Limits().max_update_rows
    with pytest.raises(GraphLimitExceeded, match=r"more than 1000000 rows .*\(max_query_rows\)"):
        answer(g.view, query)
