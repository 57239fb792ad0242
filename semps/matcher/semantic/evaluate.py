"""The algebra evaluator the verifier runs over an event (its home is
:mod:`semps.ingest.sparql.evaluate`, shared with the knowledge graph's updates)."""

from semps.ingest.sparql.evaluate import (
    CACHE_ROWS,
    Evaluator,
    OutOfBudget,
    Pairs,
    Solution,
    plan,
    term_value,
)

__all__ = ["CACHE_ROWS", "Evaluator", "OutOfBudget", "Pairs", "Solution", "plan", "term_value"]
