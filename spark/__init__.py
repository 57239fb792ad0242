"""semps.spark (placeholder docstring; see README)."""
