"""The matcher layer's value objects: a :class:`Subscription`, a :class:`Match` and a
:class:`Verdict` (a match's count and solutions, shared by the subscriptions of one shape).

They sit below the :class:`~semps.matcher.base.Matcher` contract and the result formats
(:mod:`semps.matcher.results`), which both use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from semps._types import Term
from semps.errors import SubscriptionError

__all__ = [
    "ChangeMatch",
    "Match",
    "Resolver",
    "Subscription",
    "Verdict",
    "check_subscription_id",
]


def check_subscription_id(sub_id: object) -> None:
    """Refuse a subscription id that is not a non-empty string (what the matchers' own
    subscription values, content and region, check first).

    Raises:
        SubscriptionError: it is not.
    """
    if not isinstance(sub_id, str) or not sub_id:
        msg = f"a subscription id must be a non-empty string, not {sub_id!r}"
        raise SubscriptionError(msg)


@dataclass(frozen=True, slots=True)
class Subscription:
    """A registered subscription.

    Attributes:
        id: unique id (a file stem in the CLI, assigned by the broker in the service).
        kind: the matcher that owns it (``semantic``, ``content``, ...).
        text: the subscription in its matcher's language (SPARQL-like text, JSON, ...).
        owner: the subscriber that owns it (``None`` outside the broker).
        name: an optional human name (composite definitions refer to subscriptions by it).
    """

    id: str
    kind: str
    text: str
    owner: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.id:
            msg = "a subscription id must be a non-empty string"
            raise ValueError(msg)
        if not self.kind:
            msg = f"subscription {self.id!r} has no kind"
            raise ValueError(msg)


#: Subscription id -> the subscription, or None when there is none (the broker's lookup).
Resolver = Callable[[str], "Subscription | None"]

_NO_DETAIL: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Match:
    """One subscription matched one event.

    Attributes:
        subscription: the subscription id.
        event: the event id.
        count: the number of solutions (SPARQL solutions for semantic subscriptions; 1 for
            matchers without bindings).
        solutions: the bindings of the projected variables, possibly truncated to a
            matcher-defined limit (``count`` is always exact).
        detail: matcher-specific extras (a composite match lists its constituents here).
    """

    subscription: str
    event: str
    count: int = 1
    solutions: tuple[Mapping[str, Term], ...] = ()
    detail: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.count < 1:
            msg = f"a match needs at least one solution, got {self.count}"
            raise ValueError(msg)
        # Most matches carry no detail: share one empty read-only mapping.
        detail = MappingProxyType(dict(self.detail)) if self.detail else _NO_DETAIL
        object.__setattr__(self, "detail", detail)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (
            Match,
            (self.subscription, self.event, self.count, self.solutions, dict(self.detail)),
        )


#: The detail of a truncated verdict's match.
_TRUNCATED: Mapping[str, object] = MappingProxyType({"truncated": True})


@dataclass(slots=True)
class Verdict:
    """What one subscription's match of one event found: the solution count and the first
    solutions, without the ids (one verdict may be shared by every subscription of one
    shape, and rendered once for all of them).

    ``truncated`` says the matcher's work budget ran out: ``count`` is then a lower bound
    (the match's detail says ``"truncated": true``). ``detail`` holds a matcher's other
    extras (:attr:`Match.detail`). Never changed once made (not frozen: a frozen
    dataclass costs three times as much to make, and the semantic matcher makes several an
    event).

    Example:
        >>> found = Verdict(1, ({"x": "http://ex/a"},), truncated=True).match("s1", "e1")
        >>> found.count, found.solutions, dict(found.detail)
        (1, ({'x': 'http://ex/a'},), {'truncated': True})
    """

    count: int
    solutions: tuple[Mapping[str, Term], ...]
    truncated: bool = False
    detail: Mapping[str, object] | None = None

    @classmethod
    def of(cls, match: Match) -> Verdict:
        """The verdict of a match (its detail kept as it is)."""
        return cls(match.count, match.solutions, False, match.detail or None)

    def details(self) -> Mapping[str, object]:
        """The detail of this verdict's matches (``"truncated": true`` first when
        truncated)."""
        if not self.truncated:
            return self.detail or _NO_DETAIL
        return {**_TRUNCATED, **self.detail} if self.detail else _TRUNCATED

    def match(self, subscription: str, event: str) -> Match:
        """The :class:`Match` of ``subscription`` with this verdict for ``event``."""
        return Match(subscription, event, self.count, self.solutions, self.details())


@dataclass(frozen=True, slots=True)
class ChangeMatch:
    """One change of the knowledge graph changed one subscription's answers.

    Attributes:
        subscription: the subscription id.
        version: the graph version the change made.
        count: the solutions the change added (0 when it only removed some).
        solutions: the first added solutions (bindings of the projected variables).
        removed_count: the solutions the change removed.
        removed: the first removed solutions.
        detail: matcher-specific extras.
    """

    subscription: str
    version: int
    count: int = 0
    solutions: tuple[Mapping[str, Term], ...] = ()
    removed_count: int = 0
    removed: tuple[Mapping[str, Term], ...] = ()
    detail: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.count < 0 or self.removed_count < 0 or not (self.count or self.removed_count):
            msg = f"a change match adds or removes solutions, not {self.count}/{self.removed_count}"
            raise ValueError(msg)
