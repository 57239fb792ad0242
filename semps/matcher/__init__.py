"""Matchers: the contract, the plugin registry and the built-in matchers.

- :class:`Matcher` (``semps.matcher.base``) states the contract once.
- :func:`get_matcher_class` / :func:`available` (``semps.matcher.registry``) find a matcher
  by its ``kind``, importing it lazily; third parties register through the ``semps.matchers``
  entry-point group.
- Built-in kinds, each in its own subpackage: ``semantic`` (the merged index over RDF
  events), ``content`` (predicate table, REIN, HCEM), ``symmetric`` (regions) and
  ``composite`` (the event tree).
"""

from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import available, create_matcher, get_matcher_class
from semps.matcher.values import Match, Subscription

__all__ = [
    "Match",
    "MatchContext",
    "Matcher",
    "Subscription",
    "available",
    "create_matcher",
    "get_matcher_class",
]
