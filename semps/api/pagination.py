"""Cursor pagination for the HTTP API's lists (``?limit=&cursor=`` -> ``{"items", "next"}``).

A cursor is opaque to clients: URL-safe base64 of ``<list>:<last key>`` and an HMAC of it
under a key of the service's data directory, so only the service can make one. A page holds
the items whose key follows the cursor's, in key order, so a page boundary never repeats or
skips an item that stays in the list. A cursor that does not decode, carries a wrong HMAC
(made up or altered), or belongs to another list, is a 400.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import hmac
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from semps.errors import SempsError

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "decode_cursor", "encode_cursor", "page"]

#: Items per page when ``limit`` is not given, and the most a page may hold.
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_MAX_CURSOR = 512
_MAC_BYTES = 12
T = TypeVar("T")


def _mac(secret: bytes, text: bytes) -> bytes:
    return hmac.new(secret, text, hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(kind: str, key: str, secret: bytes) -> str:
    """The cursor after ``key`` in list ``kind``, signed with ``secret``.

    Example:
        >>> decode_cursor(encode_cursor("subscriptions", "sub-7", b"k"), "subscriptions", b"k")
        'sub-7'
    """
    text = f"{kind}:{key}".encode()
    return base64.urlsafe_b64encode(_mac(secret, text) + text).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: str, secret: bytes) -> str | None:
    """The key a cursor of list ``kind`` points after (``None``: from the start).

    Raises:
        SempsError: the cursor is not one this service handed out for ``kind``.

    Example:
        >>> forged = base64.urlsafe_b64encode(b"x" * 12 + b"subscriptions:sub-1").decode()
        >>> try:
        ...     decode_cursor(forged, "subscriptions", b"k")
        ... except SempsError as exc:
        ...     print(str(exc)[:40])
        invalid cursor 'eHh4eHh4eHh4eHh4c3Vic2Ny
    """
    if not cursor:
        return None
    text = ""
    try:
        if len(cursor) > _MAX_CURSOR or not cursor.isascii():
            raise ValueError
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        mac, signed = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
        if hmac.compare_digest(mac, _mac(secret, signed)):
            text = signed.decode()
    except (ValueError, binascii.Error, UnicodeDecodeError):
        text = ""
    prefix, sep, key = text.partition(":")
    if prefix != kind or not sep or not key:
        shown = cursor if len(cursor) <= 40 else cursor[:40] + "..."
        msg = f"invalid cursor {shown!r}: pass the 'next' value of the previous page"
        raise SempsError(msg)
    return key


def page(
    items: Iterable[T],
    key: Callable[[T], Any],
    after: Any,
    limit: int,
) -> tuple[list[T], T | None]:
    """The first ``limit`` items (by ``key``) after the key ``after`` (``None``: from the
    start), and the last of them when more follow (``None``: this is the last page).

    Example:
        >>> page([5, 1, 4, 2, 3], key=int, after=1, limit=2)
        ([2, 3], 3)
        >>> page([5, 1, 4, 2, 3], key=int, after=3, limit=2)
        ([4, 5], None)
    """
    rest = items if after is None else (i for i in items if key(i) > after)
    chosen = heapq.nsmallest(limit + 1, rest, key=key)
    if len(chosen) > limit:
        return chosen[:limit], chosen[limit - 1]
    return chosen, None
