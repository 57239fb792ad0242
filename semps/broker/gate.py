"""The bearer-token gate: who a token belongs to, cached briefly, guesses counted.

:class:`TokenGate` answers the broker's :meth:`~semps.broker.broker.Broker.authorize`
and :meth:`~semps.broker.broker.Broker.check_token_id`: a token's principal is read from
the store and cached for :data:`TOKEN_CACHE_SECONDS`, a revocation through this process
clears the cache at once, and a client sending too many bad tokens is refused for a
while (:mod:`semps.broker.guesses`).
"""

from __future__ import annotations

import time

from semps.broker.contracts import Store
from semps.broker.guesses import WINDOW, Guesses
from semps.broker.tokens import Principal, TokenInfo
from semps.errors import AuthError, PermissionDenied, TooManyRequests

__all__ = ["TOKEN_CACHE_SECONDS", "TokenGate"]

#: Seconds a bearer token's lookup is cached (a token revoked by ``semps token revoke`` in
#: another process stops working, and its open streams end, within this and a stream's check).
TOKEN_CACHE_SECONDS = 2.0


def _guessing(client: str | None) -> TooManyRequests:
    msg = (
        f"too many bad bearer tokens from {client}; a token is checked again once they are "
        f"older than {WINDOW:g} s"
    )
    return TooManyRequests(msg)


class TokenGate:
    """Bearer tokens checked against ``store``, with a short cache and a guess counter."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tokens: dict[str, tuple[float, Principal | None]] = {}
        self._token_ids: dict[str, tuple[float, TokenInfo | None]] = {}
        self.guesses = Guesses()

    def authorize(self, token: str, *roles: str, client: str | None = None) -> Principal:
        """The principal a bearer token belongs to, with one of ``roles`` (an admin may do
        anything); lookups are cached for :data:`TOKEN_CACHE_SECONDS`. Bad tokens are
        counted by ``client`` address (:mod:`semps.broker.guesses`).

        Raises:
            AuthError: an unknown, expired or revoked token.
            PermissionDenied: the token's role is not one of ``roles``.
            TooManyRequests: ``client`` sent too many bad tokens lately.
        """
        now = time.monotonic()
        if self.guesses.blocked(client, token, now=now):
            raise _guessing(client)
        cached = self._tokens.get(token)
        if cached is not None and now - cached[0] < TOKEN_CACHE_SECONDS:
            who = cached[1]
        else:
            who = self.store.principal(token)
            if len(self._tokens) > 10_000:
                self._tokens.clear()
            self._tokens[token] = (now, who)
            if who is not None:
                self.guesses.accepted(token, now=now)
        if who is not None and who.expires is not None and who.expires <= time.time():
            who = None  # expired while cached
        if who is None:
            # A request's token is a guess to count; a stream's recheck (no client) is not.
            if client is not None and self.guesses.refused(client, token, now=now):
                raise _guessing(client)
            msg = "unknown, expired or revoked bearer token"
            raise AuthError(msg)
        if roles and who.role not in roles and who.role != "admin":
            msg = f"a {who.role} token may not do this (needs {' or '.join(roles)})"
            raise PermissionDenied(msg)
        return who

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a token at once (the token cache forgets every token).

        Raises:
            NotFound: no token has that id.
        """
        info = self.store.revoke_token(token_id)
        self._tokens.clear()
        self._token_ids.clear()
        return info

    def check_token_id(self, token_id: str) -> None:
        """That the token whose id is ``token_id`` still authenticates (what it established,
        such as a Solid channel, ends when it does not); cached as :meth:`authorize`.

        Raises:
            AuthError: the token is revoked, expired or unknown.
        """
        now = time.monotonic()
        cached = self._token_ids.get(token_id)
        if cached is None or now - cached[0] >= TOKEN_CACHE_SECONDS:
            if len(self._token_ids) > 10_000:
                self._token_ids.clear()
            cached = self._token_ids[token_id] = (now, self.store.token_info(token_id))
        info = cached[1]
        if info is None or not info.active(time.time()):
            msg = "the bearer token that established this was revoked or expired"
            raise AuthError(msg)
