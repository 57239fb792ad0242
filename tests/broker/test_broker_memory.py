"""The broker over the in-memory store, in process: no server, no database file.

The broker's pipeline always matches in worker processes (it has no in-process matching
mode: ``Pipeline`` refuses ``workers=0``), so each broker here runs one real worker; the store
is a :class:`~semps.broker.memory.MemoryStore` and a
:class:`~semps.broker.memory.RecordingChannel` listens to what goes out live. Expected
notifications come from a brute-force reading of the content subscriptions, never from the
broker's own earlier answers. Durability, kill -9 and streaming stay with the real-server
tests in ``tests/api``.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest
from semps_test_support import PATIENCE, LocalServer, QuietHandler

from semps.api.app import create_app
from semps.broker.broker import Broker
from semps.broker.callbacks import CallbackPolicy
from semps.broker.contracts import Note
from semps.broker.memory import MemoryStore, RecordingChannel
from semps.broker.webhooks import signature
from semps.errors import AuthError, NotFound, SempsError, SubscriptionLimitExceeded
from semps.limits import Limits

#: Content subscriptions and, for each, the brute-force test of an event's values.
RULES: dict[str, Callable[[dict[str, object]], bool]] = {
    'c = "x"': lambda v: v.get("c") == "x",
    'c = "y"': lambda v: v.get("c") == "y",
    "a0 between 0.2 and 0.6": lambda v: isinstance(v.get("a0"), float) and 0.2 <= v["a0"] <= 0.6,  # type: ignore[operator]
}


class Setup:
    """A broker over a memory store, with a channel recording its live notifications."""

    def __init__(self, data_dir: Path, limits: Limits | None = None) -> None:
        self.store = MemoryStore()
        self.channel = RecordingChannel()
        self.broker = Broker(data_dir, store=self.store, workers=1, limits=limits or Limits())
        self.broker.channels.append(self.channel)

    def publish(self, *values: dict[str, object]) -> list[tuple[str, int] | BaseException]:
        """Publish JSON events, in order, in one call (they share batches)."""
        docs = [("application/json", json.dumps({"values": v}).encode()) for v in values]

        async def go() -> list[tuple[str, int] | BaseException]:
            return await self.broker.publish_many(docs)

        return asyncio.run(go())

    def events(self, sub_id: str) -> list[str]:
        """The events of ``sub_id``'s stored notifications, checking seqs run 1, 2, 3..."""
        stored = self.store.notifications_after(sub_id, 0)
        assert [n.seq for n in stored] == list(range(1, len(stored) + 1))
        return [n.event for n in stored]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    made = Setup(tmp_path / "data")
    try:
        yield made
    finally:
        made.broker.close()


def _ids(results: list[tuple[str, int] | BaseException]) -> list[str]:
    ids = []
    for result in results:
        assert not isinstance(result, BaseException), result
        ids.append(result[0])
    return ids


def test_the_broker_keeps_its_state_in_the_store_it_is_given(setup: Setup) -> None:
    sub = setup.broker.subscribe('c = "x"', kind="content", owner="ann")
    assert setup.store.subscriptions() == [sub]
    assert not (setup.broker.data_dir / "semps.sqlite3").exists()


def test_each_event_reaches_exactly_the_subscriptions_that_match_it(setup: Setup) -> None:
    subs = {text: setup.broker.subscribe(text, kind="content", owner="ann") for text in RULES}
    rng = random.Random(7)
    values: list[dict[str, object]] = []
    for _ in range(30):
        event: dict[str, object] = {"a0": rng.choice([0.1, 0.4, 0.9])}
        if rng.random() < 0.7:
            event["c"] = rng.choice("xyz")
        values.append(event)

    event_ids = _ids(setup.publish(*values))

    for text, sub in subs.items():
        expected = [e for e, v in zip(event_ids, values, strict=True) if RULES[text](v)]
        assert setup.events(sub.id) == expected
        assert setup.channel.seqs(sub.id) == list(range(1, len(expected) + 1))  # live, too
    matched = sum(RULES[t](v) for t in RULES for v in values)
    assert [r[1] for r in setup.publish({"c": "x"})] == [1]  # type: ignore[index]
    assert setup.broker.metrics.matches == matched + 1


