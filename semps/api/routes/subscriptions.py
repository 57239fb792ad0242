"""``/subscriptions``: register (one, or many in a batch), list (paged), read, replace,
delete and resume.

The body's media type must fit the kind: SPARQL (``application/sparql-query`` or
``text/plain``) for ``semantic``; JSON or the text form for ``content`` and ``symmetric``;
text for ``composite``. No ``Content-Type`` takes the kind's own form.
"""

import asyncio
import json
from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from semps.api.bodies import (
    JSON,
    json_content,
    media_type,
    read_body,
    request_body,
    require_media_type,
    text_content,
)
from semps.api.context import Context
from semps.api.errors import error_body, responses
from semps.api.models import (
    JsonSubscription,
    SubscriptionBatchOut,
    SubscriptionCreated,
    SubscriptionOut,
    SubscriptionPage,
)
from semps.api.pagination import DEFAULT_LIMIT, MAX_LIMIT, decode_cursor, encode_cursor, page
from semps.api.solid import storage_link
from semps.api.subscription_batch import BATCH_MEDIA_TYPES, BatchEntry, read_batch
from semps.broker.broker import Broker
from semps.broker.contracts import Activity
from semps.broker.tokens import Principal
from semps.errors import SempsError, SubscriptionSyntaxError, UnsupportedMediaType
from semps.matcher.registry import get_matcher_class
from semps.matcher.values import Subscription
from semps.settings import parse_retention_age

__all__ = ["MEDIA_TYPES", "check_body_type", "register_text", "subscriptions_router"]

SPARQL = "application/sparql-query"
TEXT = "text/plain"
#: The media types a subscription body of each kind may have (other kinds: any of these).
MEDIA_TYPES = {
    "semantic": (SPARQL, TEXT),
    "content": (JSON, TEXT),
    "symmetric": (JSON, TEXT),
    "composite": (TEXT,),
}
_ANY = (SPARQL, TEXT, JSON)
_JSON_HINT = "JSON constraints or regions need ?kind=content or ?kind=symmetric"
_SPARQL_HINT = "a SPARQL query needs ?kind=semantic (the default)"

_BODY = request_body({**text_content([SPARQL, TEXT]), **json_content(JsonSubscription)})


def check_body_type(found: str | None, kind: str) -> None:
    """A subscription body of ``kind`` may have the media type ``found`` (``None``: none
    sent).

    Raises:
        UnsupportedMediaType: it may not (415), with a hint when the kind looks wrong.
    """
    allowed = MEDIA_TYPES.get(kind, _ANY)
    if found is not None and found not in allowed:
        hint = {JSON: _JSON_HINT, SPARQL: _SPARQL_HINT}.get(found, "")
        msg = f"unsupported media type {found!r} here (use {', '.join(sorted(allowed))})"
        raise UnsupportedMediaType(msg + (f"; {hint}" if hint else ""))


async def register_text(
    broker: Broker, text: str, kind: str, owner: str, name: str | None, sub_id: str | None = None
) -> Subscription:
    """Register (or replace) a subscription; a semantic one whose text looks like JSON
    says which kind reads JSON. A new one of a kind registered in groups is queued and
    awaited (:meth:`~semps.broker.broker.Broker.subscribe_soon`), holding no thread;
    the others register on a worker thread."""
    try:
        if sub_id is None:
            sub = await _registered_soon(broker, text, kind, owner, name)
            if sub is not None:
                return sub
        return await run_in_threadpool(
            broker.subscribe, text, kind=kind, owner=owner, name=name, sub_id=sub_id
        )
    except SubscriptionSyntaxError as exc:
        if kind == "semantic" and text.lstrip().startswith(("{", "[")):
            msg = f"{exc.detail} ({_JSON_HINT})"
            raise SubscriptionSyntaxError(msg, line=exc.line, column=exc.column) from exc
        raise


