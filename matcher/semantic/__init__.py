"""The semantic matcher (seed 001): RDF events against SPARQL-like graph patterns.

- :mod:`.compiled`: a parsed query as index patterns (node-pair keys).
- :mod:`.index`: the merged subscription graph HMProp -> HMNPN -> SC and counter filtering.
- :mod:`.plan`: the core-count-adaptive partition of verification work (PRCNum).
- :mod:`.verify`: verification with consistent bindings, types, FILTERs; solution counts.
- :mod:`.parallel`: worker processes that verify their share in parallel.
"""

from semps.matcher.semantic.matcher import SemanticMatcher, match_parts

__all__ = ["SemanticMatcher", "match_parts"]
