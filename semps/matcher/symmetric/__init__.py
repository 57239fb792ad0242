"""Symmetric (region) matching: subscription regions against publication regions.

- :mod:`.region`: regions, the overlap rule and the JSON form.
- :class:`RegionIndex`: the predicate table with cross comparison for single publications,
  a sort-based sweep for batches; :class:`BruteForceRegions` is the tests' oracle.
- :class:`SymmetricMatcher`: the broker plugin (kind ``symmetric``).
"""

from semps.matcher.symmetric.brute import BruteForceRegions
from semps.matcher.symmetric.index import RegionIndex
from semps.matcher.symmetric.matcher import SymmetricMatcher
from semps.matcher.symmetric.region import (
    Region,
    RegionSubscription,
    overlaps,
    parse_region_subscription,
)

__all__ = [
    "BruteForceRegions",
    "Region",
    "RegionIndex",
    "RegionSubscription",
    "SymmetricMatcher",
    "overlaps",
    "parse_region_subscription",
]
