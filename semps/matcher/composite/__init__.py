"""Composite event detection: the language, the shared event tree, the matcher."""

from semps.matcher.composite.language import Definition, parse_definitions
from semps.matcher.composite.matcher import CompositeMatcher
from semps.matcher.composite.tree import EventTree

__all__ = ["CompositeMatcher", "Definition", "EventTree", "parse_definitions"]
