"""The store contract (:class:`semps.broker.contracts.Store`), run over every implementation:
the SQLite store on a real file and the in-memory store. Each case fails on its own for
either. Orderings, paging and retention are checked against brute-force models built in the
test from what was committed, never against the store's own earlier answers."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from semps.broker.contracts import Activity, EventRecord, Store, StoredEvent, Webhook
from semps.broker.memory import MemoryStore
from semps.broker.sqlite_store import SQLiteStore
from semps.errors import NotFound, StoreError
from semps.matcher.values import Subscription

Open = Callable[[], Store]


@pytest.fixture(params=["sqlite", "sqlite-indexed-every-3", "memory"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Open]:
    """Opens the store under test (SQLite: the same file each time; ``indexed-every-3``:
    its notifications indexed every 3 rows, so most reads straddle the indexed and the
    recent parts, see semps.broker.notifications)."""
    opened: list[Store] = []

    def open_() -> Store:
        store: Store
        if request.param == "sqlite":
            store = SQLiteStore(tmp_path / "data" / "semps.sqlite3")
        elif request.param == "sqlite-indexed-every-3":
            store = SQLiteStore(tmp_path / "data" / "semps.sqlite3", index_every=3)
        else:
            store = MemoryStore()
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Open) -> Store:
    return open_store()


class Clock:
    """A settable ``time.time`` for both stores."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock(1_700_000_000.0)
    monkeypatch.setattr(time, "time", fake)
    return fake


def _sub(sub_id: str, owner: str = "ann", text: str = "SELECT * {}", **kw: str) -> Subscription:
    return Subscription(sub_id, kw.get("kind", "semantic"), text, owner, kw.get("name"))


def _record(event_id: str, *subs: str, received: float = 0.0) -> EventRecord:
    notes = [(sub, json.dumps({"subscription": sub, "event": event_id})[:-1]) for sub in subs]
    return EventRecord(event_id, received, "text/turtle", 10, notes)


# -- ids and subscriptions -------------------------------------------------------------------


def test_ids_count_from_one_per_prefix(store: Store) -> None:
    assert [store.next_id("sub-"), store.next_id("sub-"), store.next_id("x-")] == [
        "sub-1",
        "sub-2",
        "x-1",
    ]


def test_reserved_ids_follow_the_issued_ones(store: Store) -> None:
    assert store.next_id("sub-") == "sub-1"
    assert store.reserve_ids("sub-", 2) == ["sub-2", "sub-3"]
    assert store.next_ids("sub-", 1) == ["sub-4"]


@pytest.mark.parametrize("kept_by", ["put_subscriptions", "keep_ids"])
def test_reserved_ids_are_not_issued_again_once_kept(tmp_path: Path, kept_by: str) -> None:
    path = tmp_path / "data" / "semps.sqlite3"
    store = SQLiteStore(path)
    ids = store.reserve_ids("sub-", 3)
    if kept_by == "put_subscriptions":
        store.put_subscriptions([_sub(ids[0])])  # the other two: refused, say
    else:
        store.keep_ids()  # all three refused
    store.close()
    again = SQLiteStore(path)
    assert again.next_id("sub-") == "sub-4"
    again.close()


def test_reserving_ids_commits_nothing(tmp_path: Path) -> None:
    # Kept by the commit of the subscriptions they go to: a group costs one fsync, not two.
    path = tmp_path / "data" / "semps.sqlite3"
    store = SQLiteStore(path)
    assert store.reserve_ids("sub-", 3) == ["sub-1", "sub-2", "sub-3"]
    store.close()
    again = SQLiteStore(path)
    assert again.next_id("sub-") == "sub-1"  # none was handed out
    again.close()


def test_a_subscription_round_trips(store: Store) -> None:
    sub = Subscription("sub-1", "semantic", "SELECT ?x { ?x a <C> }", "ann", "chairs")
    store.put_subscription(sub)
    assert store.subscription("sub-1") == sub
    assert store.subscriptions() == [sub]
    assert store.subscriptions_with_status() == [(sub, None)]


def test_an_unknown_subscription_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="no subscription 'sub-9'"):
        store.subscription("sub-9")


