"""semps.broker (placeholder docstring; see README)."""
