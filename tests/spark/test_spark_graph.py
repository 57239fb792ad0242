"""``semps spark match --graph`` and ``semps spark stream --graph``: events matched with a
knowledge graph on Spark, the graph shipped to the executors once.

Each event's line is what ``semps match --graph`` prints: the subscriptions it adds
solutions to, and how many (``sols(Q, closure(O+K+E)) - sols(Q, closure(O+K))``, a
multiset difference; issue 33). Checked against:

- ``brick-kg-a``'s ``expected.jsonl`` (a Brick building model as the graph; the oracle's
  answers, see ../shared/workloads/README.md), byte for byte, and ``semps match --graph``'s
  own output on it;
- the independent oracle (owlrl's OWL 2 RL closure, pyoxigraph's SPARQL:
  ``tests/kg_oracle.py``) on random ontologies, graphs, events and subscriptions with
  OPTIONAL, UNION, MINUS, (NOT) EXISTS, paths, FILTERs and ASK (``tests/kg_strategies.py``);
- bad graph input: one ``semps: error:`` line and exit status 2, before Spark starts.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from kg_cases import oracle_lines, read_lines, write_case
from kg_strategies import EventCase, event_cases
from semps_test_support import WORKLOADS

from semps.cli.graphs import load_graph
from semps.cli.match import load_subscriptions
from semps.ontology import load_ontology
from semps.spark.bulk import match_events, match_lines
from semps.spark.sources import load_events

pytestmark = pytest.mark.spark

CASE = WORKLOADS / "brick-kg-a"


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, check=False
    )


def brick(command: str, *extra: str) -> list[str]:
    """``command`` (``match``, or ``spark match`` on ``local[2]``) over brick-kg-a."""
    spark = ["spark", "match", "--master", "local[2]"] if command == "spark" else ["match"]
    return [
        *spark,
        "--ontology", str(CASE / "ontology.owl"),
        "--subscriptions", str(CASE / "subscriptions"),
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def semps_match_lines() -> str:
    """``semps match --graph``'s output on brick-kg-a (checked against expected.jsonl)."""
    done = semps(*brick("match", "--events", str(CASE / "events"), "--graph", str(CASE / "graph")))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (CASE / "expected.jsonl").read_text()
    return done.stdout