def test_subscriptions_list_in_creation_order_and_by_owner(store: Store) -> None:
    store.put_subscriptions([_sub("b", "ann"), _sub("a", "bob")])
    store.put_subscription(_sub("c", "ann"))
    assert [s.id for s in store.subscriptions()] == ["b", "a", "c"]
    assert [s.id for s in store.subscriptions("ann")] == ["b", "c"]
    assert store.subscriptions("nobody") == []


def test_a_replaced_subscription_keeps_owner_place_and_is_active_again(store: Store) -> None:
    store.put_subscriptions([_sub("a"), _sub("b")])
    store.set_suspended("a", "too slow")
    store.put_subscription(_sub("a", owner="mallory", text="ASK {}", name="new"))
    assert store.subscriptions_with_status() == [
        (Subscription("a", "semantic", "ASK {}", "ann", "new"), None),
        (_sub("b"), None),
    ]


def test_suspension_is_a_status_with_a_reason(store: Store) -> None:
    store.put_subscription(_sub("a"))
    store.set_suspended("a", "overran 5 s")
    assert store.subscriptions_with_status() == [(_sub("a"), "overran 5 s")]
    store.set_suspended("a", None)
    assert store.subscriptions_with_status() == [(_sub("a"), None)]
    store.set_suspended("missing", "x")  # a no-op
    assert len(store.subscriptions()) == 1


def test_deleting_a_subscription_takes_its_notifications_and_webhook(store: Store) -> None:
    store.put_subscriptions([_sub("a"), _sub("b")])
    store.set_webhook("a", "https://example.org/hook")
    store.commit_events([_record("e1", "a", "b"), _record("e2", "a")])
    store.delete_subscription("a")
    store.delete_subscription("missing")  # a no-op
    assert [s.id for s in store.subscriptions()] == ["b"]
    assert store.notifications_after("a", 0) == []
    assert store.webhooks() == []
    store.put_subscription(_sub("a"))  # stored again: numbered from 1
    assert store.commit_events([_record("e3", "a")])[0][0][1] == 1


# -- events and notifications ----------------------------------------------------------------


def test_commit_numbers_each_subscriptions_notifications_from_one(
    store: Store, clock: Clock
) -> None:
    numbered = store.commit_events([_record("e1", "a", "b"), _record("e2", "a")])
    assert [[(s, q) for s, q, _ in notes] for notes in numbered] == [
        [("a", 1), ("b", 1)],
        [("a", 2)],
    ]
    assert json.loads(numbered[1][0][2]) == {
        "subscription": "a",
        "event": "e2",
        "id": 2,
        "time": clock.now,
    }
    clock.now += 0.25
    assert store.commit_events([_record("e3", "b", "b")])[0] == [
        ("b", 2, '{"subscription": "b", "event": "e3","id":2,"time":1700000000.250}'),
        ("b", 3, '{"subscription": "b", "event": "e3","id":3,"time":1700000000.250}'),
    ]


