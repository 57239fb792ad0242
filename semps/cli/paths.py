"""The files a command reads and writes, checked before it starts its long work.

Loading 100k subscriptions takes seconds and 1M content subscriptions tens of seconds: a
mistyped ``--events`` or ``--output`` is refused first, not after all that.

    >>> from pathlib import Path
    >>> need_input(Path("/nowhere/events.jsonl"), "events")
    Traceback (most recent call last):
    ...
    semps.errors.SempsError: events not found: /nowhere/events.jsonl
"""

from __future__ import annotations

from pathlib import Path

from semps.errors import SempsError

__all__ = ["need_input", "need_output"]


def need_input(path: Path | None, what: str) -> None:
    """Stop unless ``path`` (if given) exists, as a file or a folder.

    Raises:
        SempsError: ``WHAT not found: PATH``.
    """
    if path is not None and not path.exists():
        msg = f"{what} not found: {path}"
        raise SempsError(msg)


def need_output(path: str | Path | None) -> None:
    """Stop unless the folder ``path`` (if given, and local: no ``scheme://``) is to be
    written in exists.

    Raises:
        SempsError: ``output folder not found: DIR``.
    """
    if path is None or "://" in str(path):
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        msg = f"output folder not found: {parent}"
        raise SempsError(msg)
