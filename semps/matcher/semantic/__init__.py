"""The semantic matcher: RDF events against SPARQL-like graph patterns.

- :mod:`.codes`: the constants the Python modules and the compiled kernels share.
- :mod:`.compiled`: a subscription compiled for the index (patterns as node-pair keys,
  components and their join plans); :mod:`.compile_query` makes one from a parsed query.
- :mod:`.pairs`: one event's node pairs, with the lookups and binding tables matching reads.
- :mod:`.containers`: the merged subscription graph HMProp -> HMNPN -> SC, and what an
  event's pairs hit.
- :mod:`.index`: the subscription index and counter filtering (its shapes' slots in
  :mod:`.shapeslots`, their families in :mod:`.shapefamilies`).
- :mod:`.plan`: the core-count-adaptive partition of verification work (PRCNum).
- :mod:`.verify`: verification with consistent bindings, types, FILTERs; solution counts
  per connected component (multiplied), an explicit stack, a work budget.
- :mod:`.fastfilter`: FILTER checks with exact fast paths for the common forms.
- :mod:`.family`: shapes differing only in constants, counted together per event
  (:mod:`.familytables`: their arrays; :mod:`.familyjoin`: their compiled pass).
- :mod:`.verdicts`: an event's verdicts in one process, one per shape.
- :mod:`._kernels`: compiled (numba) loops of counter filtering.
- :mod:`.parallel`: worker processes (forked after the index is built) that match their
  share of a batch in parallel.
"""

from semps.matcher.semantic.matcher import SemanticMatcher
from semps.matcher.semantic.verdicts import as_matches, verdicts_of

__all__ = ["SemanticMatcher", "as_matches", "verdicts_of"]
