"""The broker's counters and its publish-latency histogram: plain numbers, kept across
restarts in the store (:meth:`~semps.broker.contracts.CounterStore.save_counters`) and
rendered at ``/metrics`` by :mod:`semps.api.metrics`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LATENCY_BUCKETS", "Metrics"]

#: Upper bounds (seconds) of the publish-latency histogram buckets.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class Metrics:
    """Counters and the publish-latency histogram (plain numbers; :mod:`semps.api.metrics`
    renders them at /metrics)."""

    events_in: int = 0
    events_refused: int = 0
    matches: int = 0
    notifications_out: int = 0
    suspensions: int = 0
    webhook_failures: int = 0
    webhooks_dead_lettered: int = 0
    #: The MQTT bridge (semps serve --mqtt): messages read (of which sent again by the MQTT
    #: broker, DUP set: each may repeat an event, QoS 1's at least once), refused to the
    #: dead-letter topic, notifications published and acknowledged.
    mqtt_messages_in: int = 0
    mqtt_redelivered: int = 0
    mqtt_dead_lettered: int = 0
    mqtt_notifications_out: int = 0
    latency_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BUCKETS))

    def snapshot(self) -> dict[str, int]:
        """The counters as whole numbers, to keep them across a restart."""
        values = {k: v for k, v in vars(self).items() if type(v) is int}
        values |= {f"bucket_{i}": n for i, n in enumerate(self.buckets)}
        return values | {"latency_sum_us": round(self.latency_sum * 1e6)}

    def restore(self, values: dict[str, int]) -> None:
        """Take back the counters :meth:`snapshot` gave."""
        for name, value in values.items():
            if name.startswith("bucket_") and int(name[7:]) < len(self.buckets):
                self.buckets[int(name[7:])] = value
            elif name == "latency_sum_us":
                self.latency_sum = value / 1e6
            elif type(getattr(self, name, None)) is int:
                setattr(self, name, value)

    def observe(self, seconds: float) -> None:
        self.latency_sum += seconds
        for i, bound in enumerate(LATENCY_BUCKETS):
            if seconds <= bound:
                self.buckets[i] += 1
