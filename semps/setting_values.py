"""Setting values: durations, and the readers that turn a flag's or an environment
variable's string, or a TOML value, into a setting's type.

Each reader raises :class:`ValueError` with what it expected; :mod:`semps.settings` names
the setting and where the value came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from semps.errors import SettingsError

__all__ = [
    "format_duration",
    "parse_duration",
    "parse_retention_age",
    "read_bool",
    "read_choice",
    "read_float",
    "read_int",
    "read_path",
    "read_seconds",
    "read_str",
    "read_strings",
]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*")


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``30d``, ``12h``, ``90m``, ``45s``, ``2w`` or ``3600``.

    Raises:
        SettingsError: the text is not a positive duration.

    Example:
        >>> parse_duration("30d"), parse_duration("1.5h"), parse_duration("90")
        (2592000.0, 5400.0, 90.0)
    """
    found = _DURATION.fullmatch(text)
    if found is None or float(found[1]) <= 0:
        msg = f"not a duration: {text!r} (use a positive number with s, m, h, d or w, e.g. 30d)"
        raise SettingsError(msg)
    return float(found[1]) * _UNITS[found[2] or "s"]


def parse_retention_age(text: str) -> float:
    """A retention age: a duration, or ``0`` for no bound.

    Example:
        >>> parse_retention_age("7d"), parse_retention_age("0")
        (604800.0, 0.0)
    """
    return 0.0 if text.strip() in ("0", "0s") else parse_duration(text)


def format_duration(seconds: float) -> str:
    """The shortest exact form of a duration (``2592000`` -> ``30d``)."""
    for unit in ("w", "d", "h", "m"):
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{int(seconds // _UNITS[unit])}{unit}"
    return f"{seconds:g}s"


def read_int(value: object) -> int:
    """An integer: an int (not a bool) or a string of digits (``_`` allowed)."""
    if isinstance(value, bool):
        raise ValueError("expected an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d[\d_]*\s*", value):
        return int(value)
    raise ValueError("expected an integer")


def read_float(value: object) -> float:
    """A number: an int or float (not a bool), or a string that reads as one."""
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError("expected a number")


def read_seconds(value: object) -> float:
    """Seconds: a number, or a duration such as ``30d`` (``0``: no bound)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return parse_retention_age(value)
    raise ValueError("expected a duration such as 30d")


def read_bool(value: object) -> bool:
    """A bool, or ``1``/``true``/``yes``/``on`` and ``0``/``false``/``no``/``off``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def read_str(value: object) -> str:
    """A non-empty string."""
    if isinstance(value, str) and value:
        return value
    raise ValueError("expected a non-empty string")


def read_path(value: object) -> Path:
    """A path (from a non-empty string)."""
    if isinstance(value, Path):
        return value
    return Path(read_str(value))


def read_strings(value: object) -> tuple[str, ...]:
    """Strings: a list of them, or one string of comma-separated parts."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("expected a list of strings (comma-separated in the environment)")


def read_choice(*choices: str) -> Callable[[object], str]:
    """A reader of one of ``choices`` (case-insensitive; answered in lower case)."""

    def read(value: object) -> str:
        if isinstance(value, str) and value.lower() in choices:
            return value.lower()
        raise ValueError(f"expected one of {', '.join(choices)}")

    return read
