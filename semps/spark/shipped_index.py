"""The subscriptions as Spark ships them to its Python workers, and each worker's matchers.

The driver packs every subscription, or each partition's of a placement, in a
:class:`ShippedIndex` it broadcasts; each Python worker builds the very matchers the broker
uses (merged index, counter filtering, verification) from it once (:func:`worker_matchers`).
Semantic subscriptions travel as a snapshot of their parses
(:mod:`semps.matcher.semantic.snapshot`, made by the driver, which parsed them to validate
them): a worker registers them without lexing or parsing, once per worker and set of
subscriptions (keyed by their digest, so later jobs and micro-batches over the same ones
reuse it).
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from semps.errors import SparkError
from semps.ingest.sparql import Query, parse_memo, parse_query
from semps.matcher.base import Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.semantic import SemanticMatcher
from semps.matcher.semantic.matcher import load_matcher
from semps.matcher.semantic.snapshot import snapshot_bytes, subscriptions_digest
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion

#: Subscriptions as shipped to the workers: (id, kind, text).
Shipped = tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class ShippedIndex:
    """What a worker needs to build its matchers: the subscriptions of each partition, as
    (id, kind, text), and the ontology to match under; ``token`` names one set of
    subscriptions (a job's, or one version of a stream's). With a ``snapshot`` (the bytes
    of a semantic snapshot, :func:`shipped_index`), partition 0 holds its subscriptions
    and ``parts`` is empty."""

    token: str
    parts: dict[int, Shipped]
    expansion: Expansion
    snapshot: bytes | None = None


#: Matchers built in this Python worker, by (job token, partition); workers are reused
#: between tasks (``spark.python.worker.reuse``), so each builds its index once per job.
_BUILT: dict[tuple[str, int], list[Matcher]] = {}


def worker_matchers(index: ShippedIndex, part: int) -> list[Matcher]:
    """This Python worker's matchers for ``part`` of ``index``, built once per token (older
    tokens' matchers are dropped): loaded from its snapshot, or built from the texts."""
    key = (index.token, part)
    found = _BUILT.get(key)
    if found is None:
        for stale in [k for k in _BUILT if k[0] != index.token]:
            del _BUILT[stale]
        # Building allocates millions of long-lived objects and no cycles to speak of:
        # without the cyclic GC rescanning them as they grow, it takes about a fifth less.
        collecting = gc.isenabled()
        gc.disable()
        try:
            if index.snapshot is not None and part == 0:
                name = f"the snapshot shipped as {index.token}"
                found = [load_matcher(index.snapshot, name=name)]
            else:
                found = build_matchers(
                    Subscription(i, kind, text) for i, kind, text in index.parts.get(part, ())
                )
        finally:
            if collecting:
                gc.enable()
        _BUILT[key] = found
        # The index lives as long as the worker: keep the cyclic GC from rescanning its
        # millions of objects after every few thousand allocations while matching.
        gc.collect()
        gc.freeze()
    return found


def stateless(kind: str) -> Matcher:
    """A new matcher of ``kind``, refused if it keeps detection state across events.

    Raises:
        SparkError: a stateful (composite) kind.
    """
    matcher = create_matcher(kind)
    if matcher.state() is not None:
        msg = (
            f"{kind} subscriptions keep detection state across events and cannot be "
            "matched in bulk; run them in the broker"
        )
        raise SparkError(msg)
    return matcher


def build_matchers(subscriptions: Iterable[Subscription]) -> list[Matcher]:
    """One matcher per kind, holding ``subscriptions`` (the broker's matchers, in process).

    Raises:
        SparkError: a stateful (composite) kind.
        SubscriptionError: a subscription that does not parse.
    """
    by_kind: dict[str, Matcher] = {}
    for sub in subscriptions:
        matcher = by_kind.get(sub.kind)
        if matcher is None:
            matcher = by_kind[sub.kind] = stateless(sub.kind)
        matcher.add(sub)
    return [by_kind[k] for k in sorted(by_kind)]


def shipped_index(
    subscriptions: Sequence[Subscription],
    expansion: Expansion,
    *,
    queries: dict[str, Query] | None = None,
    token: str | None = None,
    snapshot: bytes | None = None,
) -> ShippedIndex:
    """Every subscription as the one partition of an index, as the workers get it.

    Semantic subscriptions alone travel as a snapshot of their parses, made from
    ``queries`` (by text, as :func:`~semps.ingest.sparql.parse_memo` keeps them; the texts
    it lacks are parsed here and added to it), or the ``snapshot`` given (the bytes of one
    holding exactly ``subscriptions``: encoding 100k subscriptions' parses costs the driver
    2-4 s), which the workers load without parsing; its
    token is their :func:`~semps.matcher.semantic.snapshot.subscriptions_digest` unless
    ``token`` is given. Other kinds travel as texts, under ``token`` or a new one.

    Raises:
        SubscriptionError: a semantic text that does not parse.
    """
    if subscriptions and all(s.kind == SemanticMatcher.kind for s in subscriptions):
        data = snapshot if snapshot is not None else _snapshot(subscriptions, queries)
        return ShippedIndex(token or subscriptions_digest(subscriptions)[:32], {}, expansion, data)
    shipped = {0: tuple((s.id, s.kind, s.text) for s in subscriptions)}
    return ShippedIndex(token or uuid.uuid4().hex, shipped, expansion)


def _snapshot(subscriptions: Sequence[Subscription], queries: dict[str, Query] | None) -> bytes:
    parses = {} if queries is None else queries
    limits = SemanticMatcher.limits
    with parse_memo(parses, limits):
        for text in {s.text for s in subscriptions}:
            parse_query(text, limits=limits)  # answered by the memo when it has it
    return snapshot_bytes(subscriptions, parses, limits)


__all__ = [
    "Shipped",
    "ShippedIndex",
    "build_matchers",
    "shipped_index",
    "stateless",
    "worker_matchers",
]
