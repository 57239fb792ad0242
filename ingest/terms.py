"""Moved to :mod:`semps.terms` (the ground floor); this name is kept for code in flight."""

from semps.terms import *  # noqa: F403
