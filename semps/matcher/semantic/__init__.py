"""The semantic matcher: RDF events against SPARQL-like graph patterns.

- :mod:`.compiled`: a parsed query as index patterns (node-pair keys).
- :mod:`.index`: the merged subscription graph HMProp -> HMNPN -> SC and counter filtering.
- :mod:`.plan`: the core-count-adaptive partition of verification work (PRCNum).
- :mod:`.verify`: verification with consistent bindings, types, FILTERs; solution counts
  per connected component (multiplied), an explicit stack, a work budget.
- :mod:`.fastfilter`: FILTER checks with exact fast paths for the common forms.
- :mod:`.family`: shapes differing only in constants, counted together per event.
- :mod:`._kernels`: compiled (numba) loops of counter filtering.
- :mod:`.parallel`: worker processes (forked after the index is built) that match their
  share of a batch in parallel.
"""

from semps.matcher.semantic.matcher import SemanticMatcher, match_parts

__all__ = ["SemanticMatcher", "match_parts"]
