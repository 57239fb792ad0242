"""Files at rest: a private data directory and sealed webhook secrets."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from semps.broker.at_rest import KEY_FILE, SEALED_PREFIX, SecretBox
from semps.broker.sqlite_store import SQLiteStore
from semps.errors import StoreError


def test_a_sealed_secret_opens_with_its_key_only() -> None:
    box = SecretBox(bytes(range(32)))
    sealed = box.seal("0123456789abcdef")
    assert box.open(sealed) == "0123456789abcdef"
    assert box.seal("0123456789abcdef") != sealed  # a fresh nonce each time
    with pytest.raises(StoreError, match="sealed with another key"):
        SecretBox(bytes(32)).open(sealed)


def test_an_altered_sealed_secret_is_refused() -> None:
    box = SecretBox(bytes(32))
    sealed = box.seal("secret")
    body = sealed.removeprefix(SEALED_PREFIX)
    flipped = body[:-4] + ("A" if body[-4] != "A" else "B") + body[-3:]
    with pytest.raises(StoreError):
        box.open(SEALED_PREFIX + flipped)
    with pytest.raises(StoreError, match="malformed"):
        box.open(SEALED_PREFIX + "AAAA")


def test_the_store_keeps_its_folder_and_files_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SQLiteStore(data / "semps.sqlite3")
    store.create_token("admin")
    try:
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        for path in data.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
        assert len((data / KEY_FILE).read_bytes()) == 32
    finally:
        store.close()


def test_webhook_secrets_are_stored_sealed_and_read_back_clear(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    try:
        secret = store.set_webhook("sub-1", "https://example.org/hook")
        (hook,) = store.webhooks()
        assert hook.secret == secret
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / "semps.sqlite3")
    (raw,) = db.execute("SELECT secret FROM webhooks").fetchone()
    db.close()
    assert raw.startswith(SEALED_PREFIX) and secret not in raw


def test_secrets_stored_in_clear_before_are_sealed_on_open(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    store.close()
    db = sqlite3.connect(tmp_path / "semps.sqlite3")
    db.execute("INSERT INTO webhooks VALUES ('sub-1', 'https://example.org/h', 'plainsecret', 0)")
    db.commit()
    db.close()
    store = SQLiteStore(tmp_path / "semps.sqlite3")
    try:
        assert [h.secret for h in store.webhooks()] == ["plainsecret"]
    finally:
        store.close()
    assert b"plainsecret" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_a_damaged_key_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_bytes(b"short")
    with pytest.raises(StoreError, match=r"the key file .* is damaged \(5 bytes, not 32\)"):
        SQLiteStore(tmp_path / "semps.sqlite3")
