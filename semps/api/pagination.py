"""Cursor pagination for the HTTP API's lists (``?limit=&cursor=`` -> ``{"items", "next"}``).

A cursor is opaque to clients: URL-safe base64 of ``<list>:<last key>``. A page holds the
items whose key follows the cursor's, in key order, so a page boundary never repeats or skips
an item that stays in the list. A cursor that does not decode, or belongs to another list, is a
400.
"""

from __future__ import annotations

import base64
import binascii
import heapq
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from semps.errors import SempsError

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "decode_cursor", "encode_cursor", "page"]

#: Items per page when ``limit`` is not given, and the most a page may hold.
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_MAX_CURSOR = 512
T = TypeVar("T")


def encode_cursor(kind: str, key: str) -> str:
    """The cursor after ``key`` in list ``kind``.

    Example:
        >>> decode_cursor(encode_cursor("subscriptions", "sub-7"), "subscriptions")
        'sub-7'
    """
    return base64.urlsafe_b64encode(f"{kind}:{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: str) -> str | None:
    """The key a cursor of list ``kind`` points after (``None``: from the start).

    Raises:
        SempsError: the cursor is not one this service handed out for ``kind``.
    """
    if not cursor:
        return None
    try:
        if len(cursor) > _MAX_CURSOR or not cursor.isascii():
            raise ValueError
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
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
