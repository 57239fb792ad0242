"""semps composite run reads the stream in chunks and writes per chunk: the same lines as
reading it one JSON line at a time, blank lines, explicit times and odd events included; a
detection is reported at the completing arrival's time; times that go backwards, or are not
finite numbers, stop the run with the line that says so."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import PATIENCE

from semps.matcher.composite import EventTree, parse_definitions

DEFINITIONS = """create event ab = p1 then p2 within 5s;
create event o = p3 or p4;
create event all3 = all p1 in p5, p6;
create event n = no p2 in p5, p6 within 20s;
create event both = ab and o;
create event po = p7 or p1;
"""


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


def reference(lines: list[str]) -> str:
    """One line at a time with the standard library (the reader before chunks)."""
    tree = EventTree(constituents=False)
    tree.define(parse_definitions(DEFINITIONS))
    out = []
    for at, line in enumerate(lines):
        if not line.strip():
            continue
        item = json.loads(line)
        time = item.get("time", at)
        found = tree.run([str(item["event"])], [float(time)])
        if found.names:
            out.append(json.dumps({"at": time, "detected": sorted(found.names)}) + "\n")
    return "".join(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_stream_equals_line_by_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [json.dumps({"event": f"p{rng.randint(1, 7)}"}) for _ in range(3000)]
    lines[10] = ""
    lines[11] = "   "
    lines[12] = "\u00a0"
    lines[20] = json.dumps({"event": "p1", "time": 20.5})
    lines[21] = json.dumps({"event": "p2", "time": 21})
    lines[30] = '{"event": 5}'
    lines[2000] = json.dumps({"event": "p5", "time": 2000.25})
    (tmp_path / "defs.txt").write_text(DEFINITIONS)
    (tmp_path / "stream.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = semps(
        "composite", "run",
        "--definitions", str(tmp_path / "defs.txt"), "--stream", str(tmp_path / "stream.jsonl"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == reference(lines)
    assert result.stdout.count("\n") > 500


def test_bad_line_after_detections(tmp_path: Path) -> None:
    lines = [json.dumps({"event": e}) for e in ["p1", "p2", "p3"] * 100]
    lines[150] = '{"evnt": "p1"}'
    (tmp_path / "defs.txt").write_text(DEFINITIONS)
    (tmp_path / "stream.jsonl").write_text("\n".join(lines) + "\n")
    result = semps(
        "composite", "run",
        "--definitions", str(tmp_path / "defs.txt"), "--stream", str(tmp_path / "stream.jsonl"),
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stdout == reference(lines[:150])
    assert result.stderr == (
        f'semps: error: {tmp_path}/stream.jsonl:151: expected {{"event": name}} but found '
        '\'{"evnt": "p1"}\'\n'
    )


def _run(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "defs.txt").write_text(DEFINITIONS)
    (tmp_path / "stream.jsonl").write_text("\n".join(lines) + "\n")
    return semps(
        "composite", "run",
        "--definitions", str(tmp_path / "defs.txt"), "--stream", str(tmp_path / "stream.jsonl"),
    )  # fmt: skip


def test_a_detection_is_reported_at_the_time_the_stream_gave(tmp_path: Path) -> None:
    lines = [
        json.dumps({"event": "p1", "time": 100}),
        json.dumps({"event": "p2", "time": 102.5}),
        json.dumps({"event": "p3", "time": 1e9}),
    ]
    result = _run(tmp_path, lines)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        '{"at": 100, "detected": ["po"]}',
        '{"at": 102.5, "detected": ["ab"]}',
        '{"at": 1000000000.0, "detected": ["both", "o"]}',
    ]
    assert result.stdout == reference(lines)


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        (
            ['{"event": "p1", "time": 10}', '{"event": "p2", "time": 9.5}'],
            2,
            "time 9.5 is before 10, the time of line 1: times must not go backwards",
        ),
        (
            ['{"event": "p1", "time": 10}', '{"event": "p2"}'],
            2,
            "time 1 (its line's index: the line gives no time) is before 10, the time of "
            "line 1: times must not go backwards",
        ),
        (
            ['{"event": "p1", "time": 3}', '{"event": "p2", "time": NaN}'],
            2,
            "time must be a finite number of seconds, not nan",
        ),
        (
            ['{"event": "p1", "time": "soon"}'],
            1,
            "time must be a finite number of seconds, not 'soon'",
        ),
    ],
)
def test_times_that_go_backwards_or_are_not_numbers_stop_the_run(
    tmp_path: Path, lines: list[str], line: int, reason: str
) -> None:
    result = _run(tmp_path, lines)
    assert result.returncode == 2
    assert result.stderr == f"semps: error: {tmp_path}/stream.jsonl:{line}: {reason}\n"


def test_a_time_going_backwards_across_chunks_is_found(tmp_path: Path) -> None:
    """Past the first chunk of lines (2 MiB), against the previous chunk's last arrival."""
    pad = " " * 200
    lines = [json.dumps({"event": "p3", "time": 10 * n}) + pad for n in range(12_000)]
    lines.append(json.dumps({"event": "p1", "time": 5}))
    result = _run(tmp_path, lines)
    assert result.returncode == 2
    assert result.stdout == reference(lines[:-1])
    assert result.stderr.endswith(
        f":{len(lines)}: time 5 is before 119990, the time of line {len(lines) - 1}: "
        "times must not go backwards\n"
    )
