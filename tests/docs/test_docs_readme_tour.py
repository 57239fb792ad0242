"""The README's five-minute tour (and its knowledge-graph section) runs as written,
against a real ``semps serve``: its shell blocks (tokens, the service, the curl calls,
``semps match`` on shared workloads) and its Python block (saved as ``tour.py`` and run as
the README says), in one bash session from the repository root. Each ``# -> `` line is the
output it promises, in order (``...`` stands for what differs between runs, such as an
event's id); only the port, the data folder and the path of ``.venv/bin/`` are changed, so
that the test runs beside other servers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from semps_test_support import ROOT, WORKLOADS, _free_port, wait_for

pytestmark = [pytest.mark.server, pytest.mark.timeout(300)]

README = ROOT / "README.md"
PROMISE = "# -> "
RUN_PY = "SEMPS_TOKEN=$ADMIN .venv/bin/python tour.py"
#: The README's sections whose blocks run, in order, in one session.
TOUR_SECTIONS = ("A five-minute tour", "Events against a knowledge graph")


def tour() -> list[tuple[str, str]]:
    """The tour's fenced blocks, ``(language, code)``, in order."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for title in TOUR_SECTIONS:
        section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
        blocks += re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL)
    return blocks


def promised(blocks: list[tuple[str, str]]) -> list[str]:
    return [
        line.removeprefix(PROMISE)
        for _, code in blocks
        for line in code.splitlines()
        if line.startswith(PROMISE)
    ]


def matches(line: str, promise: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in promise.split("..."))
    return re.fullmatch(pattern, line) is not None


def session_script(blocks: list[tuple[str, str]], folder: Path, port: int) -> str:
    """The blocks as one bash script (with this test's port, data folder and
    interpreter); the Python block is written to ``tour.py`` and run with the README's own
    command."""
    parts = []
    for language, block in blocks:
        code = (
            block.replace("8000", str(port))
            .replace("var/tour", str(folder / "data"))
            .replace(".venv/bin/", f"{Path(sys.executable).parent}/")
        )
        if language == "python":
            (folder / "tour.py").write_text(code, encoding="utf-8")
            run = RUN_PY.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
            parts.append(run.replace("tour.py", str(folder / "tour.py")))
        else:
            assert language == "bash", language
            parts.append(code)
    return "\n".join(parts)


@pytest.fixture
def port() -> int:
    return _free_port()


@pytest.fixture
def group() -> Iterator[list[int]]:
    """Process groups started by the test, ended (and waited for) afterwards."""
    started: list[int] = []
    yield started
    for pgid in started:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        wait_for(lambda pgid=pgid: not _alive(pgid), seconds=30)  # type: ignore[misc]


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_tour_promises_output_and_runs_the_python_block_as_it_says() -> None:
    blocks = tour()
    assert [language for language, _ in blocks] == ["bash", "python", "bash", "bash"]
    assert len(promised(blocks)) >= 8
    assert f"`{RUN_PY}`" in README.read_text(encoding="utf-8")


def test_the_tour_runs_as_written(tmp_path: Path, port: int, group: list[int]) -> None:
    if not WORKLOADS.is_dir():
        pytest.fail(f"shared workloads not found at {WORKLOADS}")
    blocks = tour()
    script = session_script(blocks, tmp_path, port)
    proc = subprocess.Popen(
        ["bash", "-c", script],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    group.append(proc.pid)
    out, err = proc.communicate(timeout=240)
    lines = [line for line in out.splitlines() if line.strip()]
    expected = promised(blocks)
    assert len(lines) == len(expected), f"{out}\n{err}"
    for line, promise in zip(lines, expected, strict=True):
        assert matches(line, promise), f"{line!r} is not {promise!r}\n{err}"
