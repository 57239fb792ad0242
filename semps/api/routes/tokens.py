"""``/tokens``: the admin's token API: list (never a secret), create (the secret shown once)
and revoke."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import ValidationError

from semps.api.bodies import JSON, json_body, read_body, require_media_type, validation_message
from semps.api.context import Context
from semps.api.errors import responses
from semps.api.models import TokenCreated, TokenIn, TokenOut
from semps.broker.tokens import TokenInfo
from semps.errors import SempsError
from semps.settings import parse_duration

__all__ = ["tokens_router"]

#: The longest lifetime a token may be given (100 years, in seconds).
MAX_LIFETIME = 100 * 365 * 86400
#: The most bytes of a ``POST /tokens`` body.
MAX_TOKEN_BODY = 4096
_BODY = json_body(TokenIn)


def tokens_router(ctx: Context) -> APIRouter:
    """The token routes (admin)."""
    router = APIRouter(tags=["tokens"], dependencies=[Depends(ctx.auth.require("admin"))])
    broker = ctx.broker

    @router.get("/tokens", responses=responses(401, 403))
    def list_tokens() -> list[TokenOut]:
        """Every token, revoked and expired ones too, oldest first (ids, never secrets)."""
        return [token_out(t) for t in broker.store.list_tokens()]

    @router.post(
        "/tokens",
        status_code=201,
        openapi_extra=_BODY,
        responses=responses(400, 401, 403, 413, 415),
    )
    async def create_token(request: Request) -> TokenCreated:
        """A new token for ``role``, expiring after ``expires_in`` (seconds or ``30d``,
        ``12h``, ...; never by default). The secret is in this answer only."""
        require_media_type(request, (JSON,))
        try:
            wanted = TokenIn.model_validate_json(await read_body(request, MAX_TOKEN_BODY))
        except ValidationError as exc:
            msg = f'expected JSON {{"role": ..., "expires_in": ...}}: {validation_message(exc)}'
            raise SempsError(msg) from exc
        expires = None
        if wanted.expires_in is not None:
            expires = time.time() + _seconds(wanted.expires_in)
        token_id, secret = broker.store.create_token(
            wanted.role, wanted.subject, expires_at=expires
        )
        info = next(t for t in broker.store.list_tokens() if t.id == token_id)
        return TokenCreated(token=secret, **token_out(info).model_dump())

    @router.delete("/tokens/{token_id}", status_code=204, responses=responses(401, 403, 404))
    def revoke_token(token_id: str) -> Response:
        """Revoke a token: it stops authenticating at once (revoking twice is harmless)."""
        broker.revoke_token(token_id)
        return Response(status_code=204)

    return router


def _seconds(value: int | str) -> float:
    """A token's lifetime in seconds: positive, at most :data:`MAX_LIFETIME`."""
    seconds = float(value) if isinstance(value, int) and abs(value) < 2**53 else None
    if isinstance(value, str) and len(value) <= 64:
        seconds = parse_duration(value)
    if seconds is None or not 0 < seconds <= MAX_LIFETIME:
        msg = f"expires_in must be a positive duration of at most 100 years, not {value!r:.64}"
        raise SempsError(msg)
    return seconds


def token_out(info: TokenInfo) -> TokenOut:
    """A token as the API lists it."""
    return TokenOut.model_validate(info, from_attributes=True)
