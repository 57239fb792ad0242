"""The placement report of ``semps spark place``: the mined placement against Ferry and
plain broadcast, as text, JSON and a PNG plot.

For each strategy: subscriptions per partition; partitions each event is sent to
(replication); matching work per partition, counted as the subscription-event pairs a
partition examines (the events it receives times the subscriptions it holds). With events,
the mined placement also gets its delivery plan (its step 4): per event and partition,
the matched subscribers are served directly when at most ``D`` of them, else through
``K = D`` group leaders; the report counts the messages partitions send.

- **mined**: :class:`~semps.spark.placement.Placement` (frequent N-itemsets, virtual ones).
- **ferry**: each subscription hashed by one random attribute item; events go everywhere.
- **broadcast**: subscriptions spread evenly; events go everywhere.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from semps.event import Event
from semps.matcher.values import Subscription
from semps.ontology.expansion import Expansion
from semps.spark.placement import Placement, delivery_plan, place_all, stable_hash

if TYPE_CHECKING:
    from pyspark import RDD


@dataclass
class Strategy:
    """One strategy's figures."""

    name: str
    subscriptions: list[int]  # per partition
    replication: list[int] = field(default_factory=list)  # partitions per event
    work: list[int] = field(default_factory=list)  # pairs examined per partition

    def summary(self) -> dict[str, float]:
        subs = self.subscriptions
        out = {
            "max_subscriptions": float(max(subs)),
            "mean_subscriptions": statistics.fmean(subs),
            "imbalance": max(subs) / max(1e-9, statistics.fmean(subs)),
        }
        if self.replication:
            out["mean_replication"] = statistics.fmean(self.replication)
            out["total_work"] = float(sum(self.work))
            out["max_work"] = float(max(self.work))
        return out


