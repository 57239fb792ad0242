"""The broker's files at rest: private modes and sealed webhook secrets.

The data directory is made ``0700`` and every file the broker keeps in it (the SQLite
files with their ``-wal``, ``-shm`` and ``-journal`` companions, the key file) ``0600``, so
other local users read nothing.

Webhook secrets are needed in clear to sign deliveries, so they cannot be hashed like
tokens; they are *sealed* instead with a key kept in ``secret.key`` (32 random bytes, mode
``0600``) in the data directory: a copy of the database alone does not reveal them. The
sealing is encrypt-then-MAC built from HMAC-SHA256 only (the standard library has no
cipher): a random 16-byte nonce, the text XORed with the keystream
``HMAC(k_enc, nonce || counter)``, and a 16-byte tag ``HMAC(k_mac, nonce || ciphertext)``.

Example:
    >>> box = SecretBox(bytes(32))
    >>> sealed = box.seal("s3cret")
    >>> sealed.startswith(SEALED_PREFIX), "s3cret" in sealed, box.open(sealed)
    (True, False, 's3cret')
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from semps.errors import StoreError

__all__ = ["KEY_FILE", "SEALED_PREFIX", "SecretBox", "private_dir", "private_files"]

#: The key file's name in the data directory.
KEY_FILE = "secret.key"
#: What a sealed value starts with (a value without it is from before sealing).
SEALED_PREFIX = "sealed:v1:"
_NONCE = 16
_TAG = 16
_COMPANIONS = ("", "-wal", "-shm", "-journal")


def private_dir(path: Path) -> None:
    """Create ``path`` if missing and make it ``0700``."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)


def private_files(paths: Iterable[Path]) -> None:
    """Make each existing file of ``paths``, and its SQLite companions, ``0600``."""
    for path in paths:
        for suffix in _COMPANIONS:
            companion = path.with_name(path.name + suffix)
            try:
                os.chmod(companion, 0o600)
            except FileNotFoundError:
                continue


class SecretBox:
    """Seals and opens short texts (webhook secrets) with one 32-byte key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            msg = f"a sealing key has 32 bytes, not {len(key)}"
            raise StoreError(msg)
        self._enc = hmac.new(key, b"semps seal: encrypt", hashlib.sha256).digest()
        self._mac = hmac.new(key, b"semps seal: authenticate", hashlib.sha256).digest()

    def derive(self, purpose: str) -> bytes:
        """A 32-byte key for ``purpose`` (e.g. signing list cursors), derived from this one:
        stable across restarts, and telling nothing of the sealing key."""
        return hmac.new(self._mac, b"semps derive: " + purpose.encode(), hashlib.sha256).digest()

    @classmethod
    def from_dir(cls, data_dir: Path) -> SecretBox:
        """The box of ``data_dir``'s key file, created (``0600``) on first use.

        Raises:
            StoreError: the key file cannot be read or created, or is damaged.
        """
        path = data_dir / KEY_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError as exc:
            msg = f"cannot create the key file {path}: {exc.strerror or exc}"
            raise StoreError(msg) from exc
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
        try:
            os.chmod(path, 0o600)
            key = path.read_bytes()
        except OSError as exc:
            msg = f"cannot read the key file {path}: {exc.strerror or exc}"
            raise StoreError(msg) from exc
        if len(key) != 32:
            msg = f"the key file {path} is damaged ({len(key)} bytes, not 32)"
            raise StoreError(msg)
        return cls(key)

    def _stream(self, nonce: bytes, size: int) -> bytes:
        blocks = (size + 31) // 32
        return b"".join(
            hmac.new(self._enc, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest()
            for i in range(blocks)
        )[:size]

    def seal(self, text: str) -> str:
        """``text`` sealed: a printable value that does not contain it."""
        data = text.encode()
        nonce = secrets.token_bytes(_NONCE)
        sealed = bytes(a ^ b for a, b in zip(data, self._stream(nonce, len(data)), strict=True))
        tag = hmac.new(self._mac, nonce + sealed, hashlib.sha256).digest()[:_TAG]
        return SEALED_PREFIX + base64.urlsafe_b64encode(nonce + sealed + tag).decode()

    def open(self, value: str) -> str:
        """The text of a value :meth:`seal` made.

        Raises:
            StoreError: the value was not sealed with this key, or was altered.
        """
        try:
            raw = base64.urlsafe_b64decode(value.removeprefix(SEALED_PREFIX).encode())
        except ValueError:
            raw = b""
        nonce, sealed, tag = raw[:_NONCE], raw[_NONCE:-_TAG], raw[-_TAG:]
        good = hmac.new(self._mac, nonce + sealed, hashlib.sha256).digest()[:_TAG]
        if not value.startswith(SEALED_PREFIX) or len(raw) < _NONCE + _TAG:
            msg = "a sealed webhook secret is malformed"
            raise StoreError(msg)
        if not hmac.compare_digest(tag, good):
            msg = f"a webhook secret was sealed with another key (is {KEY_FILE} the right one?)"
            raise StoreError(msg)
        data = bytes(a ^ b for a, b in zip(sealed, self._stream(nonce, len(sealed)), strict=True))
        return data.decode()
