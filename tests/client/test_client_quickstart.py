"""The client page's example (docs/client.md) is examples/client_quickstart.py, verbatim,
and it runs against a real server with the output the page shows."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest
from semps_test_support import PATIENCE, ROOT, Server

from semps.cli.demo import demo_dir
from semps.client import Client

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


def test_the_example_runs_with_a_subscriber_and_a_publisher_and_leaves_the_ontology(
    server: Server,
) -> None:
    with Client(server.url, server.tokens["admin"]) as admin:  # as scripts/run sets it up
        admin.replace_ontology(demo_dir() / "univ-bench.owl")
        before = admin.ontology("turtle")
    version = server.ontology_version()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEMPS_")}
    env |= {
        "SEMPS_URL": server.url,
        "SEMPS_SUBSCRIBER_TOKEN": server.tokens["subscriber"],
        "SEMPS_PUBLISHER_TOKEN": server.tokens["publisher"],
    }
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()
        == shown_output()
        == [
            "subscribed faculty",
            "published an event",
            "notification 1: [('name', '\"Ada\"'), "
            "('who', '<http://www.Department0.University0.edu/FullProfessor0>')]",
            "refused at line 1, column 24",
        ]
    )
    with Client(server.url, server.tokens["admin"]) as admin:
        assert admin.ontology("turtle") == before
        assert list(admin.subscriptions()) == []  # it cleaned up after itself
    assert server.ontology_version() == version  # not even replaced by the same


def test_the_example_imports_no_command_line_module() -> None:
    tree = ast.parse(EXAMPLE.read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [m for m in imported if m == "semps.cli" or m.startswith("semps.cli.")] == []
