"""The stateful matchers (composite detection), held in the broker's own process: they
observe every committed event's matches in order, on the commit thread, and their state
commits with the notifications (:mod:`semps.broker.commit`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from semps.broker.payload import payload_head
from semps.errors import NotFound
from semps.event import Event
from semps.limits import Limits
from semps.matcher.base import Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.values import Match, Resolver, Subscription

__all__ = ["Observers"]


class Observers:
    """The stateful matchers by kind; ``lock`` serialises their use (registration on the
    request threads, observation on the commit thread)."""

    def __init__(self, resolver: Resolver, limits: Limits) -> None:
        self._resolver = resolver
        self._limits = limits
        self._matchers: dict[str, Matcher] = {}
        self._warm: set[str] = set()  # the kinds whose kernels are loaded
        self.lock = threading.Lock()

    def matcher(self, kind: str) -> Matcher:
        """The matcher of ``kind``, created (with the broker's lookup) on first use."""
        matcher = self._matchers.get(kind)
        if matcher is None:
            matcher = self._matchers[kind] = create_matcher(kind)
            matcher.limits = self._limits
            matcher.use_resolver(self._resolver)
        return matcher

    def items(self) -> Iterator[tuple[str, Matcher]]:
        return iter(list(self._matchers.items()))

    def add(self, sub: Subscription) -> None:
        """Index ``sub`` (it validates: raises before any change). The slow parts run
        outside :attr:`lock`, which every commit takes: loading the kind's compiled kernels
        the first time (:meth:`~semps.matcher.base.Matcher.warm`) and
        :meth:`~semps.matcher.base.Matcher.prepare` (a composite definition's parse)."""
        with self.lock:
            matcher = self.matcher(sub.kind)
        if sub.kind not in self._warm:
            matcher.warm()
            self._warm.add(sub.kind)
        matcher.prepare(sub)
        with self.lock:
            matcher.add(sub)

    def remove(self, sub_id: str, kind: str) -> None:
        """Unindex ``sub_id`` (nothing when it is not there)."""
        with self.lock:
            try:
                self._matchers[kind].remove(sub_id)
            except (KeyError, NotFound):
                pass

    def holding(self) -> bool:
        """Whether a stateful matcher holds subscriptions (then events commit in order)."""
        return any(len(m) for m in self._matchers.values())  # type: ignore[arg-type]

    def observe(
        self, event_id: str, when: float | None, notes: list[tuple[str, str]], limits: Limits
    ) -> list[tuple[str, str]]:
        """The notifications (subscription id, payload head) the stateful matchers derive
        from an event's ``notes`` (call under :attr:`lock`)."""
        matches = [Match(sub_id, event_id) for sub_id, _ in notes]
        event = Event(event_id, time=when)
        derived: list[Match] = []
        for matcher in self._matchers.values():
            if len(matcher):  # type: ignore[arg-type]
                derived += matcher.observe(event, matches)
        return [(m.subscription, payload_head(m, limits)) for m in derived]

    def states(self) -> dict[str, dict[str, object]]:
        """Each matcher's state to commit, by kind (call under :attr:`lock`)."""
        return {k: s for k, m in self._matchers.items() if (s := m.state()) is not None}

    def close(self) -> None:
        for matcher in self._matchers.values():
            matcher.close()
