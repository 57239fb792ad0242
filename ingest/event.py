"""Moved to :mod:`semps.event` (the ground floor); this name is kept for code in flight."""

from semps.event import *  # noqa: F403
