"""Screen XML documents for hostile DTD constructs before any parser sees the bytes.

pyoxigraph's RDF/XML parser expands internal entities without limit (a 1 KB "billion
laughs" document becomes a 940 MB literal), so semps decides what a DTD may do itself:

- allowed: internal general entities whose value is plain text (the common
  ``<!ENTITY rdf "http://www.w3.org/1999/02/22-rdf-syntax-ns#">`` abbreviation), as long as
  the total expansion (references x value length) stays under a bound;
- refused: external entities (``SYSTEM``/``PUBLIC``), parameter entities (``%``), entities
  whose value references other entities (the expansion-bomb shape), unparsed entities, and
  any expansion past the bound.
"""

from __future__ import annotations

import re

from semps.errors import HostileInputError

#: The most text entity references may add to a document, in characters.
MAX_ENTITY_EXPANSION = 1 << 20

_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_DECL = re.compile(rb"<!(ENTITY|ELEMENT|ATTLIST|NOTATION)\b", re.IGNORECASE)
_ENTITY = re.compile(
    rb"<!ENTITY\s+(?P<pe>%\s+)?(?P<name>[^\s%\"']+)\s+"
    rb"(?:(?P<ext>SYSTEM|PUBLIC)\b|\"(?P<v1>[^\"]*)\"|'(?P<v2>[^']*)')",
    re.IGNORECASE,
)
_REF = re.compile(rb"&([A-Za-z_:][\w.:-]*);")


def position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a byte offset."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def _refuse(data: bytes, offset: int, message: str) -> HostileInputError:
    line, column = position(data, offset)
    return HostileInputError(message, line=line, column=column)


def screen_xml(data: bytes) -> None:
    """Raise :class:`HostileInputError` if ``data``'s DTD could attack the parser.

    Example:
        >>> screen_xml(b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>')
        Traceback (most recent call last):
        ...
        semps.errors.HostileInputError: 1:14: external entity 'x' refused (SYSTEM)
    """
    doctype = _DOCTYPE.search(data)
    if doctype is None:
        return
    if _DOCTYPE.search(data, doctype.end()):
        raise _refuse(data, doctype.start(), "more than one DOCTYPE declaration")
    values: dict[bytes, int] = {}
    for decl in _DECL.finditer(data, doctype.end()):
        if decl.group(1).upper() != b"ENTITY":
            continue
        values.update(_check_entity(data, decl.start()))
    _check_expansion(data, values)


def _check_entity(data: bytes, offset: int) -> dict[bytes, int]:
    entity = _ENTITY.match(data, offset)
    if entity is None:
        raise _refuse(data, offset, "unreadable ENTITY declaration refused")
    name = entity.group("name").decode("utf-8", "replace")
    if entity.group("pe"):
        raise _refuse(data, offset, f"parameter entity {name!r} refused")
    if entity.group("ext"):
        kind = entity.group("ext").decode().upper()
        raise _refuse(data, offset, f"external entity {name!r} refused ({kind})")
    value = entity.group("v1") if entity.group("v1") is not None else entity.group("v2")
    if b"&" in value or b"%" in value or b"<" in value:
        raise _refuse(data, offset, f"entity {name!r} refers to other entities or markup")
    return {entity.group("name"): len(value)}


def _check_expansion(data: bytes, values: dict[bytes, int]) -> None:
    total = 0
    for ref in _REF.finditer(data):
        total += values.get(ref.group(1), 0)
        if total > MAX_ENTITY_EXPANSION:
            msg = f"entity expansion exceeds {MAX_ENTITY_EXPANSION} characters"
            raise _refuse(data, ref.start(), msg)
