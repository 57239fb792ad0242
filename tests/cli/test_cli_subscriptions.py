"""``semps subscriptions load DIR --url``: a folder of .rq files registered on a real
``semps serve`` in bulk, each named after its file, a refused one reported on stderr."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from semps_test_support import Server

pytestmark = pytest.mark.server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "data")
    yield srv
    srv.stop()


def load(server: Server, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    token = server.tokens["subscriber"]
    cmd = [sys.executable, "-m", "semps", "subscriptions", "load", str(folder)]
    cmd += ["--url", server.url, f"--token={token}", *extra]  # a token may start with "-"
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_a_folder_is_registered_named_after_its_files(server: Server, tmp_path: Path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    for i in range(5):
        (folder / f"q{i}.rq").write_text(f"SELECT ?x WHERE {{ ?x a <urn:c{i}> }}")
    (folder / "bad.rq").write_text("SELECT WHERE nothing")
    (folder / "notes.txt").write_text("not a subscription")
    done = load(server, folder, "--chunk", "2")
    assert done.returncode == 1  # one refused
    assert f"semps: {folder / 'bad.rq'}: " in done.stderr
    assert "registered 5 of 6 subscriptions (1 refused)" in done.stderr
    named = dict(line.split("\t") for line in done.stdout.splitlines())
    assert sorted(named) == [f"q{i}" for i in range(5)]
    headers = {"Authorization": f"Bearer {server.tokens['subscriber']}"}
    listed = httpx.get(server.url + "/subscriptions", headers=headers).json()["items"]
    assert {s["id"]: s["name"] for s in listed} == {v: k for k, v in named.items()}


def test_without_a_token_it_says_how_to_give_one(server: Server, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "semps", "subscriptions", "load", str(tmp_path)]
    done = subprocess.run(
        [*cmd, "--url", server.url], capture_output=True, text=True, env={}, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("semps: error: no token: pass --token or set SEMPS_TOKEN")


def test_a_missing_folder_is_said_not_found_and_a_file_not_a_folder(tmp_path: Path) -> None:
    """Both refused before any request (no server needed: the address is never called)."""
    (tmp_path / "one.rq").write_text("SELECT ?x WHERE { ?x a <urn:c> }")
    said = {}
    for name in ("nowhere", "one.rq"):
        cmd = [sys.executable, "-m", "semps", "subscriptions", "load", str(tmp_path / name)]
        cmd += ["--url", "http://127.0.0.1:9", "--token=t"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        said[name] = done.stderr
    assert said == {
        "nowhere": f"semps: error: subscriptions not found: {tmp_path / 'nowhere'}\n",
        "one.rq": f"semps: error: not a folder: {tmp_path / 'one.rq'} "
        "(expected a folder of .rq files)\n",
    }
