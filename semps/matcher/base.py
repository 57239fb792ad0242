"""The matcher contract shared by every matching plugin.

A matcher holds an index of subscriptions of one ``kind`` and answers, for an event, which
of them match. The broker, the CLI and the Spark jobs all drive matchers through this one
interface; no caller re-implements matching.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from semps._types import Term
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.ontology.expansion import Expansion

if TYPE_CHECKING:
    from semps.matcher.partab import EventParts
    from semps.matcher.results import MatchColumns


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


class MatchContext:
    """What a matcher may read besides the event: the ontology snapshot, and derived views
    computed at most once per event whichever matchers ask for them."""

    def __init__(
        self,
        event: Event,
        expansion: Expansion | None = None,
        *,
        watch: Callable[[str], None] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.event = event
        self.expansion = expansion if expansion is not None else Expansion()
        self.limits = limits
        #: Matchers call ``watch(subscription id)`` before work whose cost depends on that
        #: subscription (verification), so a watchdog can tell who overran; may be ``None``.
        self.watch = watch

    @cached_property
    def parts(self) -> EventParts:
        """The event's PartA/PartB under the ontology."""
        from semps.matcher.partab import to_partab

        return to_partab(self.event, self.expansion, limits=self.limits)


class Matcher(ABC):
    """A matching plugin: an index of subscriptions of one kind.

    Contract:
        - ``add`` validates and indexes a subscription; it raises
          :class:`~semps.errors.SubscriptionError` (never anything else) for bad text, and
          leaves the index unchanged when it raises. Adding an existing id replaces it
          atomically.
        - ``remove`` drops a subscription; unknown ids raise
          :class:`~semps.errors.NotFound`.
        - ``match`` must not block on I/O and must not mutate the event; it returns the
          matches sorted by subscription id.
        - Every per-event method takes the contexts alone: the event of ``context`` is
          ``context.event``.
        - ``match_batch``, ``count_batch`` and ``match_columns`` give, per context, what
          ``match`` gives.
        - Matchers are not thread-safe; the broker serialises calls.
        - A matcher whose answers depend on earlier events (``stateful = True``: composite
          detection) sees every event in order, in the broker's own process; stateless
          matchers may run in several worker processes, each with its own index.
        - A matcher may call ``context.watch(subscription id)`` before verifying a
          subscription, so an overrun can be blamed on it.
        - A matcher that refers to other subscriptions (composite definitions name them)
          gets the broker's lookup through :meth:`use_resolver`; the others ignore it.
    """

    #: The registry name of this matcher.
    kind: ClassVar[str]
    #: True when answers depend on earlier events (see the contract above).
    stateful: ClassVar[bool] = False
    #: The limits ``add`` enforces when it reads a subscription; the broker sets its own.
    limits: Limits = DEFAULT_LIMITS

    def use_resolver(self, resolver: Resolver) -> None:
        """Take the broker's lookup of subscriptions by id (called once, before any event).
        The default ignores it; a matcher whose subscriptions name others overrides this."""
        del resolver

    def prepare(self, subscription: Subscription) -> None:
        """Read what :meth:`add` will need of ``subscription`` alone (its text), touching
        no shared state: the broker calls it before it takes the lock it holds around
        ``add`` of a stateful matcher (the lock every event's commit takes too), so a slow
        parse holds up no event. May raise what ``add`` would raise for the text. The
        default does nothing."""
        del subscription

    def warm(self) -> None:
        """Load (or compile) the matcher's compiled kernels now, so that no event's time
        budget pays for it. The default does nothing; a matcher whose kernels a made-up
        event may not reach overrides this."""
        return None

    @abstractmethod
    def add(self, subscription: Subscription) -> None:
        """Index ``subscription`` (replacing one with the same id)."""

    @abstractmethod
    def remove(self, subscription_id: str) -> None:
        """Remove a subscription from the index."""

    @abstractmethod
    def match(self, context: MatchContext) -> list[Match]:
        """The subscriptions ``context.event`` matches, sorted by subscription id."""

    def match_batch(self, contexts: Sequence[MatchContext]) -> list[list[Match]]:
        """Match the events of several contexts at once; matchers with a batch algorithm
        override this."""
        return [self.match(c) for c in contexts]

    def count_batch(self, contexts: Sequence[MatchContext]) -> list[dict[str, int]]:
        """Per context, ``{subscription id: solution count}`` of its event's matches: what
        bulk jobs report. Matchers that can skip building solutions override this; the
        counts must equal :meth:`match_batch`'s."""
        return [
            {m.subscription: m.count for m in matches} for matches in self.match_batch(contexts)
        ]

    def match_columns(
        self, contexts: Sequence[MatchContext], *, solutions: bool = False
    ) -> MatchColumns:
        """A batch's answers as columns (:class:`~semps.matcher.results.MatchColumns`):
        the same matches, counts and order as :meth:`match_batch`, with ``solutions`` filled
        only when asked for (``Match.detail`` is not carried). Those of
        :meth:`unbound_columns` when it gives any (each match then has one empty solution),
        else :meth:`match_batch`'s converted."""
        from semps.matcher.results import MatchColumns

        columns = self.unbound_columns(contexts)
        if columns is None:
            return MatchColumns.from_matches(self.match_batch(contexts), solutions=solutions)
        return replace(columns, solutions=((),) * len(columns)) if solutions else columns

    def result_lines(self, contexts: Sequence[MatchContext]) -> list[str]:
        """:meth:`count_batch` as output lines, one per event
        (:func:`~semps.matcher.results.result_line`): what ``semps match`` and
        ``semps spark match`` write. Matchers with a compiled writer override this; the
        lines must equal the default's."""
        from semps.matcher.results import result_line

        counts = self.count_batch(contexts)
        return [result_line(c.event.id, n) for c, n in zip(contexts, counts, strict=True)]

    def unbound_columns(self, contexts: Sequence[MatchContext]) -> MatchColumns | None:
        """The batch's matches as columns without a Python object per match, for a matcher
        whose matches bind no variables (one solution each, its count 1); ``None`` (the
        default): :meth:`match_columns` converts :meth:`match_batch`."""
        return None

    def subscription_items(self, subscription: Subscription) -> frozenset[str]:
        """The attribute items every event matching ``subscription`` carries.

        Placement keys a subscription by these items and sends an event only to
        the partitions whose items it carries, so implementations must be sound: if
        ``subscription`` matches an event, ``subscription_items(subscription) <=
        event_items(context)``. The default (no items) is always sound: such subscriptions
        go to the partitions every event reaches.

        Raises:
            SubscriptionError: the subscription text is invalid.
        """
        return frozenset()

    def event_items(self, context: MatchContext) -> frozenset[str]:
        """The attribute items the event of ``context`` carries (see
        :meth:`subscription_items`)."""
        return frozenset()

    def observe(self, event: Event, matches: Sequence[Match]) -> list[Match]:
        """See the other matchers' matches for ``event`` and return derived matches.

        Composite detection overrides this (a match of a primitive subscription is an
        occurrence); the default derives nothing.
        """
        return []

    def state(self) -> dict[str, object] | None:
        """Detection state to persist between events (JSON-serialisable), or ``None``.

        Stateless matchers (semantic, content, symmetric) return ``None``; the composite
        matcher returns its pending statuses, counts and open intervals. The broker stores it
        after each event and hands it back through :meth:`restore` after a restart.
        """
        return None

    def restore(self, state: dict[str, object]) -> None:
        """Reload what :meth:`state` returned (default: nothing to reload)."""
        return None

    def close(self) -> None:
        """Release worker processes or other resources (default: nothing)."""
        return None
