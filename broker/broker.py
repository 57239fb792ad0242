"""The broker: one event path from bytes to stored notifications.

ingest (``read_event``) -> every registered matcher -> ``observe`` (derived matches) ->
notifications committed to the store -> waiters woken. Subscriptions live in the store and
in the matchers' indexes; a restart rebuilds the indexes from the store. Matching is
serialised by a lock (matchers are not thread-safe); the HTTP layer runs it in a thread.
"""

from __future__ import annotations

import inspect
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from semps.broker.store import Principal, Store
from semps.broker.webhooks import WebhookDispatcher
from semps.errors import AuthError, NotFound, PermissionDenied
from semps.ingest.json_event import is_json_media_type, read_json_event
from semps.ingest.rdf import DEFAULT_MAX_BYTES, read_event
from semps.ingest.terms import n3
from semps.matcher.base import Match, MatchContext, Matcher, Subscription
from semps.matcher.registry import create_matcher, get_matcher_class
from semps.ontology.store import OntologyStore

#: Upper bounds (seconds) of the publish-latency histogram buckets.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class Metrics:
    """Counters and the publish-latency histogram exposed at /metrics."""

    events_in: int = 0
    matches: int = 0
    notifications_out: int = 0
    latency_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BUCKETS))

    def observe(self, seconds: float) -> None:
        self.latency_sum += seconds
        for i, bound in enumerate(LATENCY_BUCKETS):
            if seconds <= bound:
                self.buckets[i] += 1

    def prometheus(self, **gauges: int) -> str:
        """The Prometheus text exposition of the counters, gauges and histogram."""
        lines = [
            "# TYPE semps_events_in_total counter",
            f"semps_events_in_total {self.events_in}",
            "# TYPE semps_matches_total counter",
            f"semps_matches_total {self.matches}",
            "# TYPE semps_notifications_out_total counter",
            f"semps_notifications_out_total {self.notifications_out}",
        ]
        for name, value in gauges.items():
            lines += [f"# TYPE semps_{name} gauge", f"semps_{name} {value}"]
        lines.append("# TYPE semps_publish_latency_seconds histogram")
        for bound, count in zip(LATENCY_BUCKETS, self.buckets, strict=True):
            lines.append(f'semps_publish_latency_seconds_bucket{{le="{bound}"}} {count}')
        lines += [
            f'semps_publish_latency_seconds_bucket{{le="+Inf"}} {self.events_in}',
            f"semps_publish_latency_seconds_sum {self.latency_sum:.6f}",
            f"semps_publish_latency_seconds_count {self.events_in}",
        ]
        return "\n".join(lines) + "\n"


class Broker:
    """The broker over a data directory (``semps.sqlite3`` and ``ontology.sqlite3``)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        webhook_attempts: int = 5,
        webhook_backoff: float = 0.5,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = Store(self.data_dir / "semps.sqlite3")
        self.ontology = OntologyStore(self.data_dir / "ontology.sqlite3")
        self.max_bytes = max_bytes
        self.matchers: dict[str, Matcher] = {}
        self.metrics = Metrics()
        self._lock = threading.Lock()
        for sub in self.store.subscriptions():
            self._matcher(sub.kind).add(sub)
        for kind, matcher in self.matchers.items():
            saved = self.store.matcher_state(kind)
            if saved is not None:
                matcher.restore(saved)
        self.webhooks = WebhookDispatcher(
            self.store, attempts=webhook_attempts, backoff=webhook_backoff
        )

    def _matcher(self, kind: str) -> Matcher:
        matcher = self.matchers.get(kind)
        if matcher is None:
            cls = get_matcher_class(kind)  # PluginNotFound with a suggestion
            wants_resolver = "resolver" in inspect.signature(cls.__init__).parameters
            options = {"resolver": self._resolve} if wants_resolver else {}
            matcher = self.matchers[kind] = create_matcher(kind, **options)
        return matcher

    def _resolve(self, sub_id: str) -> Subscription | None:
        try:
            return self.store.subscription(sub_id)
        except NotFound:
            return None

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
        """Register (or atomically replace) a subscription; errors leave nothing behind."""
        with self._lock:
            matcher = self._matcher(kind)  # PluginNotFound first: nothing is allocated
            sub = Subscription(sub_id or self.store.next_id("sub-"), kind, text, owner, name)
            if sub_id is not None:
                old = self.store.subscription(sub_id)
                if old.kind != kind:
                    self.matchers[old.kind].remove(sub_id)
            matcher.add(sub)  # validates; raises SubscriptionError before anything is stored
            self.store.put_subscription(sub)
        return sub

    def unsubscribe(self, sub_id: str) -> None:
        with self._lock:
            sub = self.store.subscription(sub_id)
            self.matchers[sub.kind].remove(sub_id)
            self.store.delete_subscription(sub_id)

    def visible(self, sub_id: str, who: Principal) -> Subscription:
        """The subscription if ``who`` may see it (its owner, or an admin)."""
        sub = self.store.subscription(sub_id)
        if who.role != "admin" and sub.owner != who.subject:
            msg = f"no subscription {sub_id!r}"
            raise NotFound(msg)
        return sub

    # -- events ----------------------------------------------------------------------------

    def publish(self, data: bytes, media_type: str | None) -> tuple[str, int]:
        """Ingest, match and durably store the notifications; returns (event id, matched)."""
        started = time.perf_counter()
        event_id = f"ev-{uuid.uuid4().hex[:16]}"
        if is_json_media_type(media_type):  # content values and/or a region (seeds 000/002)
            event = read_json_event(data, event_id=event_id, max_bytes=self.max_bytes)
        else:
            event = read_event(
                data, event_id=event_id, media_type=media_type, max_bytes=self.max_bytes
            )
        with self._lock:
            context = MatchContext(event, self.ontology.expansion())
            matches: list[Match] = []
            for matcher in self.matchers.values():
                matches += matcher.match(event, context)
            for matcher in self.matchers.values():
                matches += matcher.observe(event, matches)
            states = {k: s for k, m in self.matchers.items() if (s := m.state()) is not None}
            # Notifications and detection state commit together: a restart resumes both.
            stored = self.store.add_notifications(event_id, self._payloads(matches), states)
        self.metrics.events_in += 1
        self.metrics.matches += len(matches)
        self.metrics.observe(time.perf_counter() - started)
        if stored:
            self.webhooks.wake()
        return event_id, stored

    @staticmethod
    def _payloads(matches: list[Match]) -> Iterator[tuple[str, dict[str, object]]]:
        for m in matches:
            solutions = [{k: n3(v) for k, v in s.items()} for s in m.solutions]
            yield (
                m.subscription,
                {
                    "subscription": m.subscription,
                    "event": m.event,
                    "count": m.count,
                    "solutions": solutions,
                    **({"detail": dict(m.detail)} if m.detail else {}),
                },
            )

    def authenticate(self, header: str | None, *roles: str) -> Principal:
        """The principal behind an ``Authorization: Bearer`` header, with one of ``roles``."""
        if not header or not header.startswith("Bearer "):
            msg = "missing bearer token (Authorization: Bearer <token>)"
            raise AuthError(msg)
        who = self.store.principal(header[7:].strip())
        if who is None:
            msg = "unknown bearer token"
            raise AuthError(msg)
        if roles and who.role not in roles and who.role != "admin":
            msg = f"a {who.role} token may not do this (needs {' or '.join(roles)})"
            raise PermissionDenied(msg)
        return who

    def close(self) -> None:
        self.webhooks.close()
        for matcher in self.matchers.values():
            matcher.close()
        self.ontology.close()
        self.store.close()
