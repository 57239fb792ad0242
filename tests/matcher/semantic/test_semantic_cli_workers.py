"""`semps match --workers 2`: the workers read the event files themselves, with batches in
flight; the output is the single-worker output, and an unreadable file is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from semps_test_support import WORKLOADS

FOLDER = WORKLOADS / "synthetic-s7"


def semps_match(events: Path, workers: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "semps",
            "match",
            "--ontology",
            str(FOLDER / "ontology.owl"),
            "--subscriptions",
            str(FOLDER / "subscriptions"),
            "--events",
            str(events),
            "--workers",
            str(workers),
        ],
        capture_output=True,
        text=True,
    )


def test_two_workers_print_the_expected_jsonl() -> None:
    result = semps_match(FOLDER / "events", 2)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (FOLDER / "expected.jsonl").read_text()
    assert result.stdout == semps_match(FOLDER / "events", 1).stdout


def test_two_workers_name_an_unreadable_event_file(tmp_path: Path) -> None:
    events = tmp_path / "events"
    shutil.copytree(FOLDER / "events", events)
    (events / "e005.rdf").write_text("<rdf:RDF oops")
    one, two = semps_match(events, 1), semps_match(events, 2)
    assert two.returncode == one.returncode == 2
    assert two.stderr == one.stderr
    assert "e005.rdf" in two.stderr
