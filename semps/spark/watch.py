"""Subscriptions that change while a stream runs: a watched file or folder, versioned.

:class:`SubscriptionWatch` compares a cheap signature of the subscriptions before every
micro-batch: a file's size and modification time, a folder's own modification time (which
changes when a file is added, removed or renamed into it). Every ``rescan`` seconds a
background thread compares every file's size and modification time too (an edit in place
leaves the folder's time alone; at 100k files the scan takes seconds, so it stays off the
batches' path). When they changed, it reloads the subscriptions, validates only the added
and edited ones, and returns a new :class:`Version`. A version is
named by a digest of its content, so a restart with the same subscriptions gets the same
name, and the executors rebuild their index only when the content really changed.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from semps.errors import SempsError, SubscriptionError
from semps.ingest.sparql import Query, parse_memo
from semps.matcher.base import Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.values import Subscription

#: Reads the subscriptions at a path (a folder of ``.rq`` files or JSON Lines).
Loader = Callable[[Path], list[Subscription]]


@dataclass(frozen=True)
class Version:
    """One state of the subscriptions.

    Attributes:
        token: a digest of every (id, kind, text): equal content, equal token.
        subscriptions: the subscriptions, sorted by id.
    """

    token: str
    subscriptions: tuple[Subscription, ...]

    @classmethod
    def of(cls, subscriptions: Sequence[Subscription]) -> Version:
        """The version holding ``subscriptions``."""
        ordered = tuple(sorted(subscriptions, key=lambda s: s.id))
        digest = hashlib.sha256()
        for sub in ordered:
            for part in (sub.id, sub.kind, sub.text):
                digest.update(part.encode("utf-8"))
                digest.update(b"\x00")
        return cls(digest.hexdigest()[:16], ordered)


#: Seconds between full scans of a subscriptions folder (edits in place).
RESCAN_SECONDS = 30.0

Signature = tuple[tuple[str, int, int], ...]


def signature(path: Path, *, deep: bool = True) -> Signature:
    """What changes when a subscription is added, removed or edited under ``path``: each
    file's name, size and modification time (nanoseconds); with ``deep=False``, for a
    folder, only the folder's own (a stat, not one per subscription)."""
    try:
        if path.is_dir() and not deep:
            st = path.stat()
            return (("", st.st_size, st.st_mtime_ns),)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        return tuple((p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in files)
    except OSError:
        return ()


def validate_new(
    previous: Version | None,
    current: Sequence[Subscription],
    parses: dict[str, Query] | None = None,
) -> None:
    """Index the subscriptions that are new or edited since ``previous`` (the others were
    indexed before), so a bad one is named on the driver; semantic texts parsed on the way
    are added to ``parses`` (:func:`~semps.ingest.sparql.parse_memo`).

    Raises:
        SubscriptionError: naming the subscription.
    """
    known = {(s.id, s.kind, s.text) for s in previous.subscriptions} if previous else set()
    with parse_memo({} if parses is None else parses, Matcher.limits):
        _validate([s for s in current if (s.id, s.kind, s.text) not in known])


def _validate(subscriptions: Sequence[Subscription]) -> None:
    validators: dict[str, Matcher] = {}
    for sub in subscriptions:
        validator = validators.get(sub.kind)
        if validator is None:
            validator = validators[sub.kind] = create_matcher(sub.kind)
        try:
            validator.add(sub)
        except SubscriptionError as exc:
            msg = f"subscription {sub.id!r}: {exc}"
            raise SubscriptionError(msg) from exc


class SubscriptionWatch:
    """The subscriptions at ``path``, reloaded when they change.

    Args:
        path: a folder of ``.rq`` files or a JSON Lines file.
        loader: reads ``path`` (raises :class:`~semps.errors.SempsError` on bad input).
        warn: told why a changed set was refused (the previous version stays in force).
        rescan: seconds between full scans of a folder in the background (edits in place
            are seen at the next poll after one); ``0``: a full scan at every poll.
    """

    def __init__(
        self,
        path: Path,
        loader: Loader,
        warn: Callable[[str], None],
        *,
        rescan: float = RESCAN_SECONDS,
    ) -> None:
        if not path.exists():
            msg = f"subscriptions not found: {path}"
            raise SempsError(msg)
        self.path = path
        self.loader = loader
        self.warn = warn
        self.rescan = rescan
        self._shallow = signature(path, deep=False)
        self._deep = signature(path)
        self._edited = threading.Event()
        #: The parses of the semantic texts validated (a memo: what ships them may prune it).
        self.parses: dict[str, Query] = {}
        subscriptions = loader(path)
        validate_new(None, subscriptions, self.parses)
        self.version = Version.of(subscriptions)
        if rescan and path.is_dir():
            threading.Thread(target=self._rescan, name="semps-watch", daemon=True).start()

    def _rescan(self) -> None:
        """Flag edits in place (every file's signature) every ``rescan`` seconds."""
        while True:
            time.sleep(self.rescan)
            if signature(self.path) != self._deep:
                self._edited.set()

    def poll(self) -> Version | None:
        """The new version when the subscriptions changed (and are valid), else ``None``.

        A change that does not load (a file half written, a bad subscription) is reported
        through ``warn`` and tried again at the next poll; the current version stays.
        """
        shallow = signature(self.path, deep=False)
        if shallow == self._shallow and self.rescan and not self._edited.is_set():
            return None
        self._edited.clear()
        deep = signature(self.path)
        if deep == self._deep:
            self._shallow = shallow
            return None
        try:
            subscriptions = self.loader(self.path)
            validate_new(self.version, subscriptions, self.parses)
        except SempsError as exc:
            self.warn(f"subscriptions not reloaded, keeping the previous ones: {exc}")
            return None  # signatures kept: the next poll tries again
        self._shallow, self._deep = shallow, deep
        version = Version.of(subscriptions)
        if version.token == self.version.token:
            return None
        self.version = version
        return version


__all__ = ["Loader", "SubscriptionWatch", "Version", "signature", "validate_new"]
