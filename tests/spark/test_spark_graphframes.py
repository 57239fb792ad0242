"""The GraphFrames engine (``semps spark match --engine graphframes``): a GraphFrames join
picks each event's candidate subscriptions, the broker's matcher answers; its answers are
the workloads' expected ones (rdflib over the OWL 2 RL closure) and the matcher engine's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import Case

from semps.ingest.rdf import read_events
from semps.matcher.values import Subscription
from semps.spark.bulk import match_events
from semps.spark.graph_join import candidate_keys
from semps.spark.jars import JAR_ENV, graphframes_jar
from semps.spark.placed import close_event
from semps.spark.sources import load_events

pytestmark = pytest.mark.spark

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def semps_match(case: Case, *extra: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "semps", "spark", "match", "--master", "local[2]"]
        + ["--ontology", str(case.folder / "ontology.owl")]
        + ["--subscriptions", str(case.folder / "subscriptions")]
        + ["--events", str(case.events), *extra],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def answers(stdout: str) -> dict[str, dict[str, int]]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    return {row["event"]: row["solutions"] for row in rows}


@pytest.fixture(scope="module")
def jar() -> Path:
    found = graphframes_jar()  # provisions it on a fresh machine (scripts/bootstrap does)
    assert found is not None
    return found


@pytest.mark.parametrize("name", ["synthetic-s7", "lubm-u0"])
def test_the_graphframes_engine_answers_as_the_oracle_and_the_matcher_engine(
    spark, workloads: Path, jar: Path, name: str
) -> None:
    case = Case(workloads / name)
    done = semps_match(case, "--engine", "graphframes")
    assert done.returncode == 0, done.stderr
    got = answers(done.stdout)
    assert got == case.expected
    matcher = dict(
        match_events(
            load_events(spark, str(case.events)), case.subscriptions, case.expansion
        ).collect()
    )
    assert got == matcher
    assert "engine graphframes" in done.stderr


def test_every_expected_match_has_a_triple_of_a_candidate_key(workloads: Path) -> None:
    # The join's keys never lose a match: checked against the oracle's answers, pair by pair.
    for name in ("synthetic-s7", "lubm-u0"):
        case = Case(workloads / name)
        keys = {s.id: candidate_keys(s) for s in case.subscriptions}
        files = sorted(p for p in case.events.iterdir() if p.is_file())
        assert len(files) == len(case.expected)
        for event in read_events(files, None):
            event = close_event(event, case.expansion)
            for sid in case.expected.get(event.id, {}):
                found = keys[sid]
                assert found is None or any(
                    (p is None or p == tp) and s in (None, ts) and o in (None, to)
                    for _, p, s, o in found
                    for ts, tp, to in event.triples
                ), (name, event.id, sid)


def test_candidate_keys_take_one_pattern_per_alternative_and_widen_literals() -> None:
    union = "PREFIX : <http://e/> SELECT * { { ?x :p ?y } UNION { ?x :q 1 } OPTIONAL { ?x :r ?z } }"
    assert candidate_keys(Subscription("u", "semantic", union)) == [
        ("u", "http://e/p", None, None),
        ("u", "http://e/q", None, None),  # the literal 1 reads as any node
    ]
    bgp = "PREFIX : <http://e/> SELECT * { ?x :p ?y . ?x a :C }"
    assert candidate_keys(Subscription("b", "semantic", bgp)) == [
        ("b", RDF_TYPE, None, "http://e/C")
    ]
    assert candidate_keys(Subscription("a", "semantic", "ASK { FILTER(true) }")) is None
    content = Subscription("c", "content", '{"id": "c", "constraints": []}')
    assert candidate_keys(content) is None


def test_a_missing_jar_is_one_error_line_saying_how_to_provision_it(
    workloads: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != JAR_ENV}
    env["SEMPS_CACHE_DIR"] = str(tmp_path)  # an empty cache: nothing provisioned
    done = semps_match(Case(workloads / "synthetic-s7"), "--engine", "graphframes", env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("semps: error: the graphframes engine needs the GraphFrames jar")
    assert "python -m semps.spark.jars" in lines[0]
