"""How a matching worker indexes the stored subscriptions when it starts.

The pipeline sends the subscriptions as columns (:class:`Packed`: pickling a million
:class:`~semps.matcher.values.Subscription` objects took 4 s on each side of the pipe, the
columns a tenth of it). Each matcher then starts from the state it saved in the data
directory, ``<kind>.state`` (:meth:`~semps.matcher.base.Matcher.restore_state`), brought
up to date: the subscriptions it holds that are gone or changed are removed and the others
added, with its snapshot's parses (``<kind>.snap``) when they are many. Without a usable
state (none saved, or one that is damaged, foreign or stale: logged), every subscription
is added, as before states were saved. Either way the matcher answers as one that
registered the subscriptions one by one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from semps.errors import MatcherError, NotFound, SempsError
from semps.matcher.base import Matcher
from semps.matcher.values import Subscription

__all__ = ["Loaded", "Packed", "load_matcher"]

_log = logging.getLogger("semps.worker")


@dataclass(frozen=True)
class Packed(Sequence[Subscription]):
    """Subscriptions as columns (each a list, in the subscriptions' order)."""

    ids: list[str]
    kinds: list[str]
    texts: list[str]
    owners: list[str | None]
    names: list[str | None]

    @classmethod
    def of(cls, subscriptions: Sequence[Subscription]) -> Packed:
        """The subscriptions as columns."""
        if isinstance(subscriptions, Packed):
            return subscriptions
        return cls(
            [s.id for s in subscriptions],
            [s.kind for s in subscriptions],
            [s.text for s in subscriptions],
            [s.owner for s in subscriptions],
            [s.name for s in subscriptions],
        )

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, row: int) -> Subscription: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[Subscription]: ...
    def __getitem__(self, row: int | slice) -> Subscription | Sequence[Subscription]:
        if isinstance(row, slice):
            return [self[r] for r in range(len(self))[row]]
        return Subscription(
            self.ids[row], self.kinds[row], self.texts[row], self.owners[row], self.names[row]
        )

    def __iter__(self) -> Iterator[Subscription]:
        return map(Subscription, self.ids, self.kinds, self.texts, self.owners, self.names)

    def by_kind(self) -> dict[str, Rows]:
        """The subscriptions of each kind, in order."""
        rows: dict[str, list[int]] = {}
        for row, kind in enumerate(self.kinds):
            found = rows.get(kind)
            if found is None:
                found = rows[kind] = []
            found.append(row)
        return {kind: Rows(self, r) for kind, r in rows.items()}


@dataclass(frozen=True)
class Rows(Sequence[Subscription]):
    """Some subscriptions of a :class:`Packed`, made one at a time when read."""

    packed: Packed
    rows: list[int]

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> Subscription: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Subscription]: ...
    def __getitem__(self, i: int | slice) -> Subscription | Sequence[Subscription]:
        if isinstance(i, slice):
            return Rows(self.packed, self.rows[i])
        return self.packed[self.rows[i]]

    def __iter__(self) -> Iterator[Subscription]:
        packed = self.packed
        return (packed[r] for r in self.rows)

    def texts_by_id(self) -> dict[str, str]:
        ids, texts = self.packed.ids, self.packed.texts
        return {ids[r]: texts[r] for r in self.rows}


@dataclass(frozen=True)
class Loaded:
    """How a matcher (or a worker's matchers) loaded: from the saved state or not, how many
    subscriptions were added or removed after (all of them without a state), and how many
    it holds then."""

    restored: bool
    changed: int
    size: int = 0

    def __str__(self) -> str:
        if self.restored:
            return f"{self.size} subscriptions from the saved state, {self.changed} changed since"
        return f"{self.size} subscriptions, each indexed from its text"


def load_matcher(
    matcher: Matcher,
    subs: Rows,
    snapshot: Path | None,
    state: Path | None,
    key: bytes | None,
    *,
    write: bool,
) -> Loaded:
    """Index ``subs`` (all of the matcher's kind) in the empty ``matcher``: from the state
    saved at ``state`` under ``key`` brought up to date, else one by one; either way with
    what the matcher persisted at ``snapshot`` (rewritten when stale if ``write``). A
    subscription that no longer registers (older limits or code) is skipped."""
    held: Mapping[str, str] | None = None
    if state is not None and key is not None:
        try:
            held = matcher.restore_state(state, key)
        except MatcherError as exc:
            _log.warning("%s; indexing the subscriptions one by one instead", exc)
    if held is None:
        _add_all(matcher, subs, subs, snapshot, write=write)
        return Loaded(False, len(subs), _size(matcher))
    current = subs.texts_by_id()
    gone = [sub_id for sub_id, text in held.items() if current.get(sub_id) != text]
    ids, texts = subs.packed.ids, subs.packed.texts
    new = [r for r in subs.rows if held.get(ids[r]) != texts[r]]
    for sub_id in gone:
        try:
            matcher.remove(sub_id)
        except NotFound:
            pass
    _add_all(matcher, Rows(subs.packed, new), subs, snapshot, write=write)
    return Loaded(True, len(gone) + len(new), _size(matcher))


def _size(matcher: Matcher) -> int:
    return len(matcher) if hasattr(matcher, "__len__") else 0


def _add_all(
    matcher: Matcher,
    adding: Sequence[Subscription],
    subs: Sequence[Subscription],
    snapshot: Path | None,
    *,
    write: bool,
) -> None:
    """Add ``adding`` (some of ``subs``, the matcher's whole kind) with what the matcher
    persisted at ``snapshot``."""
    persisted = (
        nullcontext()
        if snapshot is None
        else matcher.persisted(snapshot, subs, write=write, adding=len(adding))
    )
    with persisted:
        for sub in adding:
            try:
                matcher.add(sub)
            except SempsError:  # registered under older limits or code: skip
                continue
