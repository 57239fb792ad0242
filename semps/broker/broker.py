"""The broker, a facade: subscriptions, tokens, and the entry of published events.

A published event is accepted on the event loop (nothing there waits on matching), queued
to the :class:`~semps.broker.pipeline.Pipeline`, read and matched in batches by worker
processes that each hold every stateless matcher's index, then committed with its
notifications in groups (one transaction and one fsync for many events) before its
publisher gets the 202 (:mod:`semps.broker.commit`). Stateful matchers (composite
detection, :class:`~semps.broker.observers.Observers`) observe every event's matches in
order, on the commit thread, and their state commits with the notifications. Committed
notifications go to the broker's :attr:`Broker.channels` (the webhook dispatcher, and the
live streams' fan-out the app adds); the database is the log they replay from.

Subscriptions live in the store and in an in-memory registry (token checks, visibility and
the composite resolver read it, not SQLite); a restart rebuilds the workers' indexes from the
store. A subscription the watchdog blames for an overrun is suspended with a reason its owner
can read, and an admin can resume it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from semps.broker.at_rest import SecretBox
from semps.broker.commit import Committer, Outcome, Published, Waiter
from semps.broker.contracts import Channel, Store
from semps.broker.gate import TokenGate
from semps.broker.graphs import SPARQL_UPDATE, GraphDesk, update_text
from semps.broker.metrics import Metrics
from semps.broker.observers import Observers
from semps.broker.pipeline import Item, Pipeline
from semps.broker.registration import Groups, Pending, register_group, too_many
from semps.broker.retention import Pruner
from semps.broker.sqlite_store import SQLiteStore
from semps.broker.tokens import Principal, TokenInfo
from semps.broker.webhooks import WebhookDispatcher
from semps.errors import (
    NotFound,
    SempsError,
    existing,
)
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.registry import get_matcher_class
from semps.matcher.values import Subscription
from semps.ontology.store import OntologyStore
from semps.pool import unpack_error

log = logging.getLogger("semps.broker")

#: The semantic matcher's snapshot beside the database: the workers start from its parses
#: and rewrite it when the stored subscriptions changed (each matcher kind persists what it
#: keeps in ``<kind>.snap`` there: :meth:`~semps.matcher.base.Matcher.persisted`).
SEMANTIC_SNAPSHOT = "semantic.snap"
#: The semantic matcher's saved index beside it: the workers start from it brought up to
#: date (:mod:`semps.broker.worker_load`), and the first saves it again when it aged.
SEMANTIC_STATE = "semantic.state"
#: What the key of the matchers' saved states is derived for from ``secret.key``.
STATE_KEY = "matcher states"


class Broker:
    """The broker over a data directory (``semps.sqlite3`` and ``ontology.sqlite3``).

    Args:
        data_dir: where the store and the ontology live (created if missing).
        limits: the per-request limits (:class:`~semps.limits.Limits`).
        workers: matching worker processes.
        webhook_attempts / webhook_backoff: webhook retries before a dead letter.
        webhook_options: further keyword arguments of the webhook dispatcher.
        store: the store to use (the broker closes it); default the SQLite store
            ``semps.sqlite3`` in ``data_dir`` (tests pass a
            :class:`~semps.broker.memory.MemoryStore`).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        limits: Limits = DEFAULT_LIMITS,
        workers: int = 2,
        webhook_attempts: int = 5,
        webhook_backoff: float = 0.5,
        webhook_options: dict[str, Any] | None = None,
        store: Store | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.limits = limits
        self.store = store if store is not None else SQLiteStore(self.data_dir / "semps.sqlite3")
        self.ontology = OntologyStore(self.data_dir / "ontology.sqlite3", limits=limits)
        self.metrics = Metrics()
        self.metrics.restore(self.store.saved_counters())  # counters survive restarts
        self._subs: dict[str, Subscription] = {}
        self._suspended: dict[str, str] = {}
        self._owned: Counter[str] = Counter()
        #: Bearer tokens: who each belongs to, cached briefly, bad guesses counted.
        self.gate = TokenGate(self.store)
        # Event ids: a random prefix per start and a counter (unique across restarts).
        self._id_prefix = f"ev-{uuid.uuid4().hex[:12]}-"
        self._ids = itertools.count(1)
        self._register = threading.Lock()  # one registration (or group) at a time
        self._groups = Groups(self._register, self._register_group)
        self.observers = Observers(self._subs.get, limits)  # stateful matchers, in this process
        self._read = threading.Event()  # the registry is read (the workers wait for it)
        self.webhooks = WebhookDispatcher(
            self.store,
            attempts=webhook_attempts,
            backoff=webhook_backoff,
            **(webhook_options or {}),
        )
        #: Where each committed group's notifications go, in order, from the commit thread
        #: (before the publishers hear back); the broker closes them.
        self.channels: list[Channel] = [self.webhooks]
        #: The knowledge graph, and the one way it changes (:mod:`semps.broker.graphs`).
        self.graphs = GraphDesk(self.store, self.ontology, limits)
        commit = Committer(
            self.store, self.channels, self.observers, self.metrics, limits, self.graphs
        )
        self.pipeline = Pipeline(
            load=self._stateless_subscriptions,
            replica=self.graphs.replica,
            commit=commit,
            commit_change=commit.commit_change,
            answer_change=self.graphs.settle,
            on_overrun=self.suspend,
            ordered=self.observers.holding,
            workers=workers,
            limits=limits,
            snapshots=self.data_dir,
            state_key=SecretBox.from_dir(self.data_dir).derive(STATE_KEY),
            graph_version=self.graphs.version,
        )
        self.graphs.pipeline = self.pipeline
        try:  # the workers start meanwhile (they read their matchers' saved states)
            self._read_registry()
        except BaseException:
            self._read.set()
            self.pipeline.close()
            raise
        self._read.set()
        self.webhooks.metrics = self.metrics
        self.pruner = Pruner(self.store, after_pass=self.save_metrics)
        self.pruner.start()

    # -- the registry ----------------------------------------------------------------------

    def _read_registry(self) -> None:
        """The stored subscriptions, suspensions and stateful matchers' states."""
        stateful: dict[str, bool] = {}  # by kind (a look-up a subscription: 12% of a start)
        for sub, suspended in self.store.subscriptions_with_status():
            self._remember(sub)
            if suspended is not None:
                self._suspended[sub.id] = suspended
                continue
            found = stateful.get(sub.kind)
            if found is None:
                found = stateful[sub.kind] = get_matcher_class(sub.kind).stateful
            if found:
                self.observers.add(sub)
        for kind, matcher in self.observers.items():
            saved = self.store.matcher_state(kind)
            if saved is not None:
                matcher.restore(saved)

    def _remember(self, sub: Subscription) -> None:
        old = self._subs.get(sub.id)
        if old is not None:
            self._owned[old.owner or ""] -= 1
        self._subs[sub.id] = sub
        self._owned[sub.owner or ""] += 1

    def _forget(self, sub_id: str) -> None:
        old = self._subs.pop(sub_id, None)
        if old is not None:
            self._owned[old.owner or ""] -= 1
        self._suspended.pop(sub_id, None)

    def _stateless_subscriptions(self) -> list[Subscription]:
        self._read.wait()
        subs = list(self._subs.values())
        stateful = {kind: get_matcher_class(kind).stateful for kind in {s.kind for s in subs}}
        suspended = self._suspended
        return [s for s in subs if s.id not in suspended and not stateful[s.kind]]

    def __len__(self) -> int:
        return len(self._subs)

    # -- subscriptions ---------------------------------------------------------------------

    def subscribe(
        self,
        text: str,
        *,
        kind: str,
        owner: str,
        name: str | None = None,
        sub_id: str | None = None,
    ) -> Subscription:
        """Register (or atomically replace) a subscription; errors leave nothing behind
        and a failed replacement leaves the old subscription registered and matching."""
        cls = get_matcher_class(kind)  # PluginNotFound first: nothing is allocated
        self.limits.check_query_size(text)
        if sub_id is None and not cls.stateful:
            return self._subscribe_grouped(Pending(text, kind, owner, name))
        with self._register:
            old = self._subs.get(sub_id) if sub_id is not None else None
            if sub_id is not None and old is None:
                msg = f"no subscription {sub_id!r}"
                raise NotFound(msg)
            if old is None and self._owned[owner] >= self.limits.max_subscriptions:
                raise too_many(owner, self._owned[owner])
            sub = Subscription(sub_id or self.store.next_id("sub-"), kind, text, owner, name)
            old_kind = old.kind if old is not None else None
            self._add_to_matchers(sub, old_kind)  # validates; raises before any change
            # The workers drop a stateless old kind themselves, once the new one is indexed.
            if old_kind is not None and old_kind != kind:
                if cls.stateful or get_matcher_class(old_kind).stateful:
                    self._drop_from_matchers(sub.id, old_kind)
            try:
                self.store.put_subscription(sub)
            except BaseException:  # not stored: not matching either (no ghost detections)
                self._unregister(sub, old)
                raise
            self._remember(sub)
            self._suspended.pop(sub.id, None)
        return sub

    def _unregister(self, sub: Subscription, old: Subscription | None) -> None:
        """Undo indexing ``sub`` (its store write failed): drop it, put ``old`` back."""
        with contextlib.suppress(Exception):
            self._drop_from_matchers(sub.id, sub.kind)
        if old is not None:
            with contextlib.suppress(Exception):
                self._add_to_matchers(old, None)

    def subscribe_many(
        self, items: Sequence[tuple[str, str, str | None]], *, owner: str
    ) -> list[Subscription | SempsError]:
        """Register new subscriptions of ``owner``, given as (text, kind, name), each
        registered or refused on its own (its error in its place), in order.

        The stateless ones register as one group with whatever single registrations wait
        (one round trip to the workers, one transaction and one fsync), and are durable
        when this returns; ``max_subscriptions`` counts the group's earlier items.

        Raises:
            SempsError: the workers or the store failed for the whole group (nothing of
                it is registered).
        """
        results: list[Subscription | SempsError | None] = [None] * len(items)
        grouped: list[tuple[int, Pending]] = []
        stateful: list[int] = []
        for i, (text, kind, name) in enumerate(items):
            try:
                cls = get_matcher_class(kind)
                self.limits.check_query_size(text)
            except SempsError as exc:
                results[i] = exc
                continue
            if cls.stateful:
                stateful.append(i)
            else:
                grouped.append((i, Pending(text, kind, owner, name)))
        self._groups.run([p for _, p in grouped])
        for i, pending in grouped:
            outcome = pending.result
            if isinstance(outcome, BaseException) and (
                pending.failed or not isinstance(outcome, SempsError)
            ):
                raise outcome  # the whole group failed: nothing of it is registered
            results[i] = outcome
        for i in stateful:  # composite detection: registered one by one, in this process
            text, kind, name = items[i]
            try:
                results[i] = self.subscribe(text, kind=kind, owner=owner, name=name)
            except SempsError as exc:
                results[i] = exc
        return [r for r in results if r is not None]

    def subscribe_soon(
        self, text: str, *, kind: str, owner: str, name: str | None, done: Callable[[], None]
    ) -> Pending | None:
        """Queue a new subscription to register in a group without blocking: ``done`` is
        called (on another thread) once the returned pending's ``result`` is set, the
        subscription or the error :meth:`subscribe` would raise. ``None``: its kind is not
        registered in groups (stateful), call :meth:`subscribe`.

        Raises:
            SempsError: an unknown kind, or a text over ``max_query_bytes`` (nothing queued).
        """
        cls = get_matcher_class(kind)
        self.limits.check_query_size(text)
        if cls.stateful:
            return None
        pending = Pending(text, kind, owner, name, done=done)
        self._groups.add(pending)
        return pending

    def _subscribe_grouped(self, mine: Pending) -> Subscription:
        """New stateless subscriptions register in groups (:mod:`.registration`)."""
        self._groups.run([mine])
        if isinstance(mine.result, BaseException):
            raise mine.result
        assert mine.result is not None
        return mine.result

    def _register_group(self, group: list[Pending]) -> None:
        register_group(
            group,
            owned=self._owned,
            limits=self.limits,
            store=self.store,
            pipeline=self.pipeline,
            remember=self._remember,
        )

    def _call_workers(self, request: tuple[Any, ...]) -> None:
        for status, value in self.pipeline.command(request):
            if status == "error":
                raise unpack_error(value)

    def _add_to_matchers(self, sub: Subscription, old_kind: str | None) -> None:
        """Index ``sub`` where its kind runs (it validates: raises before any change)."""
        if get_matcher_class(sub.kind).stateful:
            self.observers.add(sub)
        else:
            self._call_workers(("add", sub, old_kind))

    def _drop_from_matchers(self, sub_id: str, kind: str, *, wait: bool = True) -> None:
        """Unindex ``sub_id`` where ``kind`` runs; without ``wait``, the workers' part is
        queued and not waited for."""
        if get_matcher_class(kind).stateful:
            self.observers.remove(sub_id, kind)
        elif wait:
            self._call_workers(("remove", sub_id))
        else:
            self.pipeline.command(("remove", sub_id), wait=False)

    def unsubscribe(self, sub_id: str) -> None:
        with self._register:
            sub = existing(self._subs.get(sub_id), "subscription", sub_id)
            if sub_id not in self._suspended:
                self._drop_from_matchers(sub_id, sub.kind)
            self.store.delete_subscription(sub_id)
            self._forget(sub_id)

    def suspend(self, sub_id: str, reason: str) -> None:
        """Take a subscription out of matching, with a reason its owner can read (the
        watchdog calls this; never blocks on the workers)."""
        sub = self._subs.get(sub_id)
        if sub is None or sub_id in self._suspended:
            return
        self._suspended[sub_id] = reason
        self.metrics.suspensions += 1
        self.store.set_suspended(sub_id, reason)
        log.warning("subscription %s of %s suspended: %s", sub_id, sub.owner, reason)
        self._drop_from_matchers(sub_id, sub.kind, wait=False)

    def resume(self, sub_id: str) -> Subscription:
        """Put a suspended subscription back into matching (admin)."""
        sub = existing(self._subs.get(sub_id), "subscription", sub_id)
        with self._register:
            if sub_id in self._suspended:
                self._add_to_matchers(sub, None)
                self.store.set_suspended(sub_id, None)
                self._suspended.pop(sub_id, None)
                log.info("subscription %s of %s resumed", sub_id, sub.owner)
        return sub

    def status(self, sub_id: str) -> tuple[str, str | None]:
        """(``"active"`` or ``"suspended"``, the reason)."""
        reason = self._suspended.get(sub_id)
        return ("suspended", reason) if reason is not None else ("active", None)

    def subscriptions(self, owner: str | None = None) -> list[Subscription]:
        """Every subscription (of ``owner``), in registration order."""
        subs = list(self._subs.values())
        return subs if owner is None else [s for s in subs if s.owner == owner]

    def visible(self, sub_id: str, who: Principal) -> Subscription:
        """The subscription if ``who`` may see it (its owner, or an admin)."""
        sub = self._subs.get(sub_id)
        if sub is None or (who.role != "admin" and sub.owner != who.subject):
            msg = f"no subscription {sub_id!r}"
            raise NotFound(msg)
        return sub

    # -- events ----------------------------------------------------------------------------

    async def publish(
        self, data: bytes, media_type: str, *, retain: bool = False, publisher: str = ""
    ) -> Published:
        """Accept one event; returns (event id, notifications) once they are durable, and
        the graph's version after it when it changed the graph (``retain``: its triples are
        kept in the knowledge graph). ``publisher``: who publishes it (a token's subject),
        kept with its document."""
        (result,) = await self.publish_many([(media_type, data)], [retain], publisher=publisher)
        if isinstance(result, BaseException):
            raise result
        return result

    async def publish_many(
        self,
        documents: Sequence[tuple[str, bytes]],
        retain: Sequence[bool] = (),
        ids: Sequence[str | None] = (),
        publisher: str = "",
        in_order: bool = False,
    ) -> list[Outcome]:
        """Accept several events (each published or refused on its own), in order. An
        event with ``retain`` (or a SPARQL Update) changes the knowledge graph: the events
        after it see it (:meth:`publish_change`). ``ids`` names events where given (a
        bridge's: a message redelivered keeps its id), the broker the others (and all of a
        group that changes the graph). ``publisher``: who publishes them (a token's
        subject), kept with their documents. ``in_order``: committed after every earlier
        call's ``in_order`` events (a bridge's ordered messages)."""
        if not documents:
            return []
        if any(retain) or any(m.startswith(SPARQL_UPDATE) for m, _ in documents):
            return await self._publish_in_turn(documents, retain)
        now = time.time()
        waiter = Waiter.on(asyncio.get_running_loop(), len(documents))
        prefix, counter = self._id_prefix, self._ids
        named = list(ids) + [None] * (len(documents) - len(ids))
        items = [
            Item(
                given or f"{prefix}{next(counter)}",
                media_type,
                body,
                now,
                (waiter, i),
                publisher=publisher,
                in_order=in_order,
            )
            for i, ((media_type, body), given) in enumerate(zip(documents, named, strict=True))
        ]
        self.pipeline.submit(items)
        return await waiter.future

    async def _publish_in_turn(
        self, documents: Sequence[tuple[str, bytes]], retain: Sequence[bool]
    ) -> list[Outcome]:
        """Events some of which change the graph: each change in its place (the events
        before it matched without it, those after it with it)."""
        out: list[Outcome | None] = [None] * len(documents)
        waiting: list[tuple[list[int], asyncio.Future[list[Outcome]]]] = []
        run: list[int] = []

        def flush() -> None:
            if not run:
                return
            now, loop = time.time(), asyncio.get_running_loop()
            waiter = Waiter.on(loop, len(run))
            items = []
            for k, i in enumerate(run):
                media_type, body = documents[i]
                event_id = f"{self._id_prefix}{next(self._ids)}"
                items.append(Item(event_id, media_type, body, now, (waiter, k)))
            self.pipeline.submit(items)
            waiting.append((list(run), waiter.future))
            run.clear()

        for i, (media_type, body) in enumerate(documents):
            keep = i < len(retain) and retain[i]
            if not keep and not media_type.startswith(SPARQL_UPDATE):
                run.append(i)
                continue
            flush()
            try:
                out[i] = await self.publish_change(media_type, body)
            except SempsError as exc:
                out[i] = exc
            if out[i] is None:  # a retained event the graph knew all of: an event
                run.append(i)
        flush()
        for indexes, future in waiting:
            for i, outcome in zip(indexes, await future, strict=True):
                out[i] = outcome
        return [o for o in out if o is not None]

    async def publish_change(self, media_type: str, body: bytes) -> Published | None:
        """Publish an event that changes the knowledge graph: a retained event (its triples
        kept) or a SPARQL Update; answered once the change and its notifications are
        committed, as (event id, notifications, graph version). ``None``: a retained event
        whose triples the graph holds already (publish it as any event).

        Raises:
            IngestError, GraphError: refused; nothing changed.
        """
        event_id = f"{self._id_prefix}{next(self._ids)}"
        if media_type.startswith(SPARQL_UPDATE):
            text = update_text(body)
            applied = await self.graphs.update(text, event_id=event_id)
        else:
            found = await self.graphs.retain(event_id, media_type, body)
            if found is None:
                return None
            applied = found
        return (applied.event, applied.notified, applied.version)

    # -- tokens ----------------------------------------------------------------------------

    def authorize(self, token: str, *roles: str, client: str | None = None) -> Principal:
        """The principal a bearer token belongs to, with one of ``roles`` (raises
        AuthError, PermissionDenied or TooManyRequests: :meth:`.TokenGate.authorize`)."""
        return self.gate.authorize(token, *roles, client=client)

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a token at once (raises NotFound: :meth:`.TokenGate.revoke_token`)."""
        return self.gate.revoke_token(token_id)

    def check_token_id(self, token_id: str) -> None:
        """That the token whose id is ``token_id`` still authenticates (raises AuthError:
        :meth:`.TokenGate.check_token_id`)."""
        self.gate.check_token_id(token_id)

    def save_metrics(self) -> None:
        """Keep the counters in the store (each retention pass and at close)."""
        self.store.save_counters(self.metrics.snapshot())

    def close(self) -> None:
        self.pruner.close()
        self.graphs.close()
        self.pipeline.close()
        for channel in self.channels:
            channel.close()
        self.observers.close()
        self.ontology.close()
        self.save_metrics()
        self.store.close()
