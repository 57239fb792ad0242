"""Subscription placement mined from the subscription history.

1. Mine frequent itemsets over the subscriptions' attribute sets (:func:`mine_placement`,
   with Spark's FPGrowth). ``N`` is the itemset size with the most frequent itemsets; the
   frequent N-itemsets with their supports form the *N-itemset set*; ``M`` random infrequent
   N-itemsets are the *virtual* ones.
2. A subscription goes to the partition keyed by the hash of its chosen N-itemset's
   attributes in lexicographic order: the frequent N-itemset it contains, the least
   supported one if several (ties broken at random), a random virtual one if none.
3. An event goes to every partition whose N-itemset its attributes contain, plus every
   virtual one.
4. An overloaded partition's itemsets are spread over several keys: the hashes of the
   permutations of their attributes (for ``N = 1``, which has one permutation, of salted
   copies); a subscription takes one of the keys at random, an event containing the itemset
   goes to all of them.

Placement is sound whenever the matcher's items are (:meth:`Matcher.subscription_items`):
a subscription only matches events that carry its items, hence its chosen itemset, hence
reach its partition. The mining needs Spark; everything else here is plain Python, so the
driver, the workers and the tests share one implementation.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from semps.errors import SparkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Itemset = tuple[str, ...]


def stable_hash(key: str) -> int:
    """A hash that is the same in every process (Python's ``hash`` of ``str`` is salted)."""
    return zlib.crc32(key.encode("utf-8"))


def _key(items: Sequence[str]) -> str:
    return "\x1f".join(items)


@dataclass(frozen=True)
class Placement:
    """Where subscriptions live and where events go (see the module docstring).

    Attributes:
        n: the itemset size N.
        partitions: the number of partitions (the seed's event brokers).
        itemsets: the frequent N-itemsets (sorted tuples) -> support (transactions).
        virtual: the virtual N-itemsets.
        spread: itemset -> number of keys it is spread over (only overloaded ones).
    """

    n: int
    partitions: int
    itemsets: Mapping[Itemset, int]
    virtual: tuple[Itemset, ...] = ()
    spread: Mapping[Itemset, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.partitions < 1:
            msg = f"a placement needs at least one partition, not {self.partitions}"
            raise ValueError(msg)
        if self.n < 1:
            msg = f"the itemset size N must be at least 1, not {self.n}"
            raise ValueError(msg)
        for itemset in [*self.itemsets, *self.virtual]:
            if len(itemset) != self.n or list(itemset) != sorted(itemset):
                msg = f"itemset {itemset} is not a sorted {self.n}-itemset"
                raise ValueError(msg)
        object.__setattr__(self, "itemsets", MappingProxyType(dict(self.itemsets)))
        object.__setattr__(self, "spread", MappingProxyType(dict(self.spread)))

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (
            Placement,
            (self.n, self.partitions, dict(self.itemsets), self.virtual, dict(self.spread)),
        )

    # -- keys ------------------------------------------------------------------------------

    def keys(self, itemset: Itemset) -> tuple[int, ...]:
        """The partitions an itemset is stored on: the hash of its sorted attributes, or of
        each of its permutations (then salted copies) when it is spread."""
        count = self.spread.get(itemset, 1)
        if count == 1:
            return (stable_hash(_key(itemset)) % self.partitions,)
        orders = itertools.islice(itertools.permutations(itemset), count)
        names = [_key(order) for order in orders]
        salt = 1
        while len(names) < count:
            names.append(_key(itemset) + f"\x1e{salt}")
            salt += 1
        return tuple(dict.fromkeys(stable_hash(name) % self.partitions for name in names))

    # -- subscriptions ---------------------------------------------------------------------

    def contained(self, items: frozenset[str]) -> list[Itemset]:
        """The frequent N-itemsets contained in ``items``."""
        if len(items) < self.n:
            return []
        if math.comb(len(items), self.n) <= len(self.itemsets):
            combos = itertools.combinations(sorted(items), self.n)
            return [c for c in combos if c in self.itemsets]
        return [s for s in self.itemsets if items.issuperset(s)]

    def choose(self, items: frozenset[str], rng: random.Random) -> Itemset | None:
        """The N-itemset a subscription with ``items`` is placed by: the least-supported
        frequent one it contains (random tie), else a random virtual one (``None`` when the
        placement has no virtual itemsets: the subscription then goes to partition 0, which
        every event reaches)."""
        found = self.contained(items)
        if found:
            least = min(self.itemsets[s] for s in found)
            return rng.choice(sorted(s for s in found if self.itemsets[s] == least))
        return rng.choice(self.virtual) if self.virtual else None

    def place(self, items: frozenset[str], rng: random.Random) -> int:
        """The partition of a subscription with ``items``."""
        chosen = self.choose(items, rng)
        if chosen is None:
            return 0
        return rng.choice(self.keys(chosen))

    # -- events ----------------------------------------------------------------------------

    def route(self, items: frozenset[str]) -> frozenset[int]:
        """Every partition an event with ``items`` must reach."""
        targets: set[int] = set()
        for itemset in self.contained(items):
            targets.update(self.keys(itemset))
        for itemset in self.virtual:
            targets.update(self.keys(itemset))
        if not self.virtual:
            targets.add(0)
        return frozenset(targets)


def balance(
    placement: Placement,
    subscription_items: Sequence[frozenset[str]],
    *,
    overload: float = 2.0,
    seed: int = 0,
) -> Placement:
    """Spread the itemsets of overloaded partitions (step 5 of the mined placement).

    A partition is overloaded when it holds more than ``overload`` times the mean number of
    subscriptions; each itemset placed on it is then spread over as many keys as the
    partition's load is a multiple of the mean (at least two).
    """
    rng = random.Random(seed)
    chosen = [placement.choose(items, rng) for items in subscription_items]
    per_itemset = Counter(c for c in chosen if c is not None)
    load = Counter(placement.keys(c)[0] if c is not None else 0 for c in chosen)
    mean = max(1.0, len(chosen) / placement.partitions)
    spread = dict(placement.spread)
    for itemset in per_itemset:
        part_load = load[placement.keys(itemset)[0]]
        if part_load > overload * mean:
            spread[itemset] = min(placement.partitions, max(2, math.ceil(part_load / mean)))
    return Placement(
        placement.n, placement.partitions, placement.itemsets, placement.virtual, spread
    )


def place_all(
    placement: Placement, subscription_items: Sequence[frozenset[str]], *, seed: int = 0
) -> list[int]:
    """The partition of each subscription (deterministic for a given seed)."""
    rng = random.Random(seed)
    return [placement.place(items, rng) for items in subscription_items]


def forwarding_degree(upload_bytes_per_s: float, event_bytes: int) -> int:
    """D, how many copies of an event a node sends itself: its upload bandwidth over the
    event size (at least 1).

    Example:
        >>> forwarding_degree(1_000_000, 40_000)
        25
    """
    return max(1, int(upload_bytes_per_s // max(1, event_bytes)))


def delivery_plan(subscribers: Sequence[str], degree: int) -> list[tuple[str, list[str]]]:
    """How a node forwards one event (step 4 of the placement): ``(recipient, relays)`` pairs.

    With at most ``degree`` subscribers each gets the event directly (no relays). Otherwise
    they form ``K = degree`` groups; the node sends to each group's leader (its first
    member), which relays to the rest of its group.

    Example:
        >>> delivery_plan(["a", "b"], 3)
        [('a', []), ('b', [])]
        >>> delivery_plan(["a", "b", "c", "d", "e"], 2)
        [('a', ['c', 'e']), ('b', ['d'])]
    """
    if degree < 1:
        msg = f"the forwarding degree must be at least 1, not {degree}"
        raise ValueError(msg)
    if len(subscribers) <= degree:
        return [(s, []) for s in subscribers]
    groups = [list(subscribers[k::degree]) for k in range(degree)]
    return [(group[0], group[1:]) for group in groups]


def choose_n(sizes: Mapping[int, int]) -> int:
    """N: the itemset size with the most frequent itemsets (the smaller size on a tie, as it
    leaves fewer subscriptions to the virtual itemsets).

    Example:
        >>> choose_n({1: 12, 2: 30, 3: 30})
        2
    """
    if not sizes:
        msg = "no frequent itemsets: lower the minimum support"
        raise SparkError(msg)
    return min(sizes, key=lambda size: (-sizes[size], size))


def virtual_itemsets(
    universe: Iterable[str], n: int, frequent: Mapping[Itemset, int], m: int, seed: int = 0
) -> tuple[Itemset, ...]:
    """``m`` random infrequent N-itemsets over the attribute ``universe`` (fewer when the
    universe has fewer)."""
    items = sorted(set(universe))
    rng = random.Random(seed)
    if len(items) < n or m <= 0:
        return ()
    total = math.comb(len(items), n)
    wanted = min(m, total - len(frequent))
    found: set[Itemset] = set()
    tries = 0
    while len(found) < wanted and tries < 50 * max(1, wanted):
        tries += 1
        candidate = tuple(sorted(rng.sample(items, n)))
        if candidate not in frequent:
            found.add(candidate)
    return tuple(sorted(found))


def mine_placement(
    spark: SparkSession,
    transactions: Sequence[Iterable[str]],
    *,
    partitions: int,
    min_support: float = 0.05,
    virtual: int | None = None,
    overload: float = 2.0,
    seed: int = 0,
    sample: int | None = 10_000,
) -> Placement:
    """Mine the subscription history with FPGrowth and build a balanced placement.

    Args:
        spark: the session FPGrowth runs on.
        transactions: each subscription's attribute items (the history); repeated items
            count once (FPGrowth refuses them, so they are removed first).
        partitions: the number of partitions to place on.
        min_support: FPGrowth's minimum support (a fraction of the transactions).
        virtual: M, the number of virtual N-itemsets (default: a quarter of the partitions,
            at least one).
        overload: spread a partition's itemsets above this multiple of the mean load.
        seed: seeds every random choice (virtual itemsets, ties, spreading).
        sample: mine a random sample of at most this many transactions (``None``: all).
            Supports are fractions, so a sample estimates them; which itemsets are frequent
            never makes a placement unsound (events are routed by the same itemsets), and
            the placement and balancing still take every subscription. At 100k content
            subscriptions, mining them all cost the JVM about 12 CPU seconds.

    Raises:
        SparkError: no transaction, or no frequent itemset at this support.
    """
    from pyspark.ml.fpm import FPGrowth
    from pyspark.sql import functions as sf

    history = [frozenset(t) for t in transactions]
    mined = history
    if sample is not None and len(history) > sample:
        mined = random.Random(seed).sample(history, sample)
    rows = [(sorted(t),) for t in mined if t]
    if not rows:
        msg = "no subscription has attribute items to mine"
        raise SparkError(msg)
    frame = spark.createDataFrame(rows, "items array<string>")
    frame = frame.select(sf.array_distinct("items").alias("items"))  # FPGrowth refuses dups
    model = FPGrowth(itemsCol="items", minSupport=min_support).fit(frame)
    found = {tuple(sorted(r["items"])): int(r["freq"]) for r in model.freqItemsets.collect()}
    n = choose_n(Counter(len(k) for k in found))
    itemsets = {k: v for k, v in found.items() if len(k) == n}
    m = virtual if virtual is not None else max(1, partitions // 4)
    universe = {item for t in history for item in t}
    placement = Placement(n, partitions, itemsets, virtual_itemsets(universe, n, found, m, seed))
    return balance(placement, history, overload=overload, seed=seed)


@dataclass(frozen=True)
class PlacementOptions:
    """How to mine a placement (``--placement mined`` of ``semps spark match`` and
    ``stream``; the arguments of :func:`mine_placement`)."""

    partitions: int = 8
    min_support: float = 0.05
    virtual: int | None = None
    overload: float = 2.0
    seed: int = 0
    sample: int | None = 10_000

    def mine(self, spark: SparkSession, items: Sequence[Iterable[str]]) -> Placement:
        """The placement mined from the subscriptions' ``items`` with these options."""
        return mine_placement(spark, items, **dataclasses.asdict(self))  # same names


__all__ = [
    "Itemset",
    "Placement",
    "PlacementOptions",
    "balance",
    "choose_n",
    "delivery_plan",
    "forwarding_degree",
    "mine_placement",
    "place_all",
    "stable_hash",
    "virtual_itemsets",
]
