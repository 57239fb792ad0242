"""Regions (symmetric matching): closed intervals per attribute.

A subscription region and a publication region *match* when their intervals overlap on
every attribute both name: ``[a, b]`` and ``[c, d]`` overlap unless ``c > b`` or ``d < a``.
An attribute a region leaves out is unbounded. A point is ``[v, v]``, so forward (region vs
value), reverse (value vs region) and symmetric (region vs region) matching are one test.
A region names at least one attribute.

JSON (a contract): ``{"id": "s1", "region": {"x": [0.1, 0.3], "y": [0.5, 0.5]}}``; the
broker assigns the id, so there ``id`` may be left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from semps.errors import JSONEventError, SubscriptionError
from semps.ingest.json_event import parse_region
from semps.matcher.content.parse import decode_json
from semps.matcher.values import check_subscription_id

__all__ = ["Region", "RegionSubscription", "overlaps", "parse_region_subscription"]

#: attribute -> (low, high)
Region = Mapping[str, tuple[float, float]]


def overlaps(a: Region, b: Region) -> bool:
    """Do two regions overlap on every attribute both name?

    Example:
        >>> overlaps({"x": (0.1, 0.3), "y": (0.5, 0.5)}, {"x": (0.2, 0.4)})
        True
        >>> overlaps({"x": (0.1, 0.3)}, {"x": (0.31, 0.4), "z": (0.0, 1.0)})
        False
    """
    for attr, (low, high) in a.items():
        other = b.get(attr)
        if other is not None and (other[0] > high or other[1] < low):
            return False
    return True


@dataclass(frozen=True, slots=True)
class RegionSubscription:
    """A subscription region.

    Attributes:
        id: the subscription id.
        region: attribute -> (low, high), finite, low <= high, at least one attribute.
    """

    id: str
    region: Region

    def __post_init__(self) -> None:
        check_subscription_id(self.id)
        try:
            checked = parse_region({k: list(v) for k, v in self.region.items()}, what="region")
        except JSONEventError as exc:
            raise SubscriptionError(exc.detail) from exc
        object.__setattr__(self, "region", MappingProxyType(checked))

    def to_json(self) -> dict[str, object]:
        """The JSON form."""
        return {"id": self.id, "region": {k: list(v) for k, v in self.region.items()}}


def parse_region_subscription(text: str, *, sub_id: str | None = None) -> RegionSubscription:
    """Parse the JSON form; ``sub_id`` overrides the document's ``id``.

    Raises:
        SubscriptionSyntaxError: not JSON (with line and column).
        SubscriptionError: not a region subscription.

    Example:
        >>> parse_region_subscription('{"id": "s1", "region": {"x": [0.1, 0.3]}}').region["x"]
        (0.1, 0.3)
        >>> parse_region_subscription('{"region": {"x": [0.3, 0.1]}}', sub_id="s2")
        Traceback (most recent call last):
        ...
        semps.errors.SubscriptionError: region attribute 'x' has low 0.3 > high 0.1
    """
    doc = decode_json(text)
    if not isinstance(doc, dict) or "region" not in doc:
        raise SubscriptionError('a region subscription is a JSON object with "region"')
    unknown = [k for k in doc if k not in ("id", "region")]
    if unknown:
        raise SubscriptionError(f"unknown key {unknown[0]!r} (expected id, region)")
    if sub_id is None:
        sub_id = doc.get("id")
        if not isinstance(sub_id, str) or not sub_id:
            raise SubscriptionError('a region subscription needs a non-empty string "id"')
    try:
        region = parse_region(doc["region"], what="region")
    except JSONEventError as exc:
        raise SubscriptionError(exc.detail) from exc
    return RegionSubscription(sub_id, region)
