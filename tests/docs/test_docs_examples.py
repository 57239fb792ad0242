"""The reference pages' examples run: every Python block of docs/ (but the client's quick
start, which tests/client runs against a server) runs from the repository root, and the
composite page's definitions, stream and output are what ``semps composite run`` does."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_support import blocks
from semps_test_support import PATIENCE, ROOT

from semps.cli import main as semps_main

QUICKSTART = (ROOT / "examples" / "client_quickstart.py").read_text(encoding="utf-8")


def python_examples() -> list[tuple[str, str]]:
    return [
        (f"{page.name}:{n}", code)
        for page in sorted((ROOT / "docs").glob("*.md"))
        for n, (language, code) in enumerate(blocks(page.read_text(encoding="utf-8")))
        if language == "python" and code != QUICKSTART
    ]


@pytest.mark.parametrize(("where", "code"), python_examples(), ids=lambda v: str(v)[:24])
def test_the_python_example_runs(where: str, code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 0, f"{where}: {done.stderr}"
    assert done.stdout.strip(), f"{where} printed nothing"


def composite_example() -> dict[str, list[str]]:
    """The composite page's example: ``{"defs.txt": [...], "stream.jsonl": [...],
    "output": [...]}``."""
    page = (ROOT / "docs" / "composite.md").read_text(encoding="utf-8")
    (code,) = [code for _, code in blocks(page) if code.startswith("defs.txt:")]
    parts: dict[str, list[str]] = {}
    key = ""
    for line in code.splitlines():
        label = re.match(r"(\S+):\s+", line)
        if label:
            key = label[1]
        parts.setdefault(key, []).append(line[15:])
    return parts


def test_the_composite_example_is_what_the_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = composite_example()
    definitions, stream = tmp_path / "defs.txt", tmp_path / "stream.jsonl"
    definitions.write_text("\n".join(example["defs.txt"]) + "\n")
    stream.write_text("\n".join(example["stream.jsonl"]) + "\n")
    argv = ["composite", "run", "--definitions", str(definitions), "--stream", str(stream)]
    assert semps_main(argv) == 0
    assert capsys.readouterr().out.splitlines() == example["output"]