async def _registered_soon(
    broker: Broker, text: str, kind: str, owner: str, name: str | None
) -> Subscription | None:
    """A new subscription registered in a group, awaited; ``None``: its kind is not
    registered in groups."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[None] = loop.create_future()

    def done() -> None:  # on the registering thread
        loop.call_soon_threadsafe(_settle, answered)

    pending = broker.subscribe_soon(text, kind=kind, owner=owner, name=name, done=done)
    if pending is None:
        return None
    await answered
    if isinstance(pending.result, BaseException):
        raise pending.result
    return pending.result


def _settle(answered: asyncio.Future[None]) -> None:
    if not answered.done():  # not cancelled (the client went away)
        answered.set_result(None)


def subscriptions_router(ctx: Context) -> APIRouter:
    """The ``/subscriptions`` routes (the notification streams are in ``streams``)."""
    router = APIRouter(tags=["subscriptions"])
    broker = ctx.broker
    Subscriber = Annotated[Principal, Depends(ctx.auth.require("subscriber"))]  # noqa: N806
    Admin = Annotated[Principal, Depends(ctx.auth.require("admin"))]  # noqa: N806

    async def read_text(request: Request, kind: str) -> str:
        check_body_type(media_type(request), kind)
        return (await read_body(request, ctx.max_body)).decode("utf-8", "replace")

    async def register(
        text: str, kind: str, owner: str, name: str | None, sub_id: str | None = None
    ) -> Subscription:
        return await register_text(broker, text, kind, owner, name, sub_id)

    @router.post(
        "/subscriptions",
        status_code=201,
        openapi_extra=_BODY,
        response_model_exclude_none=True,
        responses=responses(400, 401, 403, 413, 415, 422, 503, 507),
    )
    async def subscribe(
        request: Request,
        who: Subscriber,
        kind: str = Query("semantic", description="semantic, content, symmetric, composite"),
        name: str | None = Query(None),
        callback: str | None = Query(None, description="webhook URL (http or https)"),
        retain_count: int | None = Query(
            None, ge=0, description="notifications kept (0: no bound; default: the server's)"
        ),
        retain_age: str | None = Query(
            None, max_length=32, description="notifications older go, e.g. 7d (0: no bound)"
        ),
    ) -> SubscriptionCreated:
        """Register a subscription; with ``callback``, its notifications are POSTed there
        too, signed with the returned ``secret``. ``retain_count`` and ``retain_age`` bound
        its stored notifications instead of the server's defaults."""
        text = await read_text(request, kind)
        if callback is not None:
            ctx.policy.check_url(callback)  # UnsafeCallback (400) before anything is registered
        age = None if retain_age is None else parse_retention_age(retain_age)
        sub = await register(text, kind, who.subject, name)
        if retain_count is not None or age is not None:
            broker.store.set_retention(sub.id, retain_count, age)
        if callback is None:
            return SubscriptionCreated(id=sub.id)
        return SubscriptionCreated(id=sub.id, secret=broker.store.set_webhook(sub.id, callback))

    @router.post(
        "/subscriptions/batch",
        response_model=SubscriptionBatchOut,
        openapi_extra=_BATCH_BODY,
        responses=responses(400, 401, 403, 413, 415, 422),
    )
    async def subscribe_batch(
        request: Request,
        who: Subscriber,
        kind: str = Query("semantic", description="every item's kind"),
    ) -> Response:
        """Register many subscriptions in one request (text: one a line; JSON lines
        ``{"text", "name"}``; or a tar of ``.rq`` files), each registered or refused on
        its own, its outcome in its place: ``{"id"}`` or its error. The registered ones are
        durable when the answer comes; a refused one changes nothing."""
        get_matcher_class(kind)  # an unknown kind: 400 before the body is read
        found = require_media_type(request, BATCH_MEDIA_TYPES)
        body = await read_body(request, broker.limits.max_batch_bytes)
        entries = await run_in_threadpool(read_batch, body, found, broker.limits)
        items = [(e.text, kind, e.name) for e in entries if e.error is None]
        outcomes = await run_in_threadpool(lambda: broker.subscribe_many(items, owner=who.subject))
        return Response(_batch_answer(entries, outcomes), media_type=JSON)

    @router.get("/subscriptions", responses=responses(400, 401, 403, 422))
    def list_subscriptions(
        who: Subscriber,
        limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
        cursor: str | None = Query(None, max_length=512, description="`next` of the last page"),
    ) -> SubscriptionPage:
        """The caller's subscriptions (an admin's: every one), in registration order."""
        owner = None if who.role == "admin" else who.subject
        after = decode_cursor(cursor, "subscriptions", ctx.cursor_key)
        items, last = page(
            broker.subscriptions(owner), _order, None if after is None else _key(after), limit
        )
        activity = broker.store.activity([s.id for s in items])
        return SubscriptionPage(
            items=[subscription_out(s, broker, activity[s.id]) for s in items],
            next=None if last is None else encode_cursor("subscriptions", last.id, ctx.cursor_key),
        )

    @router.head("/subscriptions/{sub_id}", include_in_schema=False)
    @router.get("/subscriptions/{sub_id}", responses=responses(401, 403, 404))
    def get_subscription(
        sub_id: str, who: Subscriber, request: Request, response: Response
    ) -> SubscriptionOut:
        """One subscription, with its status (and why it is suspended); its ``Link``
        header names the Solid description resource (the subscription is a Solid topic)."""
        found = subscription_out(broker.visible(sub_id, who), broker)
        response.headers["Link"] = storage_link(str(request.base_url).rstrip("/"))
        return found

    @router.put(
        "/subscriptions/{sub_id}",
        openapi_extra=_BODY,
        response_model_exclude_none=True,
        responses=responses(400, 401, 403, 404, 413, 415, 422, 503, 507),
    )
    async def replace_subscription(
        sub_id: str,
        request: Request,
        who: Subscriber,
        kind: str = Query("semantic"),
        name: str | None = Query(None),
    ) -> SubscriptionCreated:
        """Replace a subscription atomically (a refused one leaves the old one matching)."""
        old = broker.visible(sub_id, who)
        text = await read_text(request, kind)
        await register(text, kind, old.owner or who.subject, name, sub_id)
        return SubscriptionCreated(id=sub_id)

    @router.delete("/subscriptions/{sub_id}", status_code=204, responses=responses(401, 403, 404))
    def delete_subscription(sub_id: str, who: Subscriber) -> Response:
        """Delete a subscription and its stored notifications."""
        broker.visible(sub_id, who)
        broker.unsubscribe(sub_id)
        return Response(status_code=204)

    @router.post(
        "/subscriptions/{sub_id}/suspend",
        responses=responses(401, 403, 404, 422),
    )
    def suspend_subscription(
        sub_id: str,
        who: Admin,
        reason: str = Query(
            "suspended by an admin", max_length=200, description="shown to its owner"
        ),
    ) -> SubscriptionOut:
        """Take a subscription out of matching (admin); its owner reads ``reason``.
        Suspending a suspended one changes nothing."""
        sub = broker.visible(sub_id, who)
        broker.suspend(sub_id, reason)
        return subscription_out(sub, broker)

    @router.post(
        "/subscriptions/{sub_id}/resume",
        dependencies=[Depends(ctx.auth.require("admin"))],
        responses=responses(401, 403, 404),
    )
    async def resume_subscription(sub_id: str) -> SubscriptionOut:
        """Put a suspended subscription back into matching (admin)."""
        sub = await run_in_threadpool(broker.resume, sub_id)
        return subscription_out(sub, broker)

    return router


