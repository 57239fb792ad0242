"""semps.api (placeholder docstring; see README)."""