def test_spark_match_with_the_model_as_graph_prints_what_semps_match_prints(
    semps_match_lines: str,
) -> None:
    done = semps(
        *brick("spark", "--events", str(CASE / "events"), "--graph", str(CASE / "graph/site.ttl"))
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == semps_match_lines == (CASE / "expected.jsonl").read_text()
    graph_line, summary = done.stderr.splitlines()
    assert graph_line.startswith("semps: the graph holds ")
    assert graph_line.endswith("shipped to the executors once")
    assert summary.startswith("semps: 60 events against 28 subscriptions")


def test_spark_stream_with_the_model_as_graph_writes_what_semps_match_prints(
    semps_match_lines: str, tmp_path: Path
) -> None:
    events, output = tmp_path / "events", tmp_path / "out"
    events.mkdir()
    for f in sorted((CASE / "events").iterdir()):
        (events / f.name).write_bytes(f.read_bytes())
    done = semps(
        "spark", "stream", "--master", "local[2]",
        "--ontology", str(CASE / "ontology.owl"),
        "--subscriptions", str(CASE / "subscriptions"),
        "--graph", str(CASE / "graph"),
        "--events", str(events), "--max-files", "25", "--available-now",
        "--checkpoint", str(tmp_path / "ck"), "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert len(list(output.glob("batch=*"))) == 3  # 25 + 25 + 10 files
    lines = [
        line for f in sorted(output.glob("batch=*/part-*")) for line in f.read_text().splitlines()
    ]
    rows = sorted(read_lines("\n".join(lines)), key=lambda row: row["event"])
    assert rows == read_lines(semps_match_lines)
    assert done.stderr.startswith("semps: the graph holds ")


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
@given(case=event_cases())
def test_events_add_on_spark_the_solutions_the_oracle_adds(spark: object, case: EventCase) -> None:
    """The library paths of ``spark match --graph`` (the graph loaded and closed on the
    driver, shipped; each event's line written by an executor, or its counts as a Parquet
    output and the stream take them) against the oracle, on the
    cases where the graph changes the answers (a quarter of them: with the graph left
    behind on the driver, the others would pass too)."""
    expected = oracle_lines(case)
    assume(expected != oracle_lines(dataclasses.replace(case, graph=())))
    with tempfile.TemporaryDirectory() as folder:
        paths = write_case(case, Path(folder))
        expansion, facts = load_ontology(paths["ontology"])
        graph = load_graph(paths["graph"], expansion, facts, None)
        events = load_events(spark, str(paths["events"]))  # type: ignore[arg-type]
        subscriptions = load_subscriptions(paths["subscriptions"])
        lines = match_lines(events, subscriptions, expansion, graph=graph).collect()
        counts = match_events(events, subscriptions, expansion, graph=graph).collect()
    queries = {qid: q.text for qid, q in case.queries.items()}
    found = read_lines("\n".join(line for _, line in sorted(lines)))
    assert found == expected, queries
    assert sorted(counts) == [(row["event"], row["solutions"]) for row in expected], queries


def test_bad_graph_input_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    events = ["--events", str(CASE / "events")]
    bad = tmp_path / "bad.nt"
    bad.write_text("<http://ex/a> <http://ex/p> .\n")
    done = semps(*brick("spark", *events, "--graph", str(bad)))
    assert (done.returncode, done.stderr) == (
        2,
        f"semps: error: {bad}:1:29: The object of a triple must be an IRI, a blank node or a "
        "literal\n",
    )
    done = semps(*brick("spark", *events, "--graph", str(tmp_path / "nowhere.ttl")))
    assert (done.returncode, done.stderr) == (
        2,
        f"semps: error: graph not found: {tmp_path / 'nowhere.ttl'}\n",
    )
    done = semps(
        *brick("spark", *events, "--graph", str(CASE / "graph"), "--max-graph-triples", "100")
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"semps: error: --graph {CASE / 'graph'}: the load brings 1486 triples, over the limit "
        "of 100 (max_load_triples); --max-graph-triples raises the limit\n",
    )
    done = semps(*brick("spark", *events, "--graph", str(CASE / "graph"), "--placement", "mined"))
    assert done.returncode == 2
    assert done.stderr.startswith("semps: error: --graph matches without placement")
    jsonl = tmp_path / "subs.jsonl"
    jsonl.write_text('{"id": "c1", "constraints": [["a", ">", 1]]}\n')
    done = semps("spark", "match", "--subscriptions", str(jsonl), *events, "--graph", str(bad))
    assert (done.returncode, done.stderr) == (
        2,
        "semps: error: --graph matches SPARQL subscriptions: give a folder of .rq files or "
        "--index\n",
    )
    done = semps(
        "spark", "stream", "--subscriptions", str(CASE / "subscriptions"), *events,
        "--graph", str(bad), "--checkpoint", str(tmp_path / "ck"), "--output", str(tmp_path / "o"),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"semps: error: {bad}:1:29: ")


def test_an_ontologys_individuals_join_the_graph_as_in_semps_match(tmp_path: Path) -> None:
    """An ontology document that also describes individuals: they join the knowledge graph
    (with a note), as ``semps match --ontology`` hands them over; before, ``semps spark``
    refused the document."""
    ex = "PREFIX : <http://ex/> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>"
    ontology = tmp_path / "onto.ttl"
    ontology.write_text(
        "@prefix : <http://ex/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        ":Sensor rdfs:subClassOf :Point .\n:s1 a :Sensor .\n"
    )
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "q1.rq").write_text(
        f"{ex} SELECT ?s ?v WHERE {{ ?s a :Point ; :value ?v }}"
    )
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "e1.ttl").write_text("@prefix : <http://ex/> . :s1 :value 5 .\n")
    (tmp_path / "events" / "e2.ttl").write_text("@prefix : <http://ex/> . :s2 :value 6 .\n")
    args = ["--ontology", str(ontology), "--subscriptions", str(tmp_path / "subs")]
    args += ["--events", str(tmp_path / "events")]
    on_spark = semps("spark", "match", "--master", "local[2]", *args)
    assert on_spark.returncode == 0, on_spark.stderr
    # :s1 is a :Point only through the ontology's individual; :s2 is no :Point at all
    assert read_lines(on_spark.stdout) == [
        {"event": "e1", "matches": ["q1"], "solutions": {"q1": 1}},
        {"event": "e2", "matches": [], "solutions": {}},
    ]
    assert on_spark.stdout == semps("match", *args).stdout
    assert "holds 1 triples about individuals" in on_spark.stderr
    refused = semps("spark", "match", *args, "--placement", "mined")
    assert (refused.returncode, refused.stderr.splitlines()[-1]) == (
        2,
        f"semps: error: a graph (the individuals of --ontology {ontology}) matches without "
        "placement (it routes events by what they carry alone): drop --placement",
    )
