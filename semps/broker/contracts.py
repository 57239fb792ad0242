"""The broker's parts and their contracts: the :class:`Store` and the delivery :class:`Channel`.

The broker, the HTTP API and the CLI reach the store only through the methods stated here,
one contract per concern (:class:`SubscriptionStore`, :class:`NotificationLog`,
:class:`WebhookStore`, :class:`TokenStore`, :class:`RetentionStore`,
:class:`CounterStore`), which :class:`Store` joins with the rules every method keeps. A
part that needs one concern asks for that contract only (the pruner a
:class:`RetentionStore`, the token command a :class:`TokenStore`). Two implementations keep
them all: :class:`semps.broker.sqlite_store.SQLiteStore` (one SQLite file, durable) and
:class:`semps.broker.memory.MemoryStore` (plain Python, for tests, not durable). One
contract suite (``tests/broker/test_store_contract.py``) runs over both.

Notifications leave the broker through the channels it publishes each committed group to
(:attr:`semps.broker.broker.Broker.channels`): live streams (SSE and WebSocket, fed by
:class:`semps.broker.fanout.Fanout`) and webhooks
(:class:`semps.broker.webhooks.WebhookDispatcher`); :class:`semps.broker.memory.RecordingChannel`
records what a channel is handed, for tests.

The value objects the store hands out live here too.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from semps.broker.tokens import Principal, TokenInfo
from semps.errors import NotFound, StoreError
from semps.graph.graph import KnowledgeGraph
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion

__all__ = [
    "Activity",
    "Channel",
    "CounterStore",
    "EVENT_DOCUMENT_BYTES",
    "DeadLetter",
    "EventDocuments",
    "EventRecord",
    "Note",
    "Notification",
    "NotificationLog",
    "RetentionStore",
    "Store",
    "StoredEvent",
    "SubscriptionStore",
    "TokenStore",
    "Webhook",
    "WebhookStore",
]

#: A committed notification: (subscription id, seq, payload JSON text holding ``"id": seq``).
Note = tuple[str, int, str]


@dataclass(frozen=True, slots=True)
class Webhook:
    """A subscription's callback: where to POST, the HMAC key, the last delivered seq."""

    subscription: str
    url: str
    secret: str
    delivered: int


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A notification whose webhook delivery gave up."""

    id: int
    subscription: str
    seq: int
    url: str
    error: str
    attempts: int


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An accepted event and its notifications, ready to commit.

    ``notes`` holds (subscription id, payload head): the notification's JSON object without
    its closing brace; the store appends ``,"id":<seq>,"time":<unix time>}`` once it has
    numbered it (the time of the commit, in seconds with three decimals).
    ``logged``: whether the event log keeps a row for it (a change of the knowledge graph
    made through ``/graph`` is not an event: only its notifications are stored).
    """

    id: str
    received: float
    media_type: str
    size: int
    notes: list[tuple[str, str]]
    logged: bool = True
    #: The document as published (kept for ``GET /events/{id}`` and explain, within
    #: :data:`EVENT_DOCUMENT_BYTES`) and who published it (a token's subject).
    body: bytes = b""
    publisher: str = ""


#: Bytes of event documents a store keeps at most, all documents together: past it the
#: oldest go first (and each goes with the event log's age bound, ``retain_age``).
EVENT_DOCUMENT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """A published event's document as stored: who published it, when, its media type, its
    bytes and the subscriptions it notified."""

    id: str
    publisher: str
    received: float
    media_type: str
    body: bytes
    notified: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Activity:
    """What a subscription has been notified of: ``notified`` notifications made so far
    (its last seq: pruned ones count) and ``last``, the Unix time of the latest (``None``:
    none yet, or pruned before the store could learn it)."""

    notified: int = 0
    last: float | None = None


@dataclass(frozen=True, slots=True)
class Notification:
    """One stored notification."""

    subscription: str
    seq: int
    event: str
    payload: dict[str, object]


