"""Bearer tokens in the store: roles, ids, expiry and revocation.

Only a token's SHA-256 digest is stored; its secret is shown once, when it is created. A
token's id (``tok-`` and 12 hex digits of the digest, which say nothing of the secret) names
it to list and revoke it.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

from semps.broker._tables import Tables
from semps.errors import StoreError, existing

__all__ = ["ROLES", "Principal", "TokenInfo", "TokenTable", "digest", "new_token"]

ROLES = ("admin", "publisher", "subscriber")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a bearer token belongs to (``expires``: a Unix time, ``None``: never; ``token``:
    the token's id, which what it establishes may be bound to)."""

    subject: str
    role: str
    expires: float | None = None
    token: str = ""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A stored token as an admin sees it: never its secret, which is not stored.

    Times are Unix times; ``expires`` ``None`` means never, ``revoked`` ``None`` means not
    revoked.
    """

    id: str
    role: str
    subject: str
    created: float
    expires: float | None
    revoked: float | None

    def active(self, now: float) -> bool:
        """Whether the token still authenticates at ``now``."""
        return self.revoked is None and (self.expires is None or self.expires > now)


def digest(token: str) -> str:
    """What a store keeps of a token: its secret's SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _token_id(hexdigest: str) -> str:
    """A token's public id: a prefix of its secret's digest (says nothing of the secret)."""
    return "tok-" + hexdigest[:12]


def new_token(
    role: str, subject: str | None = None, *, expires_at: float | None = None
) -> tuple[str, TokenInfo]:
    """A new token for ``role`` (not stored yet): its secret and what a store keeps of it
    (the id, role, subject, creation and expiry; the digest is :func:`digest` of the secret).

    Raises:
        StoreError: an unknown role, or an expiry time that has already passed.
    """
    if role not in ROLES:
        msg = f"unknown role {role!r} (use {', '.join(ROLES)})"
        raise StoreError(msg)
    now = time.time()
    if expires_at is not None and expires_at <= now:
        msg = "the token's expiry time has already passed"
        raise StoreError(msg)
    secret = "semps_" + secrets.token_urlsafe(24)  # never starts with '-' (a CLI option)
    subject = subject or f"{role}-{secrets.token_hex(4)}"
    return secret, TokenInfo(_token_id(digest(secret)), role, subject, now, expires_at, None)


class TokenTable(Tables):
    """The token methods of :class:`~semps.broker.sqlite_store.SQLiteStore` (its ``tokens``
    table)."""

    def _migrate_tokens(self) -> None:
        """Give tokens from before ids, expiry and revocation their new columns."""
        columns = {row[1] for row in self._w.execute("PRAGMA table_info(tokens)")}
        for column, sql_type in (("id", "TEXT"), ("expires", "REAL"), ("revoked", "REAL")):
            if column not in columns:
                self._w.execute(f"ALTER TABLE tokens ADD COLUMN {column} {sql_type}")
        self._w.execute("UPDATE tokens SET id = 'tok-' || substr(digest, 1, 12) WHERE id IS NULL")

    def create_token(
        self, role: str, subject: str | None = None, *, expires_at: float | None = None
    ) -> tuple[str, str]:
        """A new bearer token for ``role``: returns (token id, secret).

        Only the secret's SHA-256 is stored; the secret is shown once, here. The id names
        the token in :meth:`list_tokens` and :meth:`revoke_token`.

        Args:
            role: ``admin``, ``publisher`` or ``subscriber``.
            subject: who the token is for (the owner of its subscriptions); default a
                generated name.
            expires_at: Unix time after which the token no longer authenticates.

        Raises:
            StoreError: an unknown role, or an expiry time that has already passed.
        """
        secret, info = new_token(role, subject, expires_at=expires_at)
        with self._wlock:
            self._w.execute(
                "INSERT INTO tokens (digest, role, subject, created, id, expires, revoked) "
                "VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (digest(secret), role, info.subject, info.created, info.id, expires_at),
            )
        return info.id, secret

    def list_tokens(self) -> list[TokenInfo]:
        """Every token (revoked and expired ones too), oldest first."""
        rows = self._rows(
            "SELECT id, role, subject, created, expires, revoked FROM tokens ORDER BY rowid"
        )
        return [TokenInfo(*row) for row in rows]

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a token: it no longer authenticates (revoking twice is harmless).

        Raises:
            NotFound: no token has that id.
        """
        with self._wlock:
            self._w.execute(
                "UPDATE tokens SET revoked = COALESCE(revoked, ?) WHERE id = ?",
                (time.time(), token_id),
            )
            row = self._w.execute(
                "SELECT id, role, subject, created, expires, revoked FROM tokens WHERE id = ?",
                (token_id,),
            ).fetchone()
        return TokenInfo(*existing(row, "token", token_id))

    def principal(self, token: str) -> Principal | None:
        """Who ``token`` belongs to; ``None`` for an unknown, expired or revoked token."""
        with self._lock:
            row = self._db.execute(
                "SELECT subject, role, expires, id FROM tokens "
                "WHERE digest = ? AND revoked IS NULL AND (expires IS NULL OR expires > ?)",
                (digest(token), time.time()),
            ).fetchone()
        return Principal(*row) if row else None

    def token_info(self, token_id: str) -> TokenInfo | None:
        """The token whose id is ``token_id`` (revoked or expired too); ``None``: none."""
        rows = self._rows(
            "SELECT id, role, subject, created, expires, revoked FROM tokens WHERE id = ?",
            (token_id,),
        )
        return TokenInfo(*rows[0]) if rows else None