class _BrokenChannel(RecordingChannel):
    def publish(self, notes: Sequence[Note]) -> None:
        raise RuntimeError("this channel is down")


def test_every_channel_gets_the_committed_notifications_even_when_one_fails(
    tmp_path: Path,
) -> None:
    made = Setup(tmp_path / "data")
    broken = _BrokenChannel()
    made.broker.channels.insert(0, broken)
    try:
        sub = made.broker.subscribe('c = "x"', kind="content", owner="ann")
        assert len(_ids(made.publish({"c": "x"}, {"c": "y"}, {"c": "x"}))) == 3
        assert made.channel.seqs(sub.id) == [1, 2]
        assert made.channel.wakes == 0  # handed over, not left to be read from the store
    finally:
        made.broker.close()
    assert broken.closed and made.channel.closed  # the broker closes its channels


def test_a_suspended_subscription_misses_events_until_resumed(setup: Setup) -> None:
    sub = setup.broker.subscribe('c = "x"', kind="content", owner="ann")
    (before,) = _ids(setup.publish({"c": "x"}))

    setup.broker.suspend(sub.id, "an admin paused it")
    assert setup.broker.status(sub.id) == ("suspended", "an admin paused it")
    assert setup.store.subscriptions_with_status() == [(sub, "an admin paused it")]
    _ids(setup.publish({"c": "x"}))

    setup.broker.resume(sub.id)
    assert setup.broker.status(sub.id) == ("active", None)
    assert setup.store.subscriptions_with_status() == [(sub, None)]
    (after,) = _ids(setup.publish({"c": "x"}))

    assert setup.events(sub.id) == [before, after]


def test_a_replacement_is_atomic_and_a_failed_one_leaves_the_old(setup: Setup) -> None:
    sub = setup.broker.subscribe('c = "x"', kind="content", owner="ann")
    (first,) = _ids(setup.publish({"c": "x"}))

    replaced = setup.broker.subscribe('c = "y"', kind="content", owner="ann", sub_id=sub.id)
    assert replaced.id == sub.id and setup.store.subscription(sub.id).text == 'c = "y"'
    x_event, y_event = _ids(setup.publish({"c": "x"}, {"c": "y"}))

    with pytest.raises(SempsError):
        setup.broker.subscribe("c = = y", kind="content", owner="ann", sub_id=sub.id)
    assert setup.store.subscription(sub.id).text == 'c = "y"'
    (still,) = _ids(setup.publish({"c": "y"}))

    assert setup.events(sub.id) == [first, y_event, still]  # numbering goes on
    assert x_event not in setup.events(sub.id)
    with pytest.raises(NotFound, match="no subscription 'sub-404'"):
        setup.broker.subscribe('c = "y"', kind="content", owner="ann", sub_id="sub-404")


def test_a_subscriber_holds_at_most_max_subscriptions(tmp_path: Path) -> None:
    made = Setup(tmp_path / "data", Limits(max_subscriptions=2))
    try:
        outcomes: list[object] = []

        def subscribe(text: str) -> None:
            try:
                outcomes.append(made.broker.subscribe(text, kind="content", owner="ann"))
            except SubscriptionLimitExceeded as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=subscribe, args=(t,)) for t in list(RULES) * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        refused = [o for o in outcomes if isinstance(o, SubscriptionLimitExceeded)]
        assert len(outcomes) == 6 and len(refused) == 4  # concurrent requests share the cap
        assert "already holds 2 subscriptions" in str(refused[0])
        assert len(made.store.subscriptions("ann")) == 2
        made.broker.subscribe('c = "x"', kind="content", owner="bob")  # bob has his own cap
        made.broker.unsubscribe(made.store.subscriptions("ann")[0].id)
        made.broker.subscribe('c = "x"', kind="content", owner="ann")  # room again
        assert len(made.store.subscriptions("ann")) == 2
    finally:
        made.broker.close()