class SubscriptionStore(ABC):
    """The subscriptions: registered, replaced, suspended, deleted, listed."""

    @abstractmethod
    def next_id(self, prefix: str) -> str:
        """A new id ``<prefix><n>``, n counting from 1 per prefix, never handed out again (a
        durable store keeps the counter before it returns: an id given to a subscription
        that was then refused, or lost in a crash, is not reissued to another subscriber).

        Raises:
            StoreError: the counter could not be kept (no id was handed out).
        """

    def next_ids(self, prefix: str, count: int) -> list[str]:
        """``count`` new ids at once (:meth:`next_id`'s; a durable store keeps the counter
        once for them all)."""
        return [self.next_id(prefix) for _ in range(count)]

    def reserve_ids(self, prefix: str, count: int) -> list[str]:
        """``count`` new ids whose counter is kept (made durable) by the next
        :meth:`put_subscriptions` or :meth:`keep_ids`, in the same commit: the caller hands
        none out before one of those returned. The default keeps it at once
        (:meth:`next_ids`)."""
        return self.next_ids(prefix, count)

    def keep_ids(self) -> None:
        """Keep the counter of ids reserved since it was last kept (:meth:`reserve_ids`).

        Raises:
            StoreError: it could not be kept.
        """
        return None  # the default's reservations were kept at once

    @abstractmethod
    def put_subscriptions(self, subs: Sequence[Subscription]) -> None:
        """Insert or replace subscriptions in one transaction, keeping the counter of the
        ids reserved (:meth:`reserve_ids`) with them. A replaced one keeps its
        owner, place in the listing, retention, webhook and notifications, and is active
        again.

        Raises:
            StoreError: nothing was stored.
        """

    def put_subscription(self, sub: Subscription) -> None:
        """:meth:`put_subscriptions` for one."""
        self.put_subscriptions([sub])

    @abstractmethod
    def set_suspended(self, sub_id: str, reason: str | None) -> None:
        """Suspend a subscription with a reason its owner can read (``None``: resume)."""

    @abstractmethod
    def delete_subscription(self, sub_id: str) -> None:
        """Delete a subscription with its webhook and notifications (its dead letters stay);
        a subscription stored again under the same id numbers from 1."""

    @abstractmethod
    def subscription(self, sub_id: str) -> Subscription:
        """One subscription.

        Raises:
            NotFound: no subscription has that id.
        """

    @abstractmethod
    def subscriptions_with_status(
        self, owner: str | None = None
    ) -> list[tuple[Subscription, str | None]]:
        """Every subscription (of ``owner``) with its suspension reason (``None``: active),
        in creation order."""

    def subscriptions(self, owner: str | None = None) -> list[Subscription]:
        """:meth:`subscriptions_with_status` without the status."""
        return [sub for sub, _ in self.subscriptions_with_status(owner)]


def _nothing() -> None:
    """What runs inside a commit's transaction when nothing else must."""


class NotificationLog(ABC):
    """The event log and each subscription's numbered notifications: committed in groups
    with the stateful matchers' detection state, read back in seq order."""

    @abstractmethod
    def matcher_state(self, kind: str) -> dict[str, object] | None:
        """The detection state last committed for a matcher kind (``None``: none)."""

    def commit_events(
        self,
        records: Sequence[EventRecord],
        states: dict[str, dict[str, object]] | None = None,
        within: Callable[[], None] | None = None,
    ) -> list[list[Note]]:
        """Commit a group of accepted events, their notifications and the matchers'
        detection ``states`` (by kind) in one transaction.

        Each notification gets its subscription's next seq, in the order of ``records`` and
        of each record's notes; its text is the note's head with ``,"id":<seq>,"time":<t>}``
        appended (``t``: the commit's Unix time, in seconds with three decimals).
        An event id already in the log is not logged twice (its notifications still are).
        ``within`` runs inside the transaction, before the rows are written (the knowledge
        graph writes a change there: :meth:`open_graph`); when it raises, nothing is
        committed and its error is raised as it is.

        Returns:
            Per record, its notifications as (subscription id, seq, JSON text).

        Raises:
            StoreError: nothing of the group was stored.
        """
        try:  # what would not serialise fails before anything changes
            saved = {kind: json.dumps(state) for kind, state in (states or {}).items()}
        except (TypeError, ValueError) as exc:  # ValueError: a JSON cycle
            msg = f"cannot store {len(records)} events and their notifications: {exc}"
            raise StoreError(msg) from exc
        return self._commit(records, saved, within or _nothing)

    @abstractmethod
    def _commit(
        self, records: Sequence[EventRecord], saved: dict[str, str], within: Callable[[], None]
    ) -> list[list[Note]]:
        """:meth:`commit_events` of ``records``, the ``saved`` states being JSON texts."""

    def add_notifications(
        self,
        event_id: str,
        payloads: Iterable[tuple[str, dict[str, object]]],
        states: dict[str, dict[str, object]] | None = None,
    ) -> int:
        """:meth:`commit_events` for one event given (subscription id, payload object)
        pairs; returns how many notifications."""
        notes = [(sub_id, json.dumps(payload)[:-1]) for sub_id, payload in payloads]
        record = EventRecord(event_id, time.time(), "", 0, notes)
        return len(self.commit_events([record], states)[0])

    @abstractmethod
    def notifications_after(self, sub_id: str, after: int, limit: int = 500) -> list[Notification]:
        """At most ``limit`` notifications of ``sub_id`` after seq ``after``, in seq order."""

    def notification(self, sub_id: str, seq: int) -> Notification:
        """One stored notification.

        Raises:
            NotFound: it was never stored, or was pruned or deleted.
        """
        found = self.notifications_after(sub_id, seq - 1, limit=1)
        if not found or found[0].seq != seq:
            msg = f"no notification {seq} of subscription {sub_id!r}"
            raise NotFound(msg)
        return found[0]

    @abstractmethod
    def notification_texts_after(
        self, sub_id: str, after: int, limit: int = 200, max_bytes: int = 256 * 1024
    ) -> list[tuple[int, str]]:
        """Notifications of ``sub_id`` after seq ``after`` as (seq, JSON text), in seq
        order: at most ``limit`` of them and, past the first, at most ``max_bytes`` of text
        (the first is always given, however long)."""

    @abstractmethod
    def activity(self, sub_ids: Sequence[str]) -> dict[str, Activity]:
        """:class:`Activity` of each of ``sub_ids`` (a subscription never notified, or
        unknown, has ``Activity()``); bounded work per id (a page of a listing)."""