def test_activity_counts_each_subscriptions_notifications_and_dates_the_last(
    open_store: Open, clock: Clock
) -> None:
    store = open_store()
    store.put_subscriptions([_sub("a"), _sub("b"), _sub("quiet")])
    store.commit_events([_record("e1", "a", "b"), _record("e2", "a")])
    first = clock.now
    clock.now += 60
    store.commit_events([_record("e3", "a")])
    expected = {
        "a": Activity(3, first + 60),
        "b": Activity(1, first),
        "quiet": Activity(0, None),
        "gone": Activity(0, None),
    }
    assert store.activity(["a", "b", "quiet", "gone"]) == expected
    store.delete_subscription("a")
    assert store.activity(["a"]) == {"a": Activity(0, None)}
    if not isinstance(store, MemoryStore):  # a durable store knows it after a restart too
        store.close()
        again = open_store()
        assert again.activity(["b", "quiet"]) == {"b": expected["b"], "quiet": Activity()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_paging_through_notifications_gives_each_once_in_seq_order(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    subs = ["a", "b", "c"]
    model: dict[str, list[tuple[int, str]]] = {s: [] for s in subs}  # seq, event
    for group in range(rng.randint(5, 15)):
        records = []
        for n in range(rng.randint(1, 6)):
            event_id = f"e{group}-{n}"
            records.append(_record(event_id, *rng.choices(subs, k=rng.randint(0, 4))))
            for sub_id, _ in records[-1].notes:
                model[sub_id].append((len(model[sub_id]) + 1, event_id))
        store.commit_events(records)
    for sub_id in subs:
        limit = rng.randint(1, 7)
        seen: list[tuple[int, str]] = []
        while page := store.notifications_after(sub_id, seen[-1][0] if seen else 0, limit):
            assert len(page) <= limit
            seen += [(n.seq, n.event) for n in page]
        assert seen == model[sub_id]
        start = rng.randint(0, len(model[sub_id]))
        texts = store.notification_texts_after(sub_id, start, limit=1000)
        assert [seq for seq, _ in texts] == [seq for seq, _ in model[sub_id][start:]]


def test_a_text_page_stops_at_its_byte_budget_but_always_gives_one(store: Store) -> None:
    store.commit_events([_record(f"e{i}", "a") for i in range(5)])
    size = len(store.notification_texts_after("a", 0, limit=1)[0][1])
    assert [seq for seq, _ in store.notification_texts_after("a", 0, max_bytes=2 * size)] == [1, 2]
    assert [seq for seq, _ in store.notification_texts_after("a", 2, max_bytes=1)] == [3]
    assert [seq for seq, _ in store.notification_texts_after("a", 0, limit=4)] == [1, 2, 3, 4]


def test_one_notification_by_seq(store: Store, clock: Clock) -> None:
    store.commit_events([_record("e1", "a"), _record("e2", "a")])
    found = store.notification("a", 2)
    assert (found.subscription, found.seq, found.event) == ("a", 2, "e2")
    assert found.payload == {"subscription": "a", "event": "e2", "id": 2, "time": clock.now}
    with pytest.raises(NotFound, match="no notification 3 of subscription 'a'"):
        store.notification("a", 3)


def test_an_event_id_is_logged_once(store: Store) -> None:
    store.commit_events([_record("e1", "a")])
    store.commit_events([_record("e1", "a")])
    assert store.counts()["events_stored"] == 1
    assert [n.seq for n in store.notifications_after("a", 0)] == [1, 2]


def _document(event_id: str, body: bytes, *subs: str, received: float = 0.0) -> EventRecord:
    notes = [(sub, json.dumps({"subscription": sub, "event": event_id})[:-1]) for sub in subs]
    return EventRecord(
        event_id, received, "text/turtle", len(body), notes, body=body, publisher="pub-1"
    )


def test_an_events_document_is_kept_with_its_publisher_and_the_subscriptions_it_notified(
    store: Store,
) -> None:
    store.commit_events([_document("e1", b"<a> <b> <c> .", "s2", "s1", "s2")])
    assert store.event_document("e1") == StoredEvent(
        "e1", "pub-1", 0.0, "text/turtle", b"<a> <b> <c> .", ("s1", "s2")
    )
    with pytest.raises(NotFound, match="no event 'e2'"):
        store.event_document("e2")


def test_event_documents_past_the_bound_go_oldest_first(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "document_bytes", 25)
    store.commit_events([_document(f"e{i}", b"0123456789") for i in range(3)])
    store.commit_events([_document("e3", b"0123456789"), _document("big", b"x" * 26)])
    kept = []
    for event_id in ("e0", "e1", "e2", "e3", "big"):
        try:
            kept.append(store.event_document(event_id).id)
        except NotFound:
            pass
    assert kept == ["e2", "e3"]  # the newest within 25 bytes; one alone past it is not kept
    assert store.counts()["events_stored"] == 5  # the event log itself is not bounded so


def test_no_event_document_is_kept_under_a_bound_of_zero(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "document_bytes", 0)
    store.commit_events([_document("e1", b"<a> <b> <c> .", "s1")])
    with pytest.raises(NotFound):
        store.event_document("e1")
    assert [n.event for n in store.notifications_after("s1", 0)] == ["e1"]


def test_event_documents_go_with_the_event_log_s_age(store: Store, clock: Clock) -> None:
    start = clock.now
    store.commit_events([_document("old", b"<a> <b> <c> .", received=start - 100)])
    store.commit_events([_document("new", b"<a> <b> <d> .", received=start)])
    store.prune(0, 50.0, now=start)
    with pytest.raises(NotFound):
        store.event_document("old")
    assert store.event_document("new").body == b"<a> <b> <d> ."


def test_add_notifications_is_commit_events_for_one_event(store: Store, clock: Clock) -> None:
    assert store.add_notifications("e1", [("a", {"x": 1}), ("a", {"x": 2})]) == 2
    assert [n.payload for n in store.notifications_after("a", 0)] == [
        {"x": 1, "id": 1, "time": clock.now},
        {"x": 2, "id": 2, "time": clock.now},
    ]


def test_matcher_state_commits_with_the_group_and_is_replaced(store: Store) -> None:
    assert store.matcher_state("composite") is None
    store.commit_events([_record("e1", "a")], {"composite": {"open": [1, 2]}})
    store.commit_events([], {"composite": {"open": []}, "other": {"n": 1}})
    assert store.matcher_state("composite") == {"open": []}
    assert store.matcher_state("other") == {"n": 1}


def test_a_group_that_cannot_be_stored_changes_nothing(store: Store) -> None:
    with pytest.raises(StoreError, match="cannot store 1 events"):
        store.commit_events([_record("e1", "a")], {"k": {"x": object()}})
    assert store.notifications_after("a", 0) == []
    assert store.counts()["events_stored"] == 0
    assert store.commit_events([_record("e2", "a")])[0][0][1] == 1  # usable, numbering intact


def test_concurrent_commits_never_share_or_skip_a_seq(store: Store) -> None:
    def commit(thread: int) -> None:
        for i in range(20):
            store.commit_events([_record(f"t{thread}-{i}", "a", "b")])

    threads = [threading.Thread(target=commit, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for sub_id in "ab":
        assert [n.seq for n in store.notifications_after(sub_id, 0)] == list(range(1, 81))


# -- webhooks and dead letters ---------------------------------------------------------------


def test_a_webhook_keeps_its_secret_and_delivered_seq(store: Store) -> None:
    secret = store.set_webhook("a", "https://example.org/a")
    assert store.webhooks() == [Webhook("a", "https://example.org/a", secret, 0)]
    store.mark_delivered("a", 3)
    store.mark_delivered("a", 2)  # never goes back
    moved = store.set_webhook("a", "https://example.org/b")
    assert moved != secret
    assert store.webhooks() == [Webhook("a", "https://example.org/b", moved, 3)]


def test_has_webhooks_while_any_subscription_has_one(store: Store) -> None:
    store.put_subscriptions([_sub("a"), _sub("b")])
    assert not store.has_webhooks()
    store.set_webhook("a", "https://example.org/a")
    assert store.has_webhooks()
    store.delete_subscription("b")
    assert store.has_webhooks()
    store.delete_subscription("a")
    assert not store.has_webhooks()


def test_pending_webhooks_and_backlog_follow_the_delivered_seq(store: Store) -> None:
    store.set_webhook("a", "https://example.org/a")
    store.set_webhook("b", "https://example.org/b")
    assert store.pending_webhooks() == [] and store.webhook_backlog() == 0
    store.commit_events([_record("e1", "a", "c"), _record("e2", "a")])
    assert [h.subscription for h in store.pending_webhooks()] == ["a"]
    assert store.webhook_backlog() == 2  # c has no webhook
    store.mark_delivered("a", 1)
    assert store.webhook_backlog() == 1
    store.mark_delivered("a", 2)
    assert store.pending_webhooks() == [] and store.webhook_backlog() == 0


def test_dead_letters_list_oldest_first_and_drop(store: Store) -> None:
    hook = Webhook("a", "https://example.org/a", "k", 0)
    store.add_dead_letter(hook, 4, "HTTP 500", 5)
    store.add_dead_letter(hook, 7, "Timeout", 3)
    letters = store.dead_letters()
    assert [(d.subscription, d.seq, d.url, d.error, d.attempts) for d in letters] == [
        ("a", 4, "https://example.org/a", "HTTP 500", 5),
        ("a", 7, "https://example.org/a", "Timeout", 3),
    ]
    assert letters[0].id < letters[1].id
    store.drop_dead_letter(letters[0].id)
    store.drop_dead_letter(10_000)  # a no-op
    assert store.dead_letters() == letters[1:]


# -- tokens ----------------------------------------------------------------------------------


def test_a_token_authenticates_and_its_id_names_a_digest_of_it(store: Store) -> None:
    token_id, secret = store.create_token("publisher", "acme")
    assert token_id == "tok-" + hashlib.sha256(secret.encode()).hexdigest()[:12]
    who = store.principal(secret)
    assert who is not None and (who.subject, who.role, who.expires) == ("acme", "publisher", None)
    assert store.principal(secret + "x") is None
    (info,) = store.list_tokens()
    assert (info.id, info.role, info.subject, info.revoked) == (token_id, "publisher", "acme", None)


def test_tokens_list_oldest_first_with_a_default_subject(store: Store) -> None:
    first, _ = store.create_token("admin")
    second, _ = store.create_token("subscriber", "bob")
    infos = store.list_tokens()
    assert [t.id for t in infos] == [first, second]
    assert infos[0].subject.startswith("admin-")


def test_a_revoked_token_no_longer_authenticates(store: Store, clock: Clock) -> None:
    token_id, secret = store.create_token("subscriber", "bob")
    revoked = store.revoke_token(token_id)
    assert revoked.revoked == clock.now
    assert store.principal(secret) is None
    clock.now += 10
    assert store.revoke_token(token_id).revoked == revoked.revoked  # the first time stays
    assert store.counts()["tokens"] == 0
    with pytest.raises(NotFound, match="no token 'tok-000000000000'"):
        store.revoke_token("tok-000000000000")


def test_a_token_expires(store: Store, clock: Clock) -> None:
    _, secret = store.create_token("subscriber", "bob", expires_at=clock.now + 60)
    who = store.principal(secret)
    assert who is not None and who.expires == clock.now + 60
    assert store.counts()["tokens"] == 1
    clock.now += 60
    assert store.principal(secret) is None
    assert store.counts()["tokens"] == 0
    assert len(store.list_tokens()) == 1  # still listed


def test_a_token_is_found_by_its_id_revoked_and_expired_too(store: Store, clock: Clock) -> None:
    token_id, secret = store.create_token("subscriber", "bob", expires_at=clock.now + 60)
    who = store.principal(secret)
    assert who is not None and who.token == token_id  # what it establishes is bound to it
    info = store.token_info(token_id)
    assert info is not None and info.subject == "bob" and info.active(clock.now)
    clock.now += 60
    info = store.token_info(token_id)
    assert info is not None and not info.active(clock.now)
    store.revoke_token(token_id)
    info = store.token_info(token_id)
    assert info is not None and info.revoked == clock.now
    assert store.token_info("tok-000000000000") is None


@pytest.mark.parametrize(
    ("role", "expires", "message"),
    [
        ("root", None, "unknown role 'root'"),
        ("admin", -1.0, "expiry time has already passed"),
        ("admin", 0.0, "expiry time has already passed"),
    ],
)
def test_a_token_that_cannot_exist_is_refused(
    store: Store, clock: Clock, role: str, expires: float | None, message: str
) -> None:
    at = None if expires is None else clock.now + expires
    with pytest.raises(StoreError, match=message):
        store.create_token(role, expires_at=at)
    assert store.list_tokens() == []


# -- retention -------------------------------------------------------------------------------


def test_a_subscriptions_own_retention_round_trips(store: Store) -> None:
    store.put_subscription(_sub("a"))
    assert store.retention("a") == (None, None)
    store.set_retention("a", 10, 3600.0)
    assert store.retention("a") == (10, 3600.0)
    assert store.retention("missing") == (None, None)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_pruning_keeps_what_a_brute_force_model_keeps(
    store: Store, clock: Clock, seed: int
) -> None:
    rng = random.Random(seed)
    subs = ["a", "b", "c", "d"]
    store.put_subscriptions([_sub(s) for s in subs])
    own = {s: (rng.choice([None, 0, 2, 5]), rng.choice([None, 0.0, 30.0])) for s in subs}
    for sub_id, (count, age) in own.items():
        if count is not None or age is not None:
            store.set_retention(sub_id, count, age)
    start = clock.now
    stored: dict[str, list[tuple[int, float]]] = {s: [] for s in subs}  # seq, created
    events: dict[str, float] = {}
    for i in range(30):
        clock.now = start + i * 5.0
        chosen = rng.sample(subs, rng.randint(0, 3))
        store.commit_events([_record(f"e{i}", *chosen, received=clock.now)])
        events[f"e{i}"] = clock.now
        for sub_id in chosen:
            stored[sub_id].append((len(stored[sub_id]) + 1, clock.now))
    count, age = rng.choice([0, 3, 8]), rng.choice([0.0, 40.0, 100.0])
    now = clock.now + rng.choice([0.0, 20.0])

    expected: dict[str, list[int]] = {}
    for sub_id, rows in stored.items():
        keep = count if own[sub_id][0] is None else own[sub_id][0]
        oldest = age if own[sub_id][1] is None else own[sub_id][1]
        last = len(rows)
        assert keep is not None and oldest is not None
        expected[sub_id] = [
            seq
            for seq, created in rows
            if (keep == 0 or seq > last - keep) and (oldest == 0 or created >= now - oldest)
        ]
    events_left = [e for e, received in events.items() if age == 0 or received >= now - age]
    removed = sum(len(r) for r in stored.values()) - sum(len(s) for s in expected.values())
    removed += len(events) - len(events_left)

    assert store.prune(count, age, now=now, chunk=2) == removed
    for sub_id in subs:
        assert [n.seq for n in store.notifications_after(sub_id, 0)] == expected[sub_id]
    assert store.counts()["events_stored"] == len(events_left)
    assert store.prune(count, age, now=now) == 0  # nothing left to prune


# -- counts and counters ---------------------------------------------------------------------


def test_counts_say_what_is_stored(store: Store) -> None:
    store.put_subscriptions([_sub("a"), _sub("b")])
    store.create_token("admin")
    store.set_webhook("a", "https://example.org/a")
    store.commit_events([_record("e1", "a", "b"), _record("e2", "a")])
    store.add_dead_letter(Webhook("a", "https://example.org/a", "k", 0), 1, "HTTP 500", 5)
    assert store.counts() == {
        "subscriptions": 2,
        "tokens": 1,
        "notifications_stored": 3,
        "webhooks": 1,
        "dead_letters": 1,
        "events_stored": 2,
    }


def test_saved_counters_take_the_last_value(store: Store) -> None:
    assert store.saved_counters() == {}
    store.save_counters({"events_in": 3, "matches": 7})
    store.save_counters({"events_in": 5})
    assert store.saved_counters() == {"events_in": 5, "matches": 7}


# -- durability (SQLite only: the memory store is documented as not durable) ----------------


def test_reopening_the_sqlite_store_keeps_what_was_committed(tmp_path: Path) -> None:
    path = tmp_path / "data" / "semps.sqlite3"
    store = SQLiteStore(path)
    sub_id = store.next_id("sub-")
    store.put_subscription(_sub(sub_id))
    store.set_suspended(sub_id, "paused")
    store.set_retention(sub_id, 7, None)
    secret = store.set_webhook(sub_id, "https://example.org/a")
    store.mark_delivered(sub_id, 1)
    _, token = store.create_token("subscriber", "bob")
    store.commit_events([_record("e1", sub_id), _record("e2", sub_id)], {"k": {"n": 2}})
    store.add_dead_letter(Webhook(sub_id, "https://example.org/a", secret, 1), 2, "HTTP 500", 5)
    store.save_counters({"events_in": 2})
    store.close()

    again = SQLiteStore(path)
    assert again.subscriptions_with_status() == [(_sub(sub_id), "paused")]
    assert again.retention(sub_id) == (7, None)
    assert again.webhooks() == [Webhook(sub_id, "https://example.org/a", secret, 1)]
    who = again.principal(token)
    assert who is not None and who.subject == "bob"
    assert [n.event for n in again.notifications_after(sub_id, 0)] == ["e1", "e2"]
    assert again.matcher_state("k") == {"n": 2}
    assert [d.seq for d in again.dead_letters()] == [2]
    assert again.saved_counters() == {"events_in": 2}
    assert again.next_id("sub-") == "sub-2"  # the counter was kept with the subscription
    assert again.commit_events([_record("e3", sub_id)])[0][0][1] == 3  # seqs go on
    again.close()


# -- the notifications' two parts (SQLite: semps.broker.notifications) -----------------------------


@pytest.mark.parametrize("index_every", [1, 2, 5, 1000])
def test_reopening_goes_on_numbering_indexed_and_recent_notifications(
    tmp_path: Path, index_every: int
) -> None:
    path = tmp_path / "semps.sqlite3"
    store = SQLiteStore(path, index_every=index_every)
    store.commit_events([_record("e1", "a", "b", "a"), _record("e2", "a")])
    store.commit_events([_record("e3", "b")])
    store.close()
    again = SQLiteStore(path, index_every=index_every)
    numbered = again.commit_events([_record("e4", "a", "b", "c")])[0]
    assert [(sub, seq) for sub, seq, _ in numbered] == [("a", 4), ("b", 3), ("c", 1)]
    assert [(n.seq, n.event) for n in again.notifications_after("a", 1)] == [
        (2, "e1"),
        (3, "e2"),
        (4, "e4"),
    ]
    again.close()


def test_rows_deleted_at_the_top_are_not_numbered_again(tmp_path: Path) -> None:
    # Rows are indexed up to a number; a row numbered again under it after a deletion and a
    # restart would be taken for indexed and never be found.
    path = tmp_path / "semps.sqlite3"
    store = SQLiteStore(path, index_every=2)
    store.commit_events([_record("e1", "a", "a")])  # rows 1 and 2, indexed
    store.delete_subscription("a")
    store.close()
    again = SQLiteStore(path, index_every=2)
    again.commit_events([_record("e2", "b")])
    assert [n.event for n in again.notifications_after("b", 0)] == ["e2"]
    assert [h.subscription for h in again.pending_webhooks()] == []
    again.set_webhook("b", "https://example.org/b")
    assert [h.subscription for h in again.pending_webhooks()] == ["b"]
    assert again.webhook_backlog() == 1
    again.close()


def test_a_file_from_before_the_index_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "semps.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(  # the table as the releases before semps.broker.notifications made it
        "CREATE TABLE notifications (subscription TEXT NOT NULL, seq INTEGER NOT NULL, "
        "event TEXT NOT NULL, payload TEXT NOT NULL, created REAL NOT NULL, "
        "PRIMARY KEY (subscription, seq));"
    )
    rows = [("a", 1, "e1"), ("b", 1, "e1"), ("a", 2, "e2"), ("b", 2, "e3"), ("a", 3, "e3")]
    old.executemany(
        "INSERT INTO notifications VALUES (?, ?, ?, ?, 5.0)",
        [(s, q, e, json.dumps({"subscription": s, "event": e, "id": q})) for s, q, e in rows],
    )
    old.commit()
    old.close()
    store = SQLiteStore(path)
    assert [(n.seq, n.event) for n in store.notifications_after("a", 1)] == [(2, "e2"), (3, "e3")]
    assert [s for s, _ in store.notification_texts_after("b", 0)] == [1, 2]
    assert store.commit_events([_record("e4", "b")])[0][0][1] == 3
    store.close()
    db = sqlite3.connect(path)
    indexed = db.execute("SELECT subscription, seq FROM notification_index ORDER BY 1, 2")
    assert indexed.fetchall() == sorted((s, q) for s, q, _ in rows)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "notifications_before_index" not in tables
    db.close()


def test_a_reopened_store_keeps_event_documents_and_their_bound(tmp_path: Path) -> None:
    path = tmp_path / "data" / "semps.sqlite3"
    first = SQLiteStore(path)
    first.commit_events([_document("e1", b"0123456789")])
    first.close()
    again = SQLiteStore(path)
    again.document_bytes = 15  # counted from the file: e1's 10 bytes and e2's pass it
    assert again.event_document("e1").body == b"0123456789"
    again.commit_events([_document("e2", b"abcdefghij")])
    with pytest.raises(NotFound):
        again.event_document("e1")
    assert again.event_document("e2").body == b"abcdefghij"
    again.close()
