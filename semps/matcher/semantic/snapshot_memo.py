"""The service's snapshot of semantic parses, read as a memo and extended in parts.

A worker of the service registers its subscriptions at start-up with the parses the
snapshot holds (:func:`snapshot_memo`: only texts it lacks are parsed). Subscriptions added
while it runs are kept as *parts* beside it (:func:`snapshot_extension`): ``<name>.part1``,
``<name>.part2``, ... each a snapshot (:mod:`.snapshot`'s format) of the texts one
registration parsed, so the next start finds every parse without the whole snapshot being
rewritten for each batch. Start-up folds the parts into the snapshot only when it had to
parse something anyway, when they hold texts of deleted subscriptions, or when they pass
:data:`MAX_PARTS`.

A start from the semantic matcher's saved index (:mod:`.state`) reads the snapshot only
when it adds many subscriptions; the snapshot is folded when that index is saved
(:func:`fold_snapshot`) instead.

Everything here is a cache: a missing, damaged, stale or foreign part or snapshot is read
as empty, one that cannot be written is left as it is, and what is registered never
depends on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from semps.errors import SubscriptionError
from semps.gcpolicy import paused_gc
from semps.ingest.sparql import Query, parse_memo
from semps.limits import DEFAULT_LIMITS, Limits, parse_limits
from semps.matcher.semantic.snapshot import (
    read_snapshot,
    save_snapshot,
    snapshot_header,
    subscriptions_digest,
)
from semps.matcher.values import Subscription

__all__ = [
    "MAX_PARTS",
    "READ_WHEN",
    "fold_snapshot",
    "parts_of",
    "snapshot_extension",
    "snapshot_memo",
]

#: Parts beside a snapshot past which start-up folds them in (each part costs a file read
#: and its checks at every start, about a millisecond for the small parts that single
#: registrations leave: one per group registered while the writing worker had time).
MAX_PARTS = 1024
#: A block adding fewer than one in this many of its subscriptions leaves the snapshot
#: unread (decoding a parse costs about a fifth of parsing its text: 7.6 s for 1M).
READ_WHEN = 5


def parts_of(path: Path) -> list[Path]:
    """The parts beside the snapshot at ``path``, in the order they were written."""
    pattern = re.compile(re.escape(path.name) + r"\.part(\d+)")
    found = []
    if path.parent.is_dir():
        for candidate in path.parent.iterdir():
            m = pattern.fullmatch(candidate.name)
            if m is not None:
                found.append((int(m.group(1)), candidate))
    return [p for _, p in sorted(found)]


def _read_parses(path: Path, limits: Limits) -> tuple[dict[str, Query], str | None]:
    """The parses of the snapshot at ``path`` and of its parts (those parsed under
    ``limits``), and the snapshot's own subscriptions digest (``None``: none usable)."""
    queries: dict[str, Query] = {}
    held = None
    for number, source in enumerate([path, *parts_of(path)]):
        try:
            snapshot = read_snapshot(source)
        except SubscriptionError:
            continue
        if parse_limits(snapshot.limits) != parse_limits(limits):
            continue
        queries.update(snapshot.queries)
        if number == 0:
            held = snapshot.subscriptions_sha256
    return queries, held