class EventDocuments(ABC):
    """The documents of published events, kept newest first within
    :attr:`document_bytes` (and ``retain_age``), committed with their events."""

    #: Bytes of documents kept at most, all together (0: none kept); a document larger than
    #: that alone is not kept.
    document_bytes: int = EVENT_DOCUMENT_BYTES

    @abstractmethod
    def event_document(self, event_id: str) -> StoredEvent:
        """The stored document of an event.

        Raises:
            NotFound: no such event, or its document is no longer kept.
        """


class WebhookStore(ABC):
    """Webhooks (a subscription's callback and its delivered seq) and dead letters."""

    @abstractmethod
    def set_webhook(self, sub_id: str, url: str) -> str:
        """Attach (or move) a subscription's callback URL; returns its new HMAC secret. A
        moved webhook keeps its delivered seq."""

    @abstractmethod
    def webhooks(self) -> list[Webhook]:
        """Every webhook, with its secret in clear."""

    @abstractmethod
    def pending_webhooks(self) -> list[Webhook]:
        """The webhooks with notifications stored after their delivered seq."""

    def has_webhooks(self) -> bool:
        """Whether any subscription has a webhook (default: :meth:`webhooks` is not empty)."""
        return bool(self.webhooks())

    @abstractmethod
    def webhook_backlog(self) -> int:
        """How many stored notifications lie after their webhook's delivered seq."""

    @abstractmethod
    def mark_delivered(self, sub_id: str, seq: int) -> None:
        """A webhook's notifications up to ``seq`` are done (the delivered seq never goes
        back)."""

    @abstractmethod
    def add_dead_letter(self, hook: Webhook, seq: int, error: str, attempts: int) -> None:
        """Keep a notification whose delivery to ``hook`` gave up."""

    @abstractmethod
    def dead_letters(self) -> list[DeadLetter]:
        """Every dead letter, oldest first (ids increase)."""

    @abstractmethod
    def drop_dead_letter(self, letter_id: int) -> None:
        """Forget a dead letter."""


class TokenStore(ABC):
    """Bearer tokens: created (only a digest kept), listed, revoked, looked up."""

    @abstractmethod
    def create_token(
        self, role: str, subject: str | None = None, *, expires_at: float | None = None
    ) -> tuple[str, str]:
        """A new bearer token for ``role``: returns (token id, secret). Only a digest of
        the secret is kept; the id is ``tok-`` and 12 hex digits of the secret's SHA-256.

        Raises:
            StoreError: an unknown role, or an expiry time that has already passed.
        """

    @abstractmethod
    def list_tokens(self) -> list[TokenInfo]:
        """Every token (revoked and expired ones too), oldest first."""

    @abstractmethod
    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke a token (revoking twice keeps the first time).

        Raises:
            NotFound: no token has that id.
        """

    @abstractmethod
    def principal(self, token: str) -> Principal | None:
        """Who ``token`` belongs to; ``None`` for an unknown, expired or revoked token."""

    @abstractmethod
    def token_info(self, token_id: str) -> TokenInfo | None:
        """The token whose id is ``token_id`` (revoked or expired too); ``None``: none."""


class RetentionStore(ABC):
    """What is kept: a subscription's own bounds, and pruning past them."""

    @abstractmethod
    def set_retention(self, sub_id: str, count: int | None, age: float | None) -> None:
        """A subscription's own retention: notifications kept by number and by age in
        seconds (``None``: the service's default; 0: no bound)."""

    @abstractmethod
    def retention(self, sub_id: str) -> tuple[int | None, float | None]:
        """A subscription's own (count, age); ``None`` where it takes the default (and for
        an unknown subscription)."""

    @abstractmethod
    def prune(self, count: int, age: float, *, now: float | None = None, chunk: int = 1000) -> int:
        """Delete what is stored past retention; returns how many rows went.

        Each subscription keeps its newest ``count`` notifications (by seq, counted from
        the last seq it was given) and those younger than ``age`` seconds at ``now``
        (default: the current time); its own bounds replace these; 0 means no bound. Events
        received more than ``age`` seconds before ``now`` leave the event log (when ``age``
        is not 0). Deletions commit ``chunk`` rows at a time.
        """


