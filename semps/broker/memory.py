"""In-memory doubles of the broker's parts, shipped for tests: :class:`MemoryStore` and
:class:`RecordingChannel`.

They keep the :mod:`semps.broker.contracts` contracts in plain Python, except durability:
**nothing survives the process** (what a method changed is "committed" when it returns only
in the sense that every thread sees it). Use them to test the broker and the API without a
database file; use :class:`semps.broker.sqlite_store.SQLiteStore` wherever data must survive.

Example:
    >>> store = MemoryStore()
    >>> sub_id = store.next_id("sub-")
    >>> store.put_subscription(Subscription(sub_id, "semantic", "SELECT * {}", "ann"))
    >>> record = EventRecord("ev-1", 0.0, "text/turtle", 0, [(sub_id, '{"event":"ev-1"')])
    >>> [(sub, seq, text[:22]) for sub, seq, text in store.commit_events([record])[0]]
    [('sub-1', 1, '{"event":"ev-1","id":1')]
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from semps.broker.contracts import (
    EVENT_DOCUMENT_BYTES,
    Activity,
    Channel,
    DeadLetter,
    EventRecord,
    Note,
    Notification,
    Store,
    StoredEvent,
    Webhook,
)
from semps.broker.tokens import Principal, TokenInfo, digest, new_token
from semps.errors import NotFound, existing
from semps.matcher.values import Subscription

__all__ = ["MemoryStore", "RecordingChannel"]


@dataclass(slots=True)
class _Sub:
    """A stored subscription and what hangs off it."""

    sub: Subscription
    suspended: str | None = None
    retain: tuple[int | None, float | None] = (None, None)


@dataclass(slots=True)
class _Token:
    digest: str
    info: TokenInfo


@dataclass(slots=True)
class _Note:
    seq: int
    event: str
    text: str
    created: float


@dataclass(slots=True)
class _State:
    """Everything the store holds (one lock guards it)."""

    subs: dict[str, _Sub] = field(default_factory=dict)  # insertion order: creation order
    notes: dict[str, list[_Note]] = field(default_factory=dict)  # per subscription, by seq
    last_seq: dict[str, int] = field(default_factory=dict)
    last_time: dict[str, float] = field(default_factory=dict)
    events: dict[str, float] = field(default_factory=dict)  # id -> received
    documents: dict[str, StoredEvent] = field(default_factory=dict)  # oldest first
    counters: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, int] = field(default_factory=dict)
    matcher_states: dict[str, str] = field(default_factory=dict)  # kind -> JSON text
    webhooks: dict[str, Webhook] = field(default_factory=dict)
    dead: dict[int, DeadLetter] = field(default_factory=dict)
    tokens: list[_Token] = field(default_factory=list)


class MemoryStore(Store):
    """The :class:`~semps.broker.contracts.Store` contract in memory (not durable)."""

    #: Bytes of event documents kept at most (the oldest go first).
    document_bytes: int = EVENT_DOCUMENT_BYTES

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._s = _State()
        self._ids: dict[str, int] = {}
        self._letters = itertools.count(1)
        self.closed = False

    def close(self) -> None:
        self.closed = True

    # -- subscriptions ---------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        with self._lock:
            value = self._ids.get(prefix, 0) + 1
            self._ids[prefix] = value
        return f"{prefix}{value}"

    def put_subscriptions(self, subs: Sequence[Subscription]) -> None:
        with self._lock:
            for sub in subs:
                old = self._s.subs.get(sub.id)
                if old is None:
                    self._s.subs[sub.id] = _Sub(sub)
                else:
                    old.sub = replace(sub, owner=old.sub.owner)
                    old.suspended = None
            self._s.counters.update(self._ids)

    def set_suspended(self, sub_id: str, reason: str | None) -> None:
        with self._lock:
            entry = self._s.subs.get(sub_id)
            if entry is not None:
                entry.suspended = reason

    def delete_subscription(self, sub_id: str) -> None:
        with self._lock:
            self._s.subs.pop(sub_id, None)
            self._s.webhooks.pop(sub_id, None)
            self._s.notes.pop(sub_id, None)
            self._s.last_seq.pop(sub_id, None)
            self._s.last_time.pop(sub_id, None)

    def subscription(self, sub_id: str) -> Subscription:
        with self._lock:
            entry = self._s.subs.get(sub_id)
        return existing(entry, "subscription", sub_id).sub

    def subscriptions_with_status(
        self, owner: str | None = None
    ) -> list[tuple[Subscription, str | None]]:
        with self._lock:
            entries = list(self._s.subs.values())
        return [(e.sub, e.suspended) for e in entries if owner is None or e.sub.owner == owner]

    # -- retention -------------------------------------------------------------------------

    def set_retention(self, sub_id: str, count: int | None, age: float | None) -> None:
        with self._lock:
            entry = self._s.subs.get(sub_id)
            if entry is not None:
                entry.retain = (count, age)

    def retention(self, sub_id: str) -> tuple[int | None, float | None]:
        with self._lock:
            entry = self._s.subs.get(sub_id)
        return entry.retain if entry is not None else (None, None)

    def prune(self, count: int, age: float, *, now: float | None = None, chunk: int = 1000) -> int:
        now = time.time() if now is None else now
        removed = 0
        with self._lock:
            for sub_id, notes in self._s.notes.items():
                entry = self._s.subs.get(sub_id)
                own_count, own_age = entry.retain if entry is not None else (None, None)
                keep = count if own_count is None else own_count
                oldest = age if own_age is None else own_age
                last = self._s.last_seq.get(sub_id, 0)
                kept = [
                    n
                    for n in notes
                    if (keep <= 0 or n.seq > last - keep)
                    and (oldest <= 0 or n.created >= now - oldest)
                ]
                removed += len(notes) - len(kept)
                notes[:] = kept
            if age > 0:
                old = [e for e, received in self._s.events.items() if received < now - age]
                for event_id in old:
                    del self._s.events[event_id]
                    self._s.documents.pop(event_id, None)
                removed += len(old)
        return removed

    # -- counts and saved counters ---------------------------------------------------------

    def counts(self) -> dict[str, int]:
        now = time.time()
        with self._lock:
            return {
                "subscriptions": len(self._s.subs),
                "tokens": sum(t.info.active(now) for t in self._s.tokens),
                "notifications_stored": sum(len(n) for n in self._s.notes.values()),
                "webhooks": len(self._s.webhooks),
                "dead_letters": len(self._s.dead),
                "events_stored": len(self._s.events),
            }

    def save_counters(self, values: dict[str, int]) -> None:
        with self._lock:
            self._s.metrics.update({name: int(value) for name, value in values.items()})

    def saved_counters(self) -> dict[str, int]:
        with self._lock:
            return dict(self._s.metrics)

    # -- events and notifications ----------------------------------------------------------

    def matcher_state(self, kind: str) -> dict[str, object] | None:
        with self._lock:
            text = self._s.matcher_states.get(kind)
        return json.loads(text) if text is not None else None

    def _commit(
        self, records: Sequence[EventRecord], saved: dict[str, str], within: Callable[[], None]
    ) -> list[list[Note]]:
        now = time.time()
        out: list[list[Note]] = []
        with self._lock:
            within()
            for record in records:
                if record.logged:
                    self._s.events.setdefault(record.id, record.received)
                if record.body and len(record.body) <= self.document_bytes:
                    notified = tuple(sorted({sub for sub, _ in record.notes}))
                    self._s.documents[record.id] = StoredEvent(
                        record.id,
                        record.publisher,
                        record.received,
                        record.media_type,
                        record.body,
                        notified,
                    )
                    self._bound_documents()
                numbered: list[Note] = []
                for sub_id, head in record.notes:
                    seq = self._s.last_seq.get(sub_id, 0) + 1
                    self._s.last_seq[sub_id] = seq
                    self._s.last_time[sub_id] = now
                    text = f'{head},"id":{seq},"time":{now:.3f}}}'
                    self._s.notes.setdefault(sub_id, []).append(_Note(seq, record.id, text, now))
                    numbered.append((sub_id, seq, text))
                out.append(numbered)
            self._s.matcher_states.update(saved)
        return out

    def _bound_documents(self) -> None:
        documents = self._s.documents
        total = sum(len(d.body) for d in documents.values())
        while total > self.document_bytes and documents:
            total -= len(documents.pop(next(iter(documents))).body)

    def event_document(self, event_id: str) -> StoredEvent:
        with self._lock:
            found = self._s.documents.get(event_id)
        return existing(found, "event", event_id)

    def activity(self, sub_ids: Sequence[str]) -> dict[str, Activity]:
        with self._lock:
            last, when = self._s.last_seq, self._s.last_time
            return {s: Activity(last.get(s, 0), when.get(s)) for s in sub_ids}

    def _after(self, sub_id: str, after: int, limit: int) -> list[_Note]:
        with self._lock:
            notes = self._s.notes.get(sub_id, [])
            return [n for n in notes if n.seq > after][: max(limit, 0)]

    def notifications_after(self, sub_id: str, after: int, limit: int = 500) -> list[Notification]:
        return [
            Notification(sub_id, n.seq, n.event, json.loads(n.text))
            for n in self._after(sub_id, after, limit)
        ]

    def notification_texts_after(
        self, sub_id: str, after: int, limit: int = 200, max_bytes: int = 256 * 1024
    ) -> list[tuple[int, str]]:
        page: list[tuple[int, str]] = []
        size = 0
        for note in self._after(sub_id, after, limit):
            size += len(note.text)
            if page and size > max_bytes:
                break
            page.append((note.seq, note.text))
        return page

    # -- webhooks and dead letters ---------------------------------------------------------

    def set_webhook(self, sub_id: str, url: str) -> str:
        secret = secrets.token_hex(16)
        with self._lock:
            old = self._s.webhooks.get(sub_id)
            delivered = old.delivered if old is not None else 0
            self._s.webhooks[sub_id] = Webhook(sub_id, url, secret, delivered)
        return secret

    def webhooks(self) -> list[Webhook]:
        with self._lock:
            return list(self._s.webhooks.values())

    def _backlog(self, hook: Webhook) -> int:
        return sum(n.seq > hook.delivered for n in self._s.notes.get(hook.subscription, []))

    def pending_webhooks(self) -> list[Webhook]:
        with self._lock:
            return [h for h in self._s.webhooks.values() if self._backlog(h)]

    def webhook_backlog(self) -> int:
        with self._lock:
            return sum(self._backlog(h) for h in self._s.webhooks.values())

    def mark_delivered(self, sub_id: str, seq: int) -> None:
        with self._lock:
            hook = self._s.webhooks.get(sub_id)
            if hook is not None:
                self._s.webhooks[sub_id] = replace(hook, delivered=max(hook.delivered, seq))

    def add_dead_letter(self, hook: Webhook, seq: int, error: str, attempts: int) -> None:
        with self._lock:
            letter_id = next(self._letters)
            self._s.dead[letter_id] = DeadLetter(
                letter_id, hook.subscription, seq, hook.url, error, attempts
            )

    def dead_letters(self) -> list[DeadLetter]:
        with self._lock:
            return sorted(self._s.dead.values(), key=lambda d: d.id)

    def drop_dead_letter(self, letter_id: int) -> None:
        with self._lock:
            self._s.dead.pop(letter_id, None)

    # -- tokens ----------------------------------------------------------------------------

    def create_token(
        self, role: str, subject: str | None = None, *, expires_at: float | None = None
    ) -> tuple[str, str]:
        secret, info = new_token(role, subject, expires_at=expires_at)
        with self._lock:
            self._s.tokens.append(_Token(digest(secret), info))
        return info.id, secret

    def list_tokens(self) -> list[TokenInfo]:
        with self._lock:
            return [t.info for t in self._s.tokens]

    def revoke_token(self, token_id: str) -> TokenInfo:
        now = time.time()
        with self._lock:
            for token in self._s.tokens:
                if token.info.id == token_id:
                    if token.info.revoked is None:
                        token.info = replace(token.info, revoked=now)
                    return token.info
        msg = f"no token {token_id!r}"
        raise NotFound(msg)

    def principal(self, token: str) -> Principal | None:
        wanted = digest(token)
        now = time.time()
        with self._lock:
            found = next((t.info for t in self._s.tokens if t.digest == wanted), None)
        if found is None or not found.active(now):
            return None
        return Principal(found.subject, found.role, found.expires, found.id)

    def token_info(self, token_id: str) -> TokenInfo | None:
        with self._lock:
            return next((t.info for t in self._s.tokens if t.info.id == token_id), None)


class RecordingChannel(Channel):
    """A channel that records what it is handed (thread-safe), for tests.

    Example:
        >>> channel = RecordingChannel()
        >>> channel.publish([("sub-1", 1, '{"id":1}')])
        >>> channel.seqs("sub-1"), channel.wakes
        ([1], 0)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.notes: list[Note] = []
        self.wakes = 0
        self.closed = False

    def publish(self, notes: Sequence[Note]) -> None:
        with self._lock:
            self.notes.extend(notes)

    def wake(self) -> None:
        with self._lock:
            self.wakes += 1

    def close(self) -> None:
        self.closed = True

    def seqs(self, subscription: str) -> list[int]:
        """The seqs handed over for ``subscription``, in the order they came."""
        with self._lock:
            return [seq for sub_id, seq, _ in self.notes if sub_id == subscription]

    def payloads(self, subscription: str) -> list[dict[str, object]]:
        """The notifications handed over for ``subscription``, parsed."""
        with self._lock:
            texts = [text for sub_id, _, text in self.notes if sub_id == subscription]
        return [json.loads(t) for t in texts]
