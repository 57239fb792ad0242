"""brick-kg-a: telemetry matched against a Brick building model as the knowledge graph.

``semps match --graph`` reproduces ``expected.jsonl`` exactly: each event's solutions added
to each subscription's answers over the closure of ontology + model (the oracle: pyoxigraph
over the ``reasonable`` reasoner's OWL 2 RL closure of O+K+E and of O+K, multiset
difference; ../shared/workloads/README.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import WORKLOADS

CASE = WORKLOADS / "brick-kg-a"


def _match(*extra: str) -> list[dict]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "semps",
            "match",
            "--ontology",
            str(CASE / "ontology.owl"),
            "--subscriptions",
            str(CASE / "subscriptions"),
            "--events",
            str(CASE / "events"),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stderr == ""
    return [json.loads(line) for line in result.stdout.splitlines()]


def expected() -> list[dict]:
    return [json.loads(line) for line in (CASE / "expected.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_match_with_the_model_as_graph_gives_the_expected_answers(workers: str) -> None:
    assert _match("--graph", str(CASE / "graph" / "site.ttl"), "--workers", workers) == expected()


def test_a_graph_folder_and_a_data_directory_give_the_same_answers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "semps",
            "graph",
            "load",
            str(CASE / "graph" / "site.ttl"),
            "--data-dir",
            str(data),
            "--ontology",
            str(CASE / "ontology.owl"),
        ],
        capture_output=True,
        check=True,
    )
    assert _match("--graph", str(CASE / "graph")) == expected()
    assert _match("--graph", str(data)) == expected()


def test_without_the_graph_telemetry_finds_no_sensor_class() -> None:
    """The issue's first symptom: the reading alone says nothing of the sensor's class, so
    the subscriptions joining it with the model never match without the graph."""
    lines = {row["event"]: row for row in _match()}
    assert "j01-hot-zone-fed-by-ahu" not in lines["k00-tel"]["matches"]
    assert "j03-reading-on-floor" not in lines["k00-tel"]["matches"]
