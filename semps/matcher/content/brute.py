"""Brute force: every subscription's constraints against the event, in plain Python.

The tests' oracle. It reads the constraints themselves (:meth:`Constraint.holds`), not the
merged intervals or the encoded columns the compiled indexes use, so it shares no code with
them beyond the value objects.
"""

from __future__ import annotations

from typing import ClassVar, Generic, Protocol, TypeVar

from semps.errors import NotFound
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.index import ContentIndex, View

__all__ = ["BruteForceIndex", "SubscriptionsById", "matches"]


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


S = TypeVar("S", bound=_Identified)


class SubscriptionsById(Generic[S]):
    """The brute-force oracles' store: their subscriptions in a dict by id.

    Example:
        >>> store = SubscriptionsById[ContentSubscription]()
        >>> store.add(ContentSubscription("s1", (Constraint("a", ">=", 1),)))
        >>> len(store), "s1" in store
        (1, True)
        >>> store.remove("s2")
        Traceback (most recent call last):
        ...
        semps.errors.NotFound: no content subscription 's2'
    """

    #: The matcher kind the error messages name.
    kind: ClassVar[str] = "content"

    def __init__(self) -> None:
        self.subscriptions: dict[str, S] = {}

    def __len__(self) -> int:
        return len(self.subscriptions)

    def __contains__(self, sub_id: object) -> bool:
        return sub_id in self.subscriptions

    def add(self, subscription: S) -> None:
        """Insert or replace."""
        self.subscriptions[subscription.id] = subscription

    def remove(self, sub_id: str) -> None:
        """Delete (NotFound when unknown)."""
        if self.subscriptions.pop(sub_id, None) is None:
            msg = f"no {self.kind} subscription {sub_id!r}"
            raise NotFound(msg)


def matches(subscription: ContentSubscription, view: View) -> bool:
    """Does ``view`` match ``subscription``? For every constrained attribute, some single
    value satisfies all the subscription's constraints on that attribute.

    Example:
        >>> s = ContentSubscription("s", (Constraint("a", ">=", 1), Constraint("a", "<=", 2)))
        >>> matches(s, {"a": [0, 3]}), matches(s, {"a": [0, 1.5]}), matches(s, {})
        (False, True, False)
    """
    by_attr: dict[str, list[Constraint]] = {}
    for c in subscription.constraints:
        by_attr.setdefault(c.attr, []).append(c)
    return all(
        any(all(c.holds(v) for c in constraints) for v in view.get(attr, ()))
        for attr, constraints in by_attr.items()
    )


class BruteForceIndex(SubscriptionsById[ContentSubscription], ContentIndex):
    """Subscriptions in a dict; :meth:`match` tries every one.

    Example:
        >>> from semps.matcher.content.parse import parse_subscription
        >>> index = BruteForceIndex()
        >>> index.add(parse_subscription('c = "red" and a <= 3', sub_id="s1"))
        >>> index.match({"c": ["red"], "a": [2.5]}), index.match({"c": ["blue"], "a": [2]})
        (['s1'], [])
    """

    name = "brute"
    #: No bulk path: the oracle keeps the subscriptions themselves.
    bulk_loadable = False

    def match(self, view: View) -> list[str]:
        """Ids of the matching subscriptions, sorted."""
        return sorted(s.id for s in self.subscriptions.values() if matches(s, view))
