"""The client page's example (docs/client.md) is examples/client_quickstart.py, verbatim,
and it runs against a real server with the output the page shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from semps_test_support import PATIENCE, ROOT, Server

pytestmark = pytest.mark.server

EXAMPLE = ROOT / "examples" / "client_quickstart.py"
PAGE = ROOT / "docs" / "client.md"


def test_the_client_page_shows_the_example_verbatim() -> None:
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    assert EXAMPLE.read_text(encoding="utf-8") in blocks


def shown_output() -> list[str]:
    """The lines the page says the example prints (the block after "Its output:")."""
    page = PAGE.read_text(encoding="utf-8")
    block = re.search(r"Its output:\n\n```\n(.*?)```", page, flags=re.DOTALL)
    assert block is not None
    return block[1].splitlines()


def test_the_example_runs_against_a_server(server: Server) -> None:
    env = {**os.environ, "SEMPS_URL": server.url, "SEMPS_TOKEN": server.tokens["admin"]}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"ontology version \d+", lines[0])
    assert (
        lines[1:]
        == shown_output()[1:]
        == [
            "subscribed faculty",
            "published an event: 1 notification(s)",
            "notification 1: [('name', '\"Ada\"'), "
            "('who', '<http://www.Department0.University0.edu/FullProfessor0>')]",
            "refused at line 1, column 24",
        ]
    )
