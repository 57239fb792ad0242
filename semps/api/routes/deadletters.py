"""``/deadletters``: webhook notifications that could not be delivered (admin): list them
(paged) and replay one."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool

from semps.api.context import Context
from semps.api.errors import responses
from semps.api.models import DeadLetterPage, Replayed
from semps.api.pagination import DEFAULT_LIMIT, MAX_LIMIT, decode_cursor, encode_cursor, page
from semps.broker.contracts import DeadLetter
from semps.errors import NotFound, SempsError

__all__ = ["deadletters_router"]


def deadletters_router(ctx: Context) -> APIRouter:
    """The dead-letter routes (admin)."""
    router = APIRouter(tags=["webhooks"], dependencies=[Depends(ctx.auth.require("admin"))])
    store = ctx.broker.store

    @router.get("/deadletters", responses=responses(400, 401, 403, 422))
    def dead_letters(
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        cursor: str | None = Query(None, max_length=512, description="`next` of the last page"),
    ) -> DeadLetterPage:
        """Undeliverable webhook notifications, oldest first."""
        after = _letter_id(decode_cursor(cursor, "deadletters", ctx.cursor_key))
        items, last = page(store.dead_letters(), _id, after, limit)
        return DeadLetterPage(
            items=list(items),
            next=None
            if last is None
            else encode_cursor("deadletters", str(last.id), ctx.cursor_key),
        )

    @router.post("/deadletters/{letter_id}/replay", responses=responses(401, 403, 404, 422))
    async def replay(letter_id: int) -> Replayed:
        """Try the webhook call again; a delivered letter leaves the list."""
        letters = {d.id: d for d in store.dead_letters()}
        if letter_id not in letters:
            msg = f"no dead letter {letter_id}"
            raise NotFound(msg)
        error = await run_in_threadpool(ctx.broker.webhooks.replay, letters[letter_id])
        return Replayed(delivered=error is None, error=error)

    return router


def _id(letter: DeadLetter) -> int:
    return letter.id


def _letter_id(key: str | None) -> int | None:
    if key is None:
        return None
    if not (key.isascii() and key.isdigit() and len(key) < 19):
        msg = "invalid cursor: pass the 'next' value of the previous page"
        raise SempsError(msg)
    return int(key)
