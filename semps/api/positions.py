"""A multiplexed stream's position: the last seq delivered of each subscription it carries,
as one compact, signed cursor.

The cursor is URL-safe base64 (no padding) of a 12-byte HMAC-SHA256 tag and the positions:
a version byte, then per subscription (in id order) its id and its seq. An id of the form
``sub-<n>`` (every id the service hands out) is written as the difference of ``n`` from the
previous such id, so a cursor of many subscriptions costs two or three bytes each; another id
is written whole. Numbers are LEB128 varints. The tag covers the principal's name too, so a
cursor works only for whom it was made; one the service did not hand out (made up, altered,
another principal's, truncated) is refused with :class:`~semps.errors.SempsError` (a 400).
A subscription left out of a cursor is at 0 (from its start).

Example:
    >>> key = bytes(32)
    >>> cursor = encode_positions({"sub-7": 12, "sub-9": 3, "alarms": 1}, key, "ada")
    >>> decode_positions(cursor, key, "ada")
    {'alarms': 1, 'sub-7': 12, 'sub-9': 3}
    >>> try:
    ...     decode_positions(cursor, key, "bob")
    ... except SempsError as exc:
    ...     print(str(exc)[:61])
    invalid cursor: not one this service handed out to this token
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Mapping

from semps.errors import SempsError

__all__ = ["MAX_CURSOR", "decode_positions", "encode_positions"]

#: The longest cursor accepted (characters): about 30,000 subscriptions' positions.
MAX_CURSOR = 128 * 1024
_MAC = 12
_VERSION = 1
_SEQ_LIMIT = 2**63
_NUMBERED = re.compile(r"sub-([1-9][0-9]{0,17})")


def _varint(value: int, out: bytearray) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated number")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _tag(key: bytes, subject: str, body: bytes) -> bytes:
    signed = subject.encode("utf-8", "surrogatepass") + b"\0" + body
    return hmac.new(key, signed, hashlib.sha256).digest()[:_MAC]


def encode_positions(positions: Mapping[str, int], key: bytes, subject: str) -> str:
    """The cursor of ``positions`` (subscription id -> last seq delivered) for ``subject``;
    subscriptions at 0 are left out."""
    numbered: list[tuple[int, int]] = []
    named: list[tuple[bytes, int]] = []
    for sub, seq in positions.items():
        if seq <= 0:
            continue
        found = _NUMBERED.fullmatch(sub)
        if found:
            numbered.append((int(found[1]), seq))
        else:
            named.append((sub.encode("utf-8", "surrogatepass"), seq))
    body = bytearray([_VERSION])
    _varint(len(numbered), body)
    previous = 0
    for number, seq in sorted(numbered):
        _varint(number - previous, body)
        _varint(seq, body)
        previous = number
    for name, seq in sorted(named):
        _varint(len(name), body)
        body += name
        _varint(seq, body)
    raw = _tag(key, subject, bytes(body)) + body
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_positions(cursor: str, key: bytes, subject: str) -> dict[str, int]:
    """The positions in a cursor :func:`encode_positions` made for ``subject``.

    Raises:
        SempsError: the cursor is malformed, too long, or not one this service handed out to
            ``subject``.
    """
    shown = cursor if len(cursor) <= 40 else cursor[:40] + "..."
    if len(cursor) > MAX_CURSOR or not cursor.isascii():
        msg = f"invalid cursor {shown!r}: longer than {MAX_CURSOR} characters or not ASCII"
        raise SempsError(msg)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    tag, body = raw[:_MAC], raw[_MAC:]
    if len(raw) <= _MAC or not hmac.compare_digest(tag, _tag(key, subject, body)):
        msg = f"invalid cursor: not one this service handed out to this token ({shown!r})"
        raise SempsError(msg)
    try:
        return _positions(body)
    except ValueError as exc:  # signed by us, so only a change of format gets here
        msg = f"invalid cursor {shown!r}: {exc}"
        raise SempsError(msg) from exc


def _positions(body: bytes) -> dict[str, int]:
    if body[0] != _VERSION:
        raise ValueError(f"unknown version {body[0]}")
    count, at = _read_varint(body, 1)
    positions: dict[str, int] = {}
    number = 0
    for _ in range(count):
        step, at = _read_varint(body, at)
        seq, at = _read_varint(body, at)
        number += step
        positions[f"sub-{number}"] = seq
    while at < len(body):
        size, at = _read_varint(body, at)
        if at + size > len(body):
            raise ValueError("truncated id")
        name = body[at : at + size].decode("utf-8", "surrogatepass")
        seq, at = _read_varint(body, at + size)
        positions[name] = seq
    if any(seq >= _SEQ_LIMIT for seq in positions.values()):
        raise ValueError("a position past 2**63")
    return dict(sorted(positions.items()))