@dataclass
class PlacementReport:
    """The figures of one ``semps spark place`` run."""

    placement: Placement
    strategies: list[Strategy]
    events: int
    delivery: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """The report as JSON-ready data."""
        p = self.placement
        return {
            "n": p.n,
            "partitions": p.partitions,
            "frequent_itemsets": len(p.itemsets),
            "virtual_itemsets": len(p.virtual),
            "spread_itemsets": len(p.spread),
            "events": self.events,
            "delivery": self.delivery,
            "strategies": {
                s.name: {
                    "subscriptions_per_partition": s.subscriptions,
                    "work_per_partition": s.work,
                    **s.summary(),
                }
                for s in self.strategies
            },
        }

    def text(self) -> str:
        """A human-readable report."""
        p = self.placement
        lines = [
            f"placement: N = {p.n}, {len(p.itemsets)} frequent N-itemsets, "
            f"{len(p.virtual)} virtual, {len(p.spread)} spread, {p.partitions} partitions",
        ]
        top = sorted(p.itemsets.items(), key=lambda kv: -kv[1])[:5]
        for itemset, support in top:
            lines.append(f"  itemset {' + '.join(_short(i) for i in itemset)}: support {support}")
        lines.append("")
        header = f"{'strategy':<10} {'subs/partition (min-max)':>25} {'imbalance':>9}"
        if self.events:
            header += f" {'replicas/event':>14} {'pairs examined':>15} {'max/partition':>14}"
        lines.append(header)
        for s in self.strategies:
            summary = s.summary()
            row = (
                f"{s.name:<10} {min(s.subscriptions):>12} - {max(s.subscriptions):<10}"
                f" {summary['imbalance']:>9.2f}"
            )
            if self.events:
                row += (
                    f" {summary['mean_replication']:>14.2f} {int(summary['total_work']):>15,}"
                    f" {int(summary['max_work']):>14,}"
                )
            lines.append(row)
        if self.delivery:
            d = self.delivery
            lines.append(
                f"\ndelivery (D = {d['degree']}): {d['direct']} direct sends, "
                f"{d['grouped']} grouped events via {d['leaders']} leaders "
                f"({d['relayed']} relayed by leaders); {d['messages']} messages from partitions"
            )
        return "\n".join(lines)

    def plot(self, path: Path) -> None:
        """Draw subscriptions and matching work per partition for each strategy."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = 2 if self.events else 1
        fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
        width = 0.8 / len(self.strategies)
        parts = range(self.placement.partitions)
        for k, s in enumerate(self.strategies):
            xs = [x + k * width for x in parts]
            axes[0][0].bar(xs, s.subscriptions, width, label=s.name)
            if self.events:
                axes[0][1].bar(xs, s.work, width, label=s.name)
        axes[0][0].set(title="subscriptions per partition", xlabel="partition")
        axes[0][0].legend()
        if self.events:
            axes[0][1].set(title="pairs examined per partition", xlabel="partition")
            axes[0][1].legend()
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _short(iri: str) -> str:
    return iri.rstrip(">").rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def ferry(items: Sequence[frozenset[str]], partitions: int, seed: int = 0) -> list[int]:
    """Ferry: hash one randomly chosen attribute item of each subscription."""
    rng = random.Random(seed)
    out = []
    for its in items:
        key = rng.choice(sorted(its)) if its else ""
        out.append(stable_hash(key) % partitions)
    return out


def placement_report(
    placement: Placement,
    subscriptions: Sequence[Subscription],
    events: RDD[Event] | None,
    expansion: Expansion,
    *,
    forwarding_degree: int = 8,
    seed: int = 0,
    delivery: bool = True,
    items: Sequence[frozenset[str]] | None = None,
) -> PlacementReport:
    """Compare the mined placement with Ferry and broadcast on ``subscriptions`` (and on the
    routing of ``events``, when given; with ``delivery``, the events are also matched to
    plan their delivery). ``items`` are the subscriptions' items, if already computed."""
    from semps.spark.bulk import match_events
    from semps.spark.placed import subscription_items

    if items is None:
        items = subscription_items(subscriptions)
    n = placement.partitions
    where = {
        "mined": place_all(placement, items, seed=seed),
        "ferry": ferry(items, n, seed),
        "broadcast": [i % n for i in range(len(subscriptions))],
    }
    strategies = []
    for name, parts in where.items():
        count = Counter(parts)
        strategies.append(Strategy(name, [count.get(k, 0) for k in range(n)]))
    report = PlacementReport(placement, strategies, 0)
    if events is None:
        return report
    kinds = sorted({s.kind for s in subscriptions})
    routes = events.map(lambda e: _route(e, placement, kinds, expansion)).collect()
    report.events = len(routes)
    for s in strategies:
        if s.name == "mined":
            s.replication = [len(r) for _, r in routes]
            received = Counter(part for _, r in routes for part in r)
        else:
            s.replication = [n] * len(routes)
            received = Counter({k: len(routes) for k in range(n)})
        s.work = [received.get(k, 0) * s.subscriptions[k] for k in range(n)]
    if not delivery:
        return report
    matched = match_events(
        events,
        subscriptions,
        expansion,
        placement=placement,
        seed=seed,
        validate=False,
        items=items,
    )
    report.delivery = _delivery(matched.collect(), subscriptions, where["mined"], forwarding_degree)
    return report


def _route(
    event: Event, placement: Placement, kinds: list[str], expansion: Expansion
) -> tuple[str, list[int]]:
    from semps.spark.placed import event_items

    return event.id, sorted(placement.route(event_items(event, kinds, expansion)))


def _delivery(
    results: list[tuple[str, dict[str, int]]],
    subscriptions: Sequence[Subscription],
    where: list[int],
    degree: int,
) -> dict[str, int]:
    part_of = {s.id: p for s, p in zip(subscriptions, where, strict=True)}
    stats = Counter(degree=degree)
    for _event, counts in results:
        per_part: dict[int, list[str]] = {}
        for sid in sorted(counts):
            per_part.setdefault(part_of[sid], []).append(sid)
        for subscribers in per_part.values():
            plan = delivery_plan(subscribers, degree)
            stats["messages"] += len(plan)
            relayed = sum(len(relays) for _, relays in plan)
            if relayed:
                stats["grouped"] += 1
                stats["leaders"] += len(plan)
                stats["relayed"] += relayed
            else:
                stats["direct"] += len(plan)
    for key in ("direct", "grouped", "leaders", "relayed", "messages"):
        stats.setdefault(key, 0)
    return dict(stats)