def test_composite_events_are_detected_in_publication_order(setup: Setup) -> None:
    setup.broker.subscribe('c = "x"', kind="content", owner="ann", name="x")
    setup.broker.subscribe('c = "y"', kind="content", owner="ann", name="y")
    comp = setup.broker.subscribe("create event xy = x then y;", kind="composite", owner="ann")

    events = _ids(setup.publish({"c": "y"}, {"c": "x"}, {"c": "y"}))  # one call, one order

    stored = setup.store.notifications_after(comp.id, 0)
    assert [(n.event, n.payload["detail"]["composite"]) for n in stored] == [  # type: ignore[index]
        (events[2], "xy")
    ]
    assert setup.channel.seqs(comp.id) == [1]
    assert setup.store.matcher_state("composite") is not None  # committed with the group


def test_unsubscribing_removes_the_subscription_and_its_notifications(setup: Setup) -> None:
    sub = setup.broker.subscribe('c = "x"', kind="content", owner="ann")
    _ids(setup.publish({"c": "x"}))
    setup.broker.unsubscribe(sub.id)
    assert setup.store.subscriptions() == []
    assert setup.store.notifications_after(sub.id, 0) == []
    assert [r[1] for r in setup.publish({"c": "x"})] == [0]  # type: ignore[index]
    with pytest.raises(NotFound):
        setup.broker.unsubscribe(sub.id)


def test_tokens_are_read_from_the_store_and_revoked_at_once(setup: Setup) -> None:
    token_id, secret = setup.store.create_token("subscriber", "ann")
    assert setup.broker.authorize(secret, "subscriber").subject == "ann"
    setup.broker.revoke_token(token_id)
    with pytest.raises(AuthError, match="unknown, expired or revoked bearer token"):
        setup.broker.authorize(secret, "subscriber")


