"""Read JSON events (content values and symmetric regions) into the one event model.

A JSON event is an object with attribute ``values`` (content events) and/or a
``region`` (closed intervals per attribute, symmetric publications)::

    {"id": "e1", "values": {"a0": 0.31, "a1": 5, "colour": "red"}}
    {"id": "e2", "region": {"x": [0.2, 0.4], "y": [0.5, 0.5]}}

Values are finite numbers or strings; a region maps each attribute it names to
``[low, high]`` with ``low <= high`` (a point is ``[v, v]``) and names at least one attribute.
``id`` and ``time`` (seconds) are optional. Anything else is refused with a
:class:`~semps.errors.JSONEventError` that says what and where.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from semps._types import Value
from semps.errors import DocumentTooLarge, JSONEventError
from semps.event import Event

__all__ = [
    "JSON_MEDIA_TYPES",
    "is_json_media_type",
    "is_json_number",
    "parse_json_event",
    "read_json_event",
    "refuse_json_constant",
]

#: Media types read as JSON events (``application/ld+json`` stays JSON-LD, i.e. RDF).
JSON_MEDIA_TYPES = frozenset({"application/json", "text/json"})

_KEYS = ("id", "values", "region", "time")


def is_json_media_type(media_type: str | None) -> bool:
    """True when ``media_type`` (parameters ignored) names a JSON event.

    Example:
        >>> is_json_media_type("application/json; charset=utf-8")
        True
        >>> is_json_media_type("application/ld+json")
        False
    """
    if not media_type:
        return False
    return media_type.split(";", 1)[0].strip().lower() in JSON_MEDIA_TYPES


def read_json_event(
    data: bytes, *, event_id: str | None = None, max_bytes: int = 64 * 1024 * 1024
) -> Event:
    """Parse a JSON event document.

    Args:
        data: the UTF-8 JSON text.
        event_id: the event id; when ``None`` the document's ``"id"`` is used.
        max_bytes: larger documents are refused.

    Raises:
        DocumentTooLarge: ``data`` is longer than ``max_bytes``.
        JSONEventError: not JSON, or not an event (message says which key and why).

    Example:
        >>> e = read_json_event(b'{"id": "e1", "values": {"a0": 0.31, "a1": 5}}')
        >>> e.id, dict(e.values)
        ('e1', {'a0': 0.31, 'a1': 5})
        >>> read_json_event(b'{"values": {"a0": true}}', event_id="e2")
        Traceback (most recent call last):
        ...
        semps.errors.JSONEventError: value of 'a0' must be a number or a string, not true
    """
    if len(data) > max_bytes:
        msg = f"document of {len(data)} bytes exceeds the limit of {max_bytes} bytes"
        raise DocumentTooLarge(msg)
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=refuse_json_constant)
    except UnicodeDecodeError as exc:
        msg = f"a JSON event must be UTF-8 ({exc.reason} at byte {exc.start})"
        raise JSONEventError(msg) from exc
    except json.JSONDecodeError as exc:
        raise JSONEventError(f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from exc
    except (ValueError, RecursionError) as exc:
        raise JSONEventError(f"invalid JSON: {exc}") from exc
    return parse_json_event(doc, event_id=event_id)


def parse_json_event(doc: object, *, event_id: str | None = None) -> Event:
    """Build an :class:`Event` from an already decoded JSON value (see the module doc)."""
    if not isinstance(doc, dict):
        msg = f"a JSON event must be an object, not {_kind(doc)}"
        raise JSONEventError(msg)
    unknown = [k for k in doc if k not in _KEYS]
    if unknown:
        msg = f"unknown key {unknown[0]!r} in a JSON event (expected {', '.join(_KEYS)})"
        raise JSONEventError(msg)
    if "values" not in doc and "region" not in doc:
        msg = 'a JSON event needs "values" and/or "region"'
        raise JSONEventError(msg)
    if event_id is None:
        event_id = doc.get("id")
        if not isinstance(event_id, str) or not event_id:
            msg = f'a JSON event needs a non-empty string "id", not {_show(event_id)}'
            raise JSONEventError(msg)
    values = _values(doc.get("values", {}))
    region = parse_region(doc["region"], what="region") if "region" in doc else {}
    time = doc.get("time")
    if time is not None and not is_json_number(time):
        msg = f'"time" must be a number of seconds, not {_show(time)}'
        raise JSONEventError(msg)
    return Event(event_id, values=values, regions=region, time=None if time is None else time)


def parse_region(doc: object, *, what: str) -> dict[str, tuple[float, float]]:
    """A region: attribute -> ``[low, high]`` (finite numbers, low <= high), at least one.

    ``what`` names the region in messages. Raises :class:`JSONEventError`.

    Example:
        >>> parse_region({"x": [0.1, 0.3], "y": [0.5, 0.5]}, what="region")
        {'x': (0.1, 0.3), 'y': (0.5, 0.5)}
    """
    if not isinstance(doc, dict):
        msg = f"{what} must be an object of attribute -> [low, high], not {_kind(doc)}"
        raise JSONEventError(msg)
    if not doc:
        msg = f"{what} must name at least one attribute"
        raise JSONEventError(msg)
    out: dict[str, tuple[float, float]] = {}
    for name, bounds in doc.items():
        if not name:
            msg = f"{what} has an empty attribute name"
            raise JSONEventError(msg)
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(is_json_number, bounds))):
            msg = f"{what} attribute {name!r} must be [low, high] numbers, not {_show(bounds)}"
            raise JSONEventError(msg)
        low, high = float(bounds[0]), float(bounds[1])
        if low > high:
            msg = f"{what} attribute {name!r} has low {bounds[0]} > high {bounds[1]}"
            raise JSONEventError(msg)
        out[name] = (low, high)
    return out


def _values(doc: object) -> Mapping[str, Value]:
    if not isinstance(doc, dict):
        msg = f'"values" must be an object of attribute -> value, not {_kind(doc)}'
        raise JSONEventError(msg)
    for name, value in doc.items():
        if not name:
            msg = '"values" has an empty attribute name'
            raise JSONEventError(msg)
        if not (isinstance(value, str) or is_json_number(value)):
            msg = f"value of {name!r} must be a number or a string, not {_show(value)}"
            raise JSONEventError(msg)
    return doc


def is_json_number(value: object) -> bool:
    """A finite JSON number (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def refuse_json_constant(name: str) -> object:
    """``parse_constant`` for :func:`json.loads`: ``NaN`` and ``Infinity`` are not JSON."""
    msg = f"{name} is not a JSON number"
    raise ValueError(msg)


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else _show(value)


def _show(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, dict | list) else _kind(value)
    return text if len(text) <= 40 else text[:37] + "..."
