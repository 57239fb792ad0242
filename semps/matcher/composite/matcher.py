"""CompositeMatcher: composite-event detection as a broker plugin (kind ``composite``).

A composite subscription's text holds definitions. Its primitives are the names of its
owner's other subscriptions (of any kind; the subscription's ``name``, else its id): a match
of such a subscription is an occurrence. Owners never see each other's names.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from semps.errors import NotFound
from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.composite.language import parse_definitions
from semps.matcher.composite.tree import EventTree
from semps.matcher.values import Match, Resolver, Subscription


def _ns(owner: str | None, name: str) -> str:
    # Event names cannot contain ':', so "owner:name" never collides.
    return f"{owner or ''}:{name}"


class CompositeMatcher(Matcher):
    """Detect composite events over the matches of other subscriptions.

    Args:
        resolver: subscription id -> subscription (for its name and owner); the broker passes
            its store lookup. Without one, a match's subscription id is its event name.
    """

    kind = "composite"
    stateful = True

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver
        self.tree = EventTree()
        self.owned: dict[str, list[str]] = {}  # subscription id -> its composites (namespaced)
        self.owner_of: dict[str, str] = {}  # namespaced composite -> subscription id

    def use_resolver(self, resolver: Resolver) -> None:
        self.resolver = resolver

    def __len__(self) -> int:
        return len(self.owned)

    def add(self, subscription: Subscription) -> None:
        """Parse and merge a subscription's definitions (replacing its earlier ones)."""
        owner = subscription.owner
        prefix = _ns(owner, "")
        old = self.owned.get(subscription.id, [])
        known = {
            n[len(prefix) :]
            for n in self.tree.composites()
            if n.startswith(prefix) and n not in old
        }
        used = {n[len(prefix) :] for n in self.tree.primitives() if n.startswith(prefix)}
        definitions = parse_definitions(subscription.text, known, used)  # raises, changes nothing
        if old:
            self.remove(subscription.id)
        for d in definitions:
            d2 = type(d)(
                _ns(owner, d.name),
                d.op,
                tuple(_ns(owner, o) for o in d.operands),
                d.n,
                d.within,
                d.line,
                d.column,
            )
            self.tree.define([d2])
            self.owner_of[d2.name] = subscription.id
        self.owned[subscription.id] = [_ns(owner, d.name) for d in definitions]

    def remove(self, subscription_id: str) -> None:
        """Drop a subscription's composites; unshared nodes are freed."""
        if subscription_id not in self.owned:
            msg = f"no composite subscription {subscription_id!r}"
            raise NotFound(msg)
        for name in reversed(self.owned.pop(subscription_id)):
            self.tree.drop(name)
            del self.owner_of[name]

    def match(self, context: MatchContext) -> list[Match]:
        """Composites are not matched against raw events (see :meth:`observe`)."""
        return []

    def observe(self, event: Event, matches: Sequence[Match]) -> list[Match]:
        """Each match is an occurrence of its subscription's name; returns detections."""
        now = event.time if event.time is not None else time.time()
        arrivals = []
        for m in matches:
            sub = self.resolver(m.subscription) if self.resolver else None
            owner = sub.owner if sub else None
            name = (sub.name or sub.id) if sub else m.subscription
            cons = [{"event": event.id, "subscription": m.subscription, "name": name}]
            arrivals.append((_ns(owner, name), now, cons))
        out = []
        for detections in self.tree.occur_many(arrivals):  # in the order of the matches
            for composite, found in detections:
                detail: dict[str, Any] = {
                    "composite": composite.split(":", 1)[1],
                    "constituents": found,
                }
                out.append(Match(self.owner_of[composite], event.id, 1, (), detail))
        return out

    def state(self) -> dict[str, object]:
        """The tree's detection state (persisted by the broker after each event)."""
        return self.tree.state()

    def restore(self, state: dict[str, object]) -> None:
        self.tree.restore(state)
