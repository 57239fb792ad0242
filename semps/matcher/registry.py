"""The one explicit matcher registry: name -> class, imported lazily on first use.

Built-in matchers are listed here by kind (``semps.matcher.<kind>:<Kind>Matcher``); third
parties add theirs through the ``semps.matchers`` entry-point group
(``kind = "package.module:Class"``). Nothing registers itself on import, so there is no
hidden global state to reset in tests.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from importlib.metadata import entry_points
from typing import Any

from semps.errors import MatcherError, PluginNotFound
from semps.matcher.base import Matcher

ENTRY_POINT_GROUP = "semps.matchers"

#: The built-in kinds: kind ``k`` is the class ``KMatcher`` of the package ``semps.matcher.k``.
_BUILTIN: dict[str, str] = {
    kind: f"semps.matcher.{kind}:{kind.capitalize()}Matcher"
    for kind in ("semantic", "content", "symmetric", "composite")
}


@functools.cache
def _registered() -> dict[str, str]:
    # Read once: scanning the installed distributions' entry points costs milliseconds.
    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def available() -> list[str]:
    """The registered matcher kinds, sorted."""
    return sorted(_registered())


def get_matcher_class(kind: str) -> type[Matcher]:
    """The matcher class registered as ``kind``.

    Raises:
        PluginNotFound: no matcher has that name; the message suggests the closest one.

    Example:
        >>> get_matcher_class("semntic")
        Traceback (most recent call last):
        ...
        semps.errors.PluginNotFound: Unknown matcher 'semntic'. Did you mean 'semantic'?
    """
    registered = _registered()
    target = registered.get(kind)
    if target is None:
        msg = f"Unknown matcher {kind!r}."
        close = difflib.get_close_matches(kind, registered, n=1)
        if close:
            msg += f" Did you mean {close[0]!r}?"
        else:
            msg += f" Available: {', '.join(sorted(registered))}."
        raise PluginNotFound(msg)
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        msg = f"matcher {kind!r} is registered as {target!r} but cannot be loaded: {exc}"
        raise MatcherError(msg) from exc
    if not (isinstance(cls, type) and issubclass(cls, Matcher)):
        msg = f"matcher {kind!r} ({target}) is not a semps.matcher.Matcher subclass"
        raise MatcherError(msg)
    return cls


def create_matcher(kind: str, **options: Any) -> Matcher:
    """Instantiate the matcher registered as ``kind`` with ``options``."""
    return get_matcher_class(kind)(**options)