@contextmanager
def snapshot_memo(
    path: Path,
    subscriptions: Sequence[Subscription],
    limits: Limits = DEFAULT_LIMITS,
    *,
    write: bool = True,
    adding: int | None = None,
) -> Iterator[None]:
    """A block registering ``subscriptions`` (those of kind ``semantic`` count) under
    ``limits`` with the parses of the snapshot at ``path`` and of its parts
    (:func:`parse_memo`). On leaving, if ``write``, the snapshot is rewritten with the
    subscriptions parsed (and its parts removed) when a text had to be parsed, when the
    parts pass :data:`MAX_PARTS`, when they hold texts no subscription has any more, when
    the snapshot is damaged, or, without parts, when it did not hold exactly the
    subscriptions.

    With ``write=False`` it is only read (several processes loading the same
    subscriptions need one writer). When the block adds only ``adding`` of the
    subscriptions (a start from a saved index adds what changed since), fewer than one in
    :data:`READ_WHEN`, and the parts are within :data:`MAX_PARTS`, the snapshot is neither
    read nor written: parsing them costs less than decoding it. The cyclic garbage
    collector is off within the block, as while ``semps match`` builds an index.
    """
    if adding is not None and adding * READ_WHEN < len(subscriptions):
        if len(parts_of(path)) <= MAX_PARTS:
            with paused_gc():
                yield
            return
    queries, held = _read_parses(path, limits)
    known = len(queries)
    with paused_gc(), parse_memo(queries, limits):
        yield
    if not write:
        return
    parts = parts_of(path)
    parsed = [s for s in subscriptions if s.kind == "semantic" and s.text in queries]
    if len(queries) == known and len(parts) <= MAX_PARTS:  # nothing parsed now
        unused = len(queries) > len({s.text for s in parsed})  # deleted ones' texts
        damaged = held is None and path.exists()
        if (parts and not unused and not damaged) or subscriptions_digest(parsed) == held:
            return
    try:
        save_snapshot(path, parsed, queries, limits)
    except (OSError, SubscriptionError):
        return
    for part in parts:
        part.unlink(missing_ok=True)


def fold_snapshot(
    path: Path, subscriptions: Sequence[Subscription], limits: Limits = DEFAULT_LIMITS
) -> None:
    """Rewrite the snapshot at ``path`` with the parses of ``subscriptions`` (the ones
    registered now) it and its parts hold, and remove the parts it read (one written
    meanwhile stays): what a start folds when it reads the snapshot, for a service whose
    starts restore a saved index instead. Nothing is written when there are no parts and
    the snapshot holds exactly ``subscriptions``; a file that cannot be written is left."""
    parts = parts_of(path)
    if not parts and _holds_exactly(path, subscriptions, limits):
        return  # known from its header (decoding it: 7.6 s at 1M)
    queries, held = _read_parses(path, limits)
    kept = [s for s in subscriptions if s.kind == "semantic" and s.text in queries]
    texts = {s.text for s in kept}
    if not parts and len(queries) == len(texts) and subscriptions_digest(kept) == held:
        return
    try:
        save_snapshot(path, kept, {t: queries[t] for t in texts}, limits)
    except (OSError, SubscriptionError):
        return
    for part in parts:
        part.unlink(missing_ok=True)


def _holds_exactly(path: Path, subscriptions: Sequence[Subscription], limits: Limits) -> bool:
    """Whether the snapshot at ``path`` is intact and holds exactly the semantic
    ``subscriptions``' parses under ``limits``, as its header says."""
    try:
        header = snapshot_header(path)
        parsed_under = parse_limits(Limits(**header["limits"]))
    except (SubscriptionError, TypeError, ValueError):
        return False
    semantic = [s for s in subscriptions if s.kind == "semantic"]
    if parsed_under != parse_limits(limits):
        return False
    return bool(header.get("subscriptions_sha256") == subscriptions_digest(semantic))


#: Parses kept by :func:`snapshot_extension` blocks and not written yet, by snapshot.
_PENDING: dict[Path, dict[str, Query]] = {}


@contextmanager
def snapshot_extension(
    path: Path, limits: Limits = DEFAULT_LIMITS
) -> Iterator[Callable[[], Path | None]]:
    """A block whose parses (:func:`parse_memo`, under ``limits``) are kept; it gives a
    function that writes them, with those of every earlier block for ``path`` not written
    yet, as the next part beside the snapshot at ``path`` and returns the part (``None``:
    nothing to write, or it could not be written), to call after the block when the caller
    has time."""
    queries: dict[str, Query] = {}

    def write() -> Path | None:
        pending = _PENDING.pop(path, {})
        if not pending:
            return None
        parts = parts_of(path)
        number = int(parts[-1].name.rsplit(".part", 1)[1]) + 1 if parts else 1
        part = path.with_name(f"{path.name}.part{number}")
        texts = [Subscription(f"t{i}", "semantic", text) for i, text in enumerate(pending)]
        try:
            save_snapshot(part, texts, pending, limits)
        except (OSError, SubscriptionError):
            return None
        return part

    with parse_memo(queries, limits):
        yield write
    _PENDING.setdefault(path, {}).update(queries)
