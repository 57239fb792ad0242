"""``/metrics``: the Prometheus text exposition of the service, and the HTTP error counts.

The broker keeps plain counters (:class:`~semps.broker.metrics.Metrics`); this module renders
them, the gauges read at scrape time (subscriptions, queue depths, open streams, dead
letters) and what only the HTTP layer sees: responses by error status and refused requests,
counted by :class:`StatusCounter` around the whole application (the plain-ASGI publishing
handler included).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from semps.broker.metrics import LATENCY_BUCKETS, Metrics

__all__ = ["REJECTED", "StatusCounter", "render"]

#: Statuses that refuse a request before any work (token, size, media type, cap).
REJECTED = frozenset({401, 403, 413, 415, 429})


class StatusCounter:
    """ASGI middleware counting HTTP responses with a status of 400 or more (an exception
    that escapes the application counts as a 500)."""

    def __init__(self, app: ASGIApp, counts: Counter[int]) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                self.counts[message["status"]] += 1
            await send(message)

        try:
            await self.app(scope, receive, counted)
        except Exception:
            self.counts[500] += 1
            raise


def render(metrics: Metrics, errors: Mapping[int, int], gauges: Mapping[str, int]) -> str:
    """The Prometheus text of the broker's counters, the HTTP errors and ``gauges``.

    Example:
        >>> text = render(Metrics(events_in=3), {404: 2}, {"open_streams": 1})
        >>> [line for line in text.splitlines() if not line.startswith("#")][:1]
        ['semps_events_in_total 3']
        >>> 'semps_http_errors_total{status="404"} 2' in text
        True
    """
    lines: list[str] = []
    for f in dataclasses.fields(metrics):
        value: Any = getattr(metrics, f.name)
        if isinstance(value, int) and not isinstance(value, bool):
            lines += _sample(f"semps_{f.name}_total", "counter", value)
    lines.append("# TYPE semps_http_errors_total counter")
    for status in sorted(errors):
        lines.append(f'semps_http_errors_total{{status="{status}"}} {errors[status]}')
    rejected = sum(n for s, n in errors.items() if s in REJECTED)
    lines += _sample("semps_requests_rejected_total", "counter", rejected)
    for name, value in gauges.items():
        lines += _sample(f"semps_{name}", "gauge", value)
    lines.append("# TYPE semps_publish_latency_seconds histogram")
    for bound, count in zip(LATENCY_BUCKETS, metrics.buckets, strict=True):
        lines.append(f'semps_publish_latency_seconds_bucket{{le="{bound}"}} {count}')
    lines += [
        f'semps_publish_latency_seconds_bucket{{le="+Inf"}} {metrics.events_in}',
        f"semps_publish_latency_seconds_sum {metrics.latency_sum:.6f}",
        f"semps_publish_latency_seconds_count {metrics.events_in}",
    ]
    return "\n".join(lines) + "\n"


def _sample(name: str, kind: str, value: int) -> list[str]:
    return [f"# TYPE {name} {kind}", f"{name} {value}"]
