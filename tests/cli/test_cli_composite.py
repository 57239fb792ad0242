"""semps composite run reads the stream in chunks and writes per chunk: the same lines as
reading it one JSON line at a time, blank lines, explicit times and odd events included."""

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
        found = tree.run([str(item["event"])], [float(item.get("time", at))])
        if found.names:
            out.append(json.dumps({"at": at, "detected": sorted(found.names)}) + "\n")
    return "".join(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_stream_equals_line_by_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [json.dumps({"event": f"p{rng.randint(1, 7)}"}) for _ in range(3000)]
    lines[10] = ""
    lines[11] = "   "
    lines[12] = "\u00a0"
    lines[20] = json.dumps({"event": "p1", "time": 3.5})
    lines[30] = '{"event": 5}'
    lines[40] = '{"event": "p2", "time": NaN}'
    lines[2000] = json.dumps({"event": "p5", "time": 1e9})
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
