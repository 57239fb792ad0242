"""Content-based matching: constraints on attribute values.

- :mod:`.constraints`, :mod:`.parse`: subscriptions (JSON and text forms) and their semantics.
- :mod:`.view`: the attribute view of an event (JSON values, ontology-expanded RDF literals).
- Algorithms, all exact with insert, update and delete: :class:`PredicateTableIndex`
  (with the interface list), :class:`ReinIndex` and :class:`HcemIndex`,
  and :class:`BruteForceIndex` (the tests' oracle).
- :class:`ContentMatcher`: the broker plugin (kind ``content``).
"""

from semps.matcher.content.brute import BruteForceIndex
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.hcem import HcemIndex
from semps.matcher.content.index import CompiledIndex, ContentIndex
from semps.matcher.content.matcher import ALGORITHMS, ContentMatcher, create_index
from semps.matcher.content.parse import parse_subscription, subscription_from_json
from semps.matcher.content.predicate_table import PredicateTable, PredicateTableIndex
from semps.matcher.content.rein import ReinIndex
from semps.matcher.content.view import attribute_view

__all__ = [
    "ALGORITHMS",
    "BruteForceIndex",
    "CompiledIndex",
    "Constraint",
    "ContentIndex",
    "ContentMatcher",
    "ContentSubscription",
    "HcemIndex",
    "PredicateTable",
    "PredicateTableIndex",
    "ReinIndex",
    "attribute_view",
    "create_index",
    "parse_subscription",
    "subscription_from_json",
]