class CounterStore(ABC):
    """What is stored, counted; and the metrics' counters, kept across restarts."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """What is stored: ``subscriptions``, ``tokens`` (active ones),
        ``notifications_stored``, ``webhooks``, ``dead_letters`` and ``events_stored``."""

    @abstractmethod
    def save_counters(self, values: dict[str, int]) -> None:
        """Keep counters (metrics) across restarts; a name saved again takes the new value."""

    @abstractmethod
    def saved_counters(self) -> dict[str, int]:
        """Every counter :meth:`save_counters` kept."""


class Store(
    SubscriptionStore,
    NotificationLog,
    EventDocuments,
    WebhookStore,
    TokenStore,
    RetentionStore,
    CounterStore,
):
    """Where the broker keeps subscriptions, the event log, notifications, webhooks, dead
    letters, tokens and counters: one contract per concern, and these rules for all.

    Contract, for every implementation:

    - **Durability.** What a method changed is committed when it returns: a durable store
      keeps it across a crash of the process from then on (the counter behind
      :meth:`next_id` included: an id is never handed out twice). A method that raises
      has changed nothing (one transaction per call; :meth:`prune` commits chunk by chunk,
      so a failed pass keeps the chunks it finished).
    - **Ordering.** Each subscription's notifications are numbered 1, 2, 3, ... in commit
      order (:meth:`commit_events`), strictly increasing, never reused while the
      subscription exists (pruning removes the oldest, never renumbers).
      :meth:`notifications_after` and :meth:`notification_texts_after` page through them
      in seq order: a reader resuming after seq ``n`` gets every later notification still
      stored and none twice. Listings (:meth:`subscriptions_with_status`,
      :meth:`list_tokens`, :meth:`dead_letters`) are in creation order.
    - **Errors.** Every error raised on purpose is a :class:`~semps.errors.StoreError`: a
      failed write (``StoreError``), a missing thing asked for by id (``NotFound``, where the
      method says so); updating or deleting something missing is a no-op.
    - **Threads.** Every method may be called from any thread, concurrently, and each call
      is atomic: readers see the last committed state, never part of a commit, and never
      wait behind a commit's fsync. After :meth:`close`, no method may be called.
    """

    @abstractmethod
    def close(self) -> None:
        """Release the store (a durable store has already committed everything)."""

    def open_graph(
        self, expansion: Expansion, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[KnowledgeGraph, Path | None]:
        """The knowledge graph this store keeps, and the database file other processes
        read it from (``None``: it lives in this process only). A change the graph applies
        inside :meth:`commit_events`' ``within`` commits with that transaction. The default
        keeps an empty graph in memory (not durable)."""
        return KnowledgeGraph(expansion, limits=limits), None


class Channel(ABC):
    """A way committed notifications leave the broker (live streams, webhooks).

    Contract, for every implementation:

    - **From the store, at least once.** A channel is handed only committed notifications;
      what it holds in memory is a shortcut, the store is the log. A notification a channel
      drops (a slow reader, a restart) is read again from the store, so each reaches its
      receiver at least once; (subscription, seq) names it, so a receiver can drop repeats.
    - **Resumable by seq.** Each subscription's notifications go out in seq order; a
      receiver that comes back after seq ``n`` gets what follows ``n``.
    - **Bounded memory.** What a channel holds per receiver is bounded whatever the rate
      of events; past the bound it falls back to reading the store.
    - **Never blocks.** :meth:`publish` and :meth:`wake` are called on the broker's
      publishing path, from any thread; they hand work over and return.
    """

    def publish(self, notes: Sequence[Note]) -> None:
        """Committed notifications, in seq order per subscription (default: :meth:`wake`;
        the channel reads them from the store)."""
        self.wake()

    @abstractmethod
    def wake(self) -> None:
        """Notifications were committed without being handed over: read the store."""

    def close(self) -> None:  # noqa: B027 (a channel without resources has nothing to do)
        """Stop; what was not delivered is delivered from the store after a restart."""