def test_what_a_token_established_ends_when_it_is_revoked_or_expires(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """:meth:`Broker.check_token_id` (a Solid channel's check): revoked at once; expired
    even while its lookup is cached."""
    now = time.time()
    revoked, _ = setup.store.create_token("subscriber", "ann")
    expiring, _ = setup.store.create_token("subscriber", "ann", expires_at=now + 60)
    setup.broker.check_token_id(revoked)
    setup.broker.check_token_id(expiring)
    setup.broker.revoke_token(revoked)
    with pytest.raises(AuthError, match="the bearer token that established this was revoked"):
        setup.broker.check_token_id(revoked)
    setup.broker.check_token_id(expiring)
    monkeypatch.setattr(time, "time", lambda: now + 60)
    with pytest.raises(AuthError, match="revoked or expired"):
        setup.broker.check_token_id(expiring)
    with pytest.raises(AuthError, match="revoked or expired"):
        setup.broker.check_token_id("")  # a channel bound to no token


def test_the_http_api_runs_over_the_memory_store_without_a_server(tmp_path: Path) -> None:
    store = MemoryStore()
    app = create_app(tmp_path / "data", workers=1, store=store)
    tokens = {role: store.create_token(role, role)[1] for role in ("publisher", "subscriber")}

    async def go() -> tuple[str, list[dict[str, object]]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://semps.test") as http:

            def auth(role: str) -> dict[str, str]:
                return {"Authorization": f"Bearer {tokens[role]}"}

            created = await http.post(
                "/subscriptions",
                content='c = "x"',
                params={"kind": "content"},
                headers=auth("subscriber"),
            )
            sub_id = str(created.json()["id"])
            for c in "xyx":
                posted = await http.post(
                    "/events", json={"values": {"c": c}}, headers=auth("publisher")
                )
                assert posted.status_code == 202, posted.text
            page = await http.get(
                f"/subscriptions/{sub_id}/notifications?once=true", headers=auth("subscriber")
            )
            return sub_id, [
                json.loads(line[5:]) for line in page.text.splitlines() if line.startswith("data:")
            ]

    try:
        sub_id, notes = asyncio.run(go())
        assert [n["id"] for n in notes] == [1, 2]
        stored = store.notifications_after(sub_id, 0)
        assert [n["event"] for n in notes] == [n.event for n in stored]
        assert not (tmp_path / "data" / "semps.sqlite3").exists()
    finally:
        app.state.broker.close()


class Receiver(LocalServer):
    """A local webhook endpoint: answers ``status`` and records (delivery header, signature
    header, body) of each POST."""

    def __init__(self, status: int = 204) -> None:
        self.got: list[tuple[str, str, bytes]] = []
        self.arrived = threading.Condition()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.body()
                self.send_response(status)
                self.end_headers()
                with outer.arrived:
                    headers = self.headers
                    outer.got.append(
                        (headers["X-Semps-Delivery"], headers["X-Semps-Signature"], body)
                    )
                    outer.arrived.notify_all()

        super().__init__(Handler, path="/hook")

    def wait_for(self, n: int) -> None:
        """Until ``n`` requests came (at most a minute: then the test fails)."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.got) >= n, timeout=PATIENCE), self.got


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "not within a minute"
        time.sleep(0.02)


def test_webhooks_deliver_from_the_memory_store_in_seq_order(setup: Setup) -> None:
    receiver = Receiver()
    setup.broker.webhooks.policy = CallbackPolicy(["127.0.0.1/32"])
    sub = setup.broker.subscribe('c = "x"', kind="content", owner="ann")
    secret = setup.store.set_webhook(sub.id, receiver.url)
    try:
        events = _ids(setup.publish({"c": "x"}, {"c": "y"}, {"c": "x"}, {"c": "x"}))
        receiver.wait_for(3)
        _until(lambda: setup.store.webhook_backlog() == 0)
    finally:
        receiver.close()
    assert [d for d, _, _ in receiver.got] == [f"{sub.id}/1", f"{sub.id}/2", f"{sub.id}/3"]
    assert all(sig == signature(secret, body) for _, sig, body in receiver.got)
    assert [json.loads(body)["event"] for _, _, body in receiver.got] == [
        events[0],
        events[2],
        events[3],
    ]
    assert [h.delivered for h in setup.store.webhooks()] == [3]


def test_a_webhook_that_keeps_failing_leaves_dead_letters_in_the_memory_store(
    tmp_path: Path,
) -> None:
    receiver = Receiver(status=500)
    store = MemoryStore()
    broker = Broker(
        tmp_path / "data", store=store, workers=1, webhook_attempts=2, webhook_backoff=0.01
    )
    broker.webhooks.policy = CallbackPolicy(["127.0.0.1/32"])
    try:
        sub = broker.subscribe('c = "x"', kind="content", owner="ann")
        store.set_webhook(sub.id, receiver.url)
        docs = [("application/json", b'{"values": {"c": "x"}}')] * 2
        asyncio.run(broker.publish_many(docs))
        _until(lambda: len(store.dead_letters()) == 2)
        assert [(d.seq, d.error, d.attempts) for d in store.dead_letters()] == [
            (1, "HTTP 500", 2),
            (2, "HTTP 500", 2),
        ]
        assert [d for d, _, _ in receiver.got] == [f"{sub.id}/{n}" for n in (1, 1, 2, 2)]
        _until(lambda: store.webhook_backlog() == 0)  # the stream moved on
        assert broker.metrics.webhooks_dead_lettered == 2
    finally:
        receiver.close()
        broker.close()
