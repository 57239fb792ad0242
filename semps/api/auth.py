"""Bearer tokens on the HTTP API: reading the ``Authorization`` header and the route
dependencies that demand a role.

The broker answers who a token belongs to; this module owns the HTTP side (the header's
syntax, the OpenAPI security scheme ``HTTPBearer`` that every protected operation declares).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from semps.broker.broker import Broker
from semps.broker.tokens import Principal
from semps.errors import AuthError

__all__ = ["Auth", "bearer_scheme", "bearer_token"]

#: The OpenAPI security scheme (``Authorization: Bearer <token>``).
bearer_scheme = HTTPBearer(
    auto_error=False,
    description="a token from `semps token create` or `POST /tokens`",
)


def bearer_token(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header.

    Example:
        >>> bearer_token("Bearer abc")
        'abc'
        >>> try:
        ...     bearer_token("Basic abc")
        ... except AuthError as exc:
        ...     print(exc)
        missing bearer token (Authorization: Bearer <token>)

    Raises:
        AuthError: no header, another scheme, or no token.
    """
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        msg = "missing bearer token (Authorization: Bearer <token>)"
        raise AuthError(msg)
    return token


class Auth:
    """Checks bearer tokens against a broker's tokens."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def check(self, header: str | None, *roles: str, client: str | None = None) -> Principal:
        """The principal behind ``header``, with one of ``roles`` (admin may do anything);
        ``client`` is the caller's address (bad tokens are counted by it).

        Raises:
            AuthError: missing, unknown, expired or revoked token.
            PermissionDenied: the token's role is not one of ``roles``.
            TooManyRequests: ``client`` sent too many bad tokens lately.
        """
        return self.broker.authorize(bearer_token(header), *roles, client=client)

    def require(self, *roles: str) -> Callable[..., Principal]:
        """A route dependency: the caller's principal, with one of ``roles``."""

        def principal(
            request: Request,
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
        ) -> Principal:
            token = credentials.credentials if credentials is not None else None
            client = request.client.host if request.client else None
            return self.check(f"Bearer {token}" if token else None, *roles, client=client)

        return principal
