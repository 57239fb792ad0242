"""CompositeMatcher: composite-event detection as a broker plugin (kind ``composite``).

A composite subscription's text holds definitions. Its primitives are the names of its
owner's other subscriptions (of any kind; the subscription's ``name``, else its id): a match
of such a subscription is an occurrence. Owners never see each other's names: every event is
named in the shared tree by the pair ``(owner, name)``, so no owner or name (either may hold
any character) can spell another owner's event.

Registration is all or nothing: a subscription's definitions are checked as a whole (syntax,
names, the owner's total against ``max_definitions``) and added together, or not at all; a
replacement that fails leaves the earlier definitions in place with their state. One event
may cause at most ``max_detections`` detections (over every owner), split between the owners
its matches name: each owner's detections are run on their own (an owner's composites only
ever read its own names) and stop at its share, ``max_detections`` divided by the number of
owners, and never more than ``max_detections_per_owner``. So an owner whose definitions
multiply detections cannot use up another owner's: past its share its own further detections
are dropped, and the log says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable, Sequence
from typing import Any

from semps.errors import NotFound, SubscriptionLimitExceeded
from semps.event import Event
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.composite.language import Definition, parse_definitions, parse_statements
from semps.matcher.composite.nodes import Constituents
from semps.matcher.composite.tree import EventTree, warm
from semps.matcher.values import Match, Resolver, Subscription

log = logging.getLogger("semps.composite")

#: An event's name in the shared tree: (owner, name). The owner ``""`` is nobody's.
Key = tuple[str, str]


def _key(owner: str | None, name: str) -> Key:
    return (owner or "", name)


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
        self.definitions: dict[str, list[Definition]] = {}  # subscription id -> its own
        self.owner: dict[str, str] = {}  # subscription id -> its owner ("" for none)
        self.by_owner: dict[str, set[str]] = {}  # owner -> its composite subscriptions
        self.owner_of: dict[Key, str] = {}  # composite -> the subscription defining it
        self._read: tuple[str, list[Definition]] | None = None  # prepare()'s last text

    def prepare(self, subscription: Subscription) -> None:
        """Parse the definitions (the syntax; the names are checked by :meth:`add`), so that
        ``add`` under the broker's lock only checks and links them."""
        self._read = (subscription.text, parse_statements(subscription.text))

    def warm(self) -> None:
        """Load the event tree's compiled kernels (see :func:`.tree.warm`)."""
        warm()

    def use_resolver(self, resolver: Resolver) -> None:
        self.resolver = resolver

    def __len__(self) -> int:
        return len(self.definitions)

    def add(self, subscription: Subscription) -> None:
        """Parse and merge a subscription's definitions (replacing its earlier ones), all
        or none.

        Raises:
            CompositeDefinitionError: a definition is refused (it says which, and where).
            SubscriptionLimitExceeded: the owner would hold more than ``max_definitions``.
        """
        owner = subscription.owner or ""
        others = self.by_owner.get(owner, set()) - {subscription.id}
        known = {d.name for sub in others for d in self.definitions[sub]}
        used = {o for sub in others for d in self.definitions[sub] for o in d.operands} - known
        read = self._read
        self._read = None
        text = read[1] if read is not None and read[0] == subscription.text else subscription.text
        definitions = parse_definitions(text, known, used)  # raises, no change
        held = sum(len(self.definitions[sub]) for sub in others)
        limit = self.limits.max_definitions
        if held + len(definitions) > limit:
            msg = (
                f"subscriber {owner!r} would hold {held + len(definitions)} composite event "
                f"definitions, over the limit of {limit} (max_definitions)"
            )
            raise SubscriptionLimitExceeded(msg)
        old = self.definitions.get(subscription.id)
        saved = self._state_of(subscription.id) if old else {}
        if old:
            self.remove(subscription.id)
        try:
            self._define(subscription.id, owner, definitions)
        except BaseException:
            if old:  # the earlier definitions come back, with their state
                self._define(subscription.id, owner, old)
                self.tree.restore(saved)
            raise

    def _define(self, sub_id: str, owner: str, definitions: list[Definition]) -> None:
        self.tree.define(definitions, key=lambda name: _key(owner, name))
        self.definitions[sub_id] = definitions
        self.owner[sub_id] = owner
        self.by_owner.setdefault(owner, set()).add(sub_id)
        for d in definitions:
            self.owner_of[_key(owner, d.name)] = sub_id

    def _state_of(self, sub_id: str) -> dict[Any, Any]:
        mine = {_key(self.owner[sub_id], d.name) for d in self.definitions[sub_id]}
        return {k: v for k, v in self.tree.state().items() if k in mine}

    def remove(self, subscription_id: str) -> None:
        """Drop a subscription's composites; unshared nodes are freed."""
        if subscription_id not in self.definitions:
            msg = f"no composite subscription {subscription_id!r}"
            raise NotFound(msg)
        owner = self.owner.pop(subscription_id)
        for d in reversed(self.definitions.pop(subscription_id)):
            self.tree.drop(_key(owner, d.name))
            del self.owner_of[_key(owner, d.name)]
        group = self.by_owner[owner]
        group.discard(subscription_id)
        if not group:
            del self.by_owner[owner]

    def match(self, context: MatchContext) -> list[Match]:
        """Composites are not matched against raw events (see :meth:`observe`)."""
        return []

    def observe(self, event: Event, matches: Sequence[Match]) -> list[Match]:
        """Each match is an occurrence of its subscription's name; returns detections (at
        most ``max_detections``, each owner's at most its share: see the module
        docstring), in the order of the matches."""
        now = event.time if event.time is not None else time.time()
        by_owner: dict[str, list[tuple[int, tuple[Hashable, float, Constituents]]]] = {}
        for i, m in enumerate(matches):
            sub = self.resolver(m.subscription) if self.resolver else None
            owner = sub.owner if sub else None
            name = (sub.name or sub.id) if sub else m.subscription
            cons = [{"event": event.id, "subscription": m.subscription, "name": name}]
            key = _key(owner, name)
            by_owner.setdefault(key[0], []).append((i, (key, now, cons)))
        share, limit_name = self._share(len(by_owner))
        found: list[list[tuple[Hashable, Constituents]]] = [[] for _ in matches]
        for owner, arrivals in by_owner.items():
            made_by_arrival = self.tree.occur_many([a for _, a in arrivals], share)
            if self.tree.truncated:
                log.warning(
                    "event %s: composite detection stopped at %d detections (%s) for owner "
                    "%r; the rest were dropped",
                    event.id,
                    share,
                    limit_name,
                    owner,
                )
            room = share  # the run may pass its limit before it looks: cut at the share
            for (i, _), made in zip(arrivals, made_by_arrival, strict=True):
                found[i] = made[:room]
                room -= len(found[i])
        out = []
        for detections in found:  # in the order of the matches
            for composite, constituents in detections:
                assert isinstance(composite, tuple)
                detail: dict[str, Any] = {"composite": composite[1], "constituents": constituents}
                out.append(Match(self.owner_of[composite], event.id, 1, (), detail))
        return out

    def _share(self, owners: int) -> tuple[int, str]:
        """Detections each of ``owners`` owners may make from one event, and the limit
        that sets it."""
        split = self.limits.max_detections // max(owners, 1)
        own = self.limits.max_detections_per_owner
        if own < split:
            return own, "max_detections_per_owner"
        return max(split, 1), "max_detections" if owners <= 1 else f"max_detections / {owners}"

    def state(self) -> dict[str, object]:
        """The tree's detection state (persisted by the broker after each event), by owner
        and name."""
        owners: dict[str, dict[str, object]] = {}
        for key, value in self.tree.state().items():
            assert isinstance(key, tuple)
            owners.setdefault(key[0], {})[key[1]] = value
        return {"owners": owners}

    def restore(self, state: dict[str, object]) -> None:
        saved = state.get("owners")
        owners: dict[str, dict[str, Any]] = {}
        if isinstance(saved, dict):
            owners = {str(k): dict(v) for k, v in saved.items() if isinstance(v, dict)}
        else:  # an older release's "owner:name" keys (names hold no ':')
            for text, value in state.items():
                owner, _, name = str(text).rpartition(":")
                owners.setdefault(owner, {})[name] = value
        self.tree.restore(
            {(o, name): value for o, names in owners.items() for name, value in names.items()}
        )
