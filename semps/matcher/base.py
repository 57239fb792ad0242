"""The matcher contract shared by every matching plugin.

A matcher holds an index of subscriptions of one ``kind`` and answers, for an event, which
of them match. The broker, the CLI and the Spark jobs all drive matchers through this one
interface; no caller re-implements matching.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from semps._types import Triple
from semps.errors import NotSupported
from semps.event import Event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.explanation import Explanation
from semps.matcher.partab import EventParts, to_partab
from semps.matcher.results import MatchColumns, result_line
from semps.matcher.values import ChangeMatch, Match, Resolver, Subscription, Verdict
from semps.ontology.expansion import Expansion

if TYPE_CHECKING:
    from semps.graph.change import GraphChange
    from semps.graph.view import GraphView

# The contract's values live in semps.matcher.values.
__all__ = ["ChangeMatch", "Match", "MatchContext", "Matcher", "Resolver", "Subscription", "Verdict"]


class MatchContext:
    """What a matcher may read besides the event: the ontology snapshot, the knowledge graph
    (a read-only view of its closure at one version, ``None`` without one), and derived
    views computed at most once per event whichever matchers ask for them."""

    def __init__(
        self,
        event: Event,
        expansion: Expansion | None = None,
        *,
        watch: Callable[[str], None] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        graph: GraphView | None = None,
    ) -> None:
        self.event = event
        self.expansion = expansion if expansion is not None else Expansion()
        self.limits = limits
        #: The knowledge graph the event is matched against (its answers: what the event
        #: adds to the graph's); ``None`` or an empty graph: the event alone.
        self.graph = graph
        #: Matchers call ``watch(subscription id)`` before work whose cost depends on that
        #: subscription (verification), so a watchdog can tell who overran; may be ``None``.
        self.watch = watch

    @cached_property
    def parts(self) -> EventParts:
        """The event's PartA/PartB under the ontology."""
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
        - ``match_batch``, ``verdict_batch``, ``count_batch`` and ``match_columns`` give,
          per context, what ``match`` gives.
        - Matchers are not thread-safe; the broker serialises calls.
        - A matcher whose answers depend on earlier events (``stateful = True``: composite
          detection) sees every event in order, in the broker's own process; stateless
          matchers may run in several worker processes, each with its own index.
        - A matcher may call ``context.watch(subscription id)`` before verifying a
          subscription, so an overrun can be blamed on it.
        - A matcher that refers to other subscriptions (composite definitions name them)
          gets the broker's lookup through :meth:`use_resolver`; the others ignore it.
        - With a knowledge graph (``context.graph``, not empty), an event's matches are the
          solutions it adds to each subscription's answers over the graph; a matcher that
          does not read graphs (content, symmetric) ignores it. :meth:`change_matches`
          gives a graph change's notifications (added and removed solutions); its default
          is none.
    """

    #: The registry name of this matcher.
    kind: ClassVar[str]
    #: True when answers depend on earlier events (see the contract above).
    stateful: ClassVar[bool] = False
    #: True when the matcher reads the knowledge graph: its answers to an event are what
    #: the event adds over the graph, and :meth:`change_matches` gives a change's (so a
    #: retained event's notifications from it are its change's). False: it matches the
    #: event alone and its ``change_matches`` is the default (none).
    reads_graph: ClassVar[bool] = False
    #: True when the matcher saves what it built (:meth:`save_state`) for the next start.
    saves_state: ClassVar[bool] = False
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

    def persisted(
        self,
        path: Path,
        subscriptions: Sequence[Subscription],
        *,
        write: bool = True,
        adding: int | None = None,
    ) -> AbstractContextManager[None]:
        """A block in which :meth:`add` may reuse what the matcher persisted at ``path``
        for ``subscriptions`` (the semantic matcher keeps their parses there), rewriting it
        on leaving when it did not hold them all, if ``write`` (several processes loading
        the same subscriptions need one writer). ``adding``: how many of them the block
        adds (``None``: all; a start from a saved state adds only what changed since, and
        the matcher may then skip reading the file). The file is a cache: a missing,
        damaged or stale one must change nothing of what :meth:`add` registers, and one
        that cannot be written is left as it is. The default persists nothing."""
        del path, subscriptions, write, adding
        return nullcontext()

    def restore_state(self, path: Path, key: bytes) -> Mapping[str, str] | None:
        """Take, into this matcher while it holds nothing, the state :meth:`save_state`
        left at ``path`` under ``key``; the subscriptions it holds (``{id: text}``, read
        before the matcher changes), which the caller brings up to date (removing those
        gone or changed, adding the others). The file is a cache: a missing one gives
        ``None``; one that is damaged, altered, or written by other code or under other
        parse limits raises MatcherError saying which; either way the matcher is left as
        it was. The default restores nothing.

        Raises:
            MatcherError: the file is there but unusable.
        """
        del path, key
        return None

    def save_state(
        self,
        path: Path,
        key: bytes,
        keep_going: Callable[[], bool] = lambda: True,
        persisted: Path | None = None,
    ) -> bool:
        """Save what the matcher built to ``path`` under ``key`` for :meth:`restore_state`
        (one writer at a time; ``keep_going`` is asked while it writes, and False
        abandons the file), and tidy what it keeps at ``persisted`` (:meth:`persisted`'s
        file: a start from the state no longer reads it whole); whether it saved anything.
        The default saves nothing.

        Raises:
            OSError: the file could not be written.
        """
        del path, key, keep_going, persisted
        return False

    def extending(self, path: Path) -> AbstractContextManager[Callable[[], object]]:
        """A block in which :meth:`add` registers new subscriptions beside those
        persisted at ``path`` (:meth:`persisted`); it gives a function that adds what the
        matcher keeps of them to what is persisted there, without rewriting it (the
        semantic matcher: their parses, as a part beside its snapshot), for the caller to
        call once, after the block, when it has time (or never: it is a cache). The
        default keeps nothing."""
        del path
        return nullcontext(_keep_nothing)

    def check(self, subscription: Subscription) -> None:
        """Raise what :meth:`add` would raise for ``subscription``, leaving the index as
        it was: the broker's workers check a group's subscriptions apart (each a share),
        answer, and index them after. The default adds and removes it (a worker handles
        one request at a time: no event sees it)."""
        self.add(subscription)
        self.remove(subscription.id)

    def warm(self) -> None:
        """Load (or compile) the matcher's compiled kernels now, so that no event's time
        budget pays for it. The default does nothing; a matcher whose kernels a made-up
        event may not reach overrides this."""
        return None

    def idle(self) -> None:
        """Nothing waits: build now what the next event would otherwise build inside its
        own time (an index's rebuild deferred after a bulk registration). The default
        does nothing."""
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

    def verdict_batch(self, contexts: Sequence[MatchContext]) -> list[list[tuple[str, Verdict]]]:
        """Per context, its event's matches as ``(subscription id, verdict)``, sorted by id:
        :meth:`match_batch` without the ids in each answer, so that subscriptions sharing
        one :class:`~semps.matcher.values.Verdict` object (the semantic matcher's, for the
        subscriptions of one shape) are rendered once (the broker's workers render
        notifications from these). The default converts :meth:`match_batch`'s matches,
        one verdict each; ``verdict.match(id, event id)`` must give back the match."""
        return [
            [(m.subscription, Verdict.of(m)) for m in matches]
            for matches in self.match_batch(contexts)
        ]

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
        columns = self.unbound_columns(contexts)
        if columns is None:
            return MatchColumns.from_matches(self.match_batch(contexts), solutions=solutions)
        return replace(columns, solutions=((),) * len(columns)) if solutions else columns

    def result_lines(self, contexts: Sequence[MatchContext]) -> list[str]:
        """:meth:`count_batch` as output lines, one per event
        (:func:`~semps.matcher.results.result_line`): what ``semps match`` and
        ``semps spark match`` write. Matchers with a compiled writer override this; the
        lines must equal the default's."""
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

    def change_matches(
        self,
        change: GraphChange,
        graph: GraphView,
        *,
        watch: Callable[[str], None] | None = None,
    ) -> list[ChangeMatch]:
        """The subscriptions whose answers a change of the knowledge graph changes, sorted
        by id: the solutions it adds and removes. ``graph`` is the view *before* the change
        (the caller applies the change to it afterwards). The default (a matcher that does
        not read graphs): none."""
        del change, graph, watch
        return []

    def explain(
        self, subscription: Subscription, context: MatchContext, axioms: Sequence[Triple] = ()
    ) -> Explanation:
        """Why ``subscription`` (of this matcher's kind, registered or not) matches
        ``context.event``, or why not (:mod:`semps.matcher.explanation`); ``axioms``: the
        ontology's triples, to name those behind each inference. The verdict and the
        solution count must be :meth:`match`'s.

        Raises:
            NotSupported: the matcher does not explain (the default).
            SubscriptionError: the subscription text is invalid.
        """
        del subscription, context, axioms
        msg = f"the {self.kind} matcher does not explain its matches"
        raise NotSupported(msg)

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


def _keep_nothing() -> None:
    """What :meth:`Matcher.extending` gives by default: nothing to write."""
