"""A mistyped path is told before the long work, not after it.

Loading 100k semantic or 1M content subscriptions takes seconds to tens of seconds, and
``semps spark place`` writes its plot after its Spark jobs: each command checks the files
it will read and the folders it will write in first. The subscriptions given here are
broken on purpose: a command that loaded them before looking at the other paths would stop
on them instead, with their error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import PATIENCE


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


@pytest.fixture
def broken(tmp_path: Path) -> dict[str, Path]:
    rq = tmp_path / "rq"
    rq.mkdir()
    (rq / "bad.rq").write_text("SELECT * WHERE { ?s ?p")
    jsonl = tmp_path / "subs.jsonl"
    jsonl.write_text('{"id": "x", "constraints": not json}\n')
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "e", "values": {"a": 1}}\n')
    return {"rq": rq, "jsonl": jsonl, "events": events, "missing": tmp_path / "missing"}


def _one_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"semps: error: {message}\n"


def test_semps_match_tells_a_missing_events_path_first(broken: dict[str, Path]) -> None:
    missing = broken["missing"]
    done = semps("match", "--subscriptions", str(broken["rq"]), "--events", str(missing))
    _one_error(done, f"events not found: {missing}")


def test_semps_index_tells_a_missing_output_folder_first(broken: dict[str, Path]) -> None:
    out = broken["missing"] / "index.semps"
    done = semps("index", "--subscriptions", str(broken["rq"]), "--output", str(out))
    _one_error(done, f"output folder not found: {broken['missing']}")


@pytest.mark.parametrize("command", [("content", "match"), ("symmetric", "match")])
def test_jsonl_matchers_tell_a_missing_events_file_first(
    broken: dict[str, Path], command: tuple[str, str]
) -> None:
    missing = broken["missing"]
    done = semps(*command, "--subscriptions", str(broken["jsonl"]), "--events", str(missing))
    _one_error(done, f"events not found: {missing}")


def test_content_index_tells_a_missing_output_folder_first(broken: dict[str, Path]) -> None:
    out = broken["missing"] / "index.npz"
    done = semps("content", "index", "--subscriptions", str(broken["jsonl"]), "--output", str(out))
    _one_error(done, f"output folder not found: {broken['missing']}")


def test_composite_run_tells_a_missing_stream_first(tmp_path: Path) -> None:
    definitions = tmp_path / "defs.txt"
    definitions.write_text("this is not a definition\n")
    missing = tmp_path / "missing.jsonl"
    done = semps("composite", "run", "--definitions", str(definitions), "--stream", str(missing))
    _one_error(done, f"stream not found: {missing}")


def test_the_broken_inputs_are_refused_on_their_own(broken: dict[str, Path]) -> None:
    """The other half of the tests above: with the paths right, the same subscriptions
    stop the command with their own error (so the tests above show an order)."""
    done = semps("match", "--subscriptions", str(broken["rq"]), "--events", str(broken["events"]))
    said = f"semps: error: {broken['rq'] / 'bad.rq'}:"  # the file as given, as events say
    assert done.returncode == 2 and done.stderr.startswith(said), done.stderr
    done = semps(
        "content",
        "match",
        "--subscriptions",
        str(broken["jsonl"]),
        "--events",
        str(broken["events"]),
    )
    assert done.returncode == 2 and "subs.jsonl:1:" in done.stderr, done.stderr
