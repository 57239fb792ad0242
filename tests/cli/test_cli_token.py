"""``semps token create|list|revoke`` on a data directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from semps_test_support import PATIENCE

from semps.broker.sqlite_store import SQLiteStore


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


def test_create_prints_the_secret_alone_and_list_and_revoke_use_its_id(tmp_path: Path) -> None:
    made = semps(
        "token", "create", "--role", "publisher", "--expires-in", "30d", "--data-dir", str(tmp_path)
    )
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    token_id = made.stderr.split()[-1]
    listed = semps("token", "list", "--json", "--data-dir", str(tmp_path))
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["id"] == token_id and row["role"] == "publisher" and row["state"] == "active"
    assert 29 * 86400 < row["expires"] - row["created"] <= 30 * 86400
    assert secret not in listed.stdout
    revoked = semps("token", "revoke", token_id, "--data-dir", str(tmp_path))
    assert revoked.returncode == 0, revoked.stderr
    table = semps("token", "list", "--data-dir", str(tmp_path)).stdout
    assert token_id in table and "revoked" in table
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    try:
        assert store.principal(secret) is None
    finally:
        store.close()


def test_revoking_an_unknown_id_is_one_error_line(tmp_path: Path) -> None:
    semps("token", "create", "--role", "admin", "--data-dir", str(tmp_path))
    out = semps("token", "revoke", "tok-nope", "--data-dir", str(tmp_path))
    assert (out.returncode, out.stderr) == (2, "semps: error: no token 'tok-nope'\n")


def test_a_bad_duration_is_one_error_line(tmp_path: Path) -> None:
    out = semps(
        "token", "create", "--role", "admin", "--expires-in", "soon", "--data-dir", str(tmp_path)
    )
    assert out.returncode == 2
    assert out.stderr.startswith("semps: error: not a duration: 'soon'")
    assert not (tmp_path / "semps.sqlite3").exists()


def test_listing_where_there_is_no_service_data_says_so(tmp_path: Path) -> None:
    out = semps("token", "list", "--data-dir", str(tmp_path / "none"))
    assert out.returncode == 2
    assert out.stderr.startswith("semps: error: no service data in ")
