"""Brute force for regions: every subscription region against the publication (the oracle)."""

from __future__ import annotations

from semps.matcher.content.brute import SubscriptionsById
from semps.matcher.symmetric.region import Region, RegionSubscription, overlaps

__all__ = ["BruteForceRegions"]


class BruteForceRegions(SubscriptionsById[RegionSubscription]):
    """Subscription regions in a dict; :meth:`match` tries every one.

    Example:
        >>> index = BruteForceRegions()
        >>> index.add(RegionSubscription("s1", {"x": (0.1, 0.3), "y": (0.5, 0.5)}))
        >>> index.match({"x": (0.2, 0.4)}), index.match({"y": (0.6, 0.7)})
        (['s1'], [])
    """

    kind = "symmetric"

    def match(self, region: Region) -> list[str]:
        """Ids of the subscriptions whose region overlaps ``region``, sorted."""
        return sorted(s.id for s in self.subscriptions.values() if overlaps(s.region, region))
