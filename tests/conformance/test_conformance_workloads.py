"""`semps match` reproduces the expected answers of the shared workloads exactly.

The expected answers come from rdflib SPARQL over the owlrl OWL 2 RL closure of event +
ontology (see ../shared/workloads/README.md): an oracle independent of semps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS, workload_options

from semps.cli.match import build_matcher, event_files, load_subscriptions
from semps.ingest.rdf import read_events
from semps.matcher.base import MatchContext
from semps.matcher.results import result_line, result_record
from semps.ontology import load_expansion

CASES = ["synthetic-s7", "lubm-u0"]


def expected(case: str) -> dict[str, dict]:
    lines = (WORKLOADS / case / "expected.jsonl").read_text().splitlines()
    return {row["event"]: row for row in map(json.loads, lines)}


@pytest.fixture(scope="module", params=CASES)
def answers(request: pytest.FixtureRequest) -> tuple[str, dict[str, dict]]:
    case = request.param
    folder = WORKLOADS / case
    expansion = load_expansion(folder / "ontology.owl")
    matcher = build_matcher(load_subscriptions(folder / "subscriptions"), workers=1)
    out = {}
    for event in read_events(event_files(folder / "events"), None):
        context = MatchContext(event, expansion)
        matched = {m.subscription: m.count for m in matcher.match(context)}
        out[event.id] = json.loads(result_line(event.id, matched))
        # The counts-only path (`semps match` output, Spark) must agree record for record.
        (counts,) = matcher.count_batch([context])
        assert result_record(event.id, counts) == out[event.id], event.id
    return case, out


def test_every_event_is_answered(answers: tuple[str, dict]) -> None:
    case, ours = answers
    assert sorted(ours) == sorted(expected(case))


def test_matches_and_solution_counts_equal_the_oracle(answers: tuple[str, dict]) -> None:
    case, ours = answers
    for event_id, want in expected(case).items():
        assert ours[event_id] == want, event_id


def test_cli_prints_the_expected_jsonl(tmp_path: Path) -> None:
    folder = WORKLOADS / "synthetic-s7"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "semps",
            "match",
            *workload_options(folder),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == (folder / "expected.jsonl").read_text()
    assert result.stderr == ""


def test_cli_names_a_bad_subscription_file(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "broken.rq").write_text("SELECT ?x WHERE {\n  ?x ub:p ?y }")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "semps",
            "match",
            "--subscriptions",
            str(tmp_path / "subs"),
            "--events",
            str(WORKLOADS / "synthetic-s7" / "events"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    broken = tmp_path / "subs" / "broken.rq"
    assert result.stderr == f"semps: error: {broken}:2:6: unknown prefix 'ub'\n"
    assert result.stdout == ""
