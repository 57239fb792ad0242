"""SQLite's failures as the store errors the API answers with a retryable status.

A full disk is not the client's fault: it is a :class:`~semps.errors.StorageFull` (HTTP
507), any other failure to read or write the files a
:class:`~semps.errors.StoreUnavailable` (503, with ``Retry-After``). Both say the operation
was rolled back.

Example:
    >>> import sqlite3
    >>> exc = storage_error(sqlite3.OperationalError("database or disk is full"), "cannot save")
    >>> type(exc).__name__, str(exc)
    ('StorageFull', 'cannot save: the disk is full (database or disk is full); nothing was written')
"""

from __future__ import annotations

import errno
import sqlite3

from semps.errors import StorageFull, StoreUnavailable

__all__ = ["is_full", "storage_error"]


def is_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or a quota) is full."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def storage_error(exc: BaseException, what: str) -> StoreUnavailable:
    """The error to raise ``from exc`` when ``what`` failed on ``exc`` (and was rolled back)."""
    if is_full(exc):
        return StorageFull(f"{what}: the disk is full ({exc}); nothing was written")
    return StoreUnavailable(f"{what}: {exc}; nothing was written, try again later")