_BATCH_BODY = request_body(text_content(BATCH_MEDIA_TYPES))


def _batch_answer(entries: list[BatchEntry], outcomes: list[Subscription | SempsError]) -> bytes:
    """The batch's answer: each entry's id or error body, in order."""
    registered = iter(outcomes)
    results: list[dict[str, object]] = []
    for entry in entries:
        outcome = entry.error if entry.error is not None else next(registered)
        if isinstance(outcome, SempsError):
            results.append({k: v for k, v in error_body(outcome).items() if v is not None})
        else:
            results.append({"id": outcome.id})
    return json.dumps({"subscriptions": results}, ensure_ascii=False).encode()


def _key(sub_id: str) -> tuple[int, str]:
    """Ids in registration order: ``sub-9`` before ``sub-10``."""
    return len(sub_id), sub_id


def _order(sub: Subscription) -> tuple[int, str]:
    return _key(sub.id)


def subscription_out(
    sub: Subscription, broker: Broker, activity: Activity | None = None
) -> SubscriptionOut:
    """A subscription with its status and activity (read when not given), as the API
    shows it."""
    status, reason = broker.status(sub.id)
    if activity is None:
        activity = broker.store.activity([sub.id])[sub.id]
    return SubscriptionOut.model_validate(
        {
            **asdict(sub),
            "status": status,
            "reason": reason,
            "matches": activity.notified,
            # as the notifications state it (milliseconds)
            "last_match": None if activity.last is None else round(activity.last, 3),
        }
    )
