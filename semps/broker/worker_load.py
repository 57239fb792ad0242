"""How a matching worker indexes the stored subscriptions when it starts.

The pipeline sends the subscriptions as columns (:class:`Packed`: pickling a million
:class:`~semps.matcher.values.Subscription` objects took 4 s on each side of the pipe, the
columns a tenth of it). Each matcher then starts from the state it saved in the data
directory, ``<kind>.state`` (:meth:`~semps.matcher.base.Matcher.restore_state`), brought
up to date: the subscriptions it holds that are gone or changed are removed and the others
added, with its snapshot's parses (``<kind>.snap``) when they are many. The pipeline asks
for the states first (:func:`restore`), so that the workers read them while the broker
reads its registry, then sends the subscriptions (:func:`load_matcher`). Without a usable
state (none saved, or one that is damaged, foreign or stale: logged), every subscription
is added, as before states were saved. Either way the matcher answers as one that
registered the subscriptions one by one.
"""

from __future__ import annotations

import logging
import pickle
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from semps.errors import MatcherError, NotFound, SempsError
from semps.matcher.base import Matcher
from semps.matcher.values import Subscription

__all__ = [
    "Loaded",
    "Packed",
    "Rows",
    "load_all",
    "load_matcher",
    "restore",
    "restore_all",
    "state_path",
]

_log = logging.getLogger("semps.worker")


class _ByRow(Sequence[Subscription]):
    """Subscriptions made one at a time when read: the index or slice of ``[]`` told
    apart once, for :class:`Packed` and :class:`Rows`."""

    __slots__ = ()

    @abstractmethod
    def _row(self, row: int) -> Subscription:
        """The subscription at ``row``."""

    @abstractmethod
    def _slice(self, rows: slice) -> Sequence[Subscription]:
        """The subscriptions of ``rows``."""

    @overload
    def __getitem__(self, row: int) -> Subscription: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[Subscription]: ...
    def __getitem__(self, row: int | slice) -> Subscription | Sequence[Subscription]:
        if isinstance(row, slice):
            return self._slice(row)
        return self._row(row)


@dataclass(frozen=True)
class Packed(_ByRow):
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

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled once (the pipeline sends the same columns to every starting worker:
        half a second each at 1M subscriptions), as the bytes of the columns."""
        found = self.__dict__.get("_pickled")
        if found is None:
            columns = (self.ids, self.kinds, self.texts, self.owners, self.names)
            found = pickle.dumps(columns, protocol=pickle.HIGHEST_PROTOCOL)
            object.__setattr__(self, "_pickled", found)
        return (_unpickled, (found,))

    def _row(self, row: int) -> Subscription:
        return Subscription(
            self.ids[row], self.kinds[row], self.texts[row], self.owners[row], self.names[row]
        )

    def _slice(self, rows: slice) -> Sequence[Subscription]:
        return [self._row(r) for r in range(len(self))[rows]]

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


def _unpickled(data: bytes) -> Packed:
    return Packed(*pickle.loads(data))


@dataclass(frozen=True)
class Rows(_ByRow):
    """Some subscriptions of a :class:`Packed`, made one at a time when read."""

    packed: Packed
    rows: list[int]

    def __len__(self) -> int:
        return len(self.rows)

    def _row(self, row: int) -> Subscription:
        return self.packed._row(self.rows[row])

    def _slice(self, rows: slice) -> Sequence[Subscription]:
        return Rows(self.packed, self.rows[rows])

    def __iter__(self) -> Iterator[Subscription]:
        return map(self.packed._row, self.rows)

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


def state_path(folder: Path, kind: str) -> Path:
    """Where a matcher of ``kind`` keeps its state in ``folder``."""
    return folder / f"{kind}.state"


def restore_all(
    matcher_of: Callable[[str], Matcher], folder: Path, key: bytes
) -> dict[str, Mapping[str, str] | None]:
    """Each matcher that saves its state and has one in ``folder``, restored
    (``matcher_of(kind)`` gives the worker's matcher of a kind): by kind, the subscriptions
    it holds, or ``None`` for a state left aside."""
    found: dict[str, Mapping[str, str] | None] = {}
    for path in sorted(folder.glob("*.state")):
        try:
            matcher = matcher_of(path.stem)
        except SempsError:  # not a matcher's (or a plugin no longer installed)
            continue
        if matcher.saves_state:
            found[path.stem] = restore(matcher, path, key)
    return found


def load_all(
    matcher_of: Callable[[str], Matcher],
    packed: Packed,
    restored: dict[str, Mapping[str, str] | None],
    folder: Path | None,
    key: bytes | None,
    *,
    write: bool,
) -> list[Loaded]:
    """Index ``packed`` in the worker's matchers (``matcher_of(kind)``): each matcher
    that restored its state (``restored``, from :func:`restore_all`, or now from
    ``folder`` under ``key``) brought up to date, the others one by one, with what they
    persisted in ``folder`` (:func:`load_matcher`). How each matcher that saves states
    loaded."""
    outcomes = []
    by_kind = packed.by_kind()
    for kind in dict.fromkeys([*by_kind, *restored]):
        try:
            matcher = matcher_of(kind)
        except SempsError:  # a plugin no longer installed: keep serving the others
            continue
        held = restored.get(kind)
        if kind not in restored and folder is not None and key is not None:
            if matcher.saves_state:
                held = restore(matcher, state_path(folder, kind), key)
        subs = by_kind.get(kind, Rows(packed, []))  # none left: all it holds are removed
        snapshot = None if folder is None else folder / f"{kind}.snap"
        loaded = load_matcher(matcher, subs, snapshot, held, write=write)
        if matcher.saves_state:
            outcomes.append(loaded)
    return outcomes


def restore(matcher: Matcher, state: Path, key: bytes) -> Mapping[str, str] | None:
    """The subscriptions of the state ``matcher`` restored from ``state`` (saved under
    ``key``) by id, or ``None``: none there, or one left aside (logged, saying why)."""
    try:
        return matcher.restore_state(state, key)
    except MatcherError as exc:
        _log.warning("%s; indexing the subscriptions one by one instead", exc)
    except Exception as exc:  # noqa: BLE001  (a cache must never stop a worker's start)
        _log.warning("%s: restoring it failed (%r); indexing one by one instead", state, exc)
    return None


def load_matcher(
    matcher: Matcher,
    subs: Rows,
    snapshot: Path | None,
    held: Mapping[str, str] | None,
    *,
    write: bool,
) -> Loaded:
    """Index ``subs`` (all of the matcher's kind) in ``matcher``: bring the state it
    restored (holding ``held``, :func:`restore`) up to date, or (``held`` ``None``: it holds
    nothing) add them one by one; either way with what the matcher persisted at
    ``snapshot`` (rewritten when stale if ``write``). A subscription that no longer
    registers (older limits or code) is skipped."""
    if held is None:
        _add_all(matcher, subs, subs, snapshot, write=write)
        return Loaded(False, len(subs), _size(matcher))
    gone, new = _changes(held, subs)
    for sub_id in gone:
        try:
            matcher.remove(sub_id)
        except NotFound:
            pass
    _add_all(matcher, Rows(subs.packed, new), subs, snapshot, write=write)
    return Loaded(True, len(gone) + len(new), _size(matcher))


def _size(matcher: Matcher) -> int:
    return len(matcher) if hasattr(matcher, "__len__") else 0


def _changes(held: Mapping[str, str], subs: Rows) -> tuple[list[str], list[int]]:
    """The ids ``held`` (a saved state's texts by id) has and ``subs`` has not, or with
    another text; and the rows of ``subs`` that ``held`` has not, or with another text.
    Nothing changed is the common case, checked first in order (two list comparisons in
    C: a state keeps the order its subscriptions were added in, the store's)."""
    ids, texts = subs.packed.ids, subs.packed.texts
    rows = subs.rows
    if len(held) == len(rows):
        if len(rows) == len(ids):  # the whole pack is of this kind: compare the columns
            mine_ids, mine_texts = ids, texts
        else:
            mine_ids, mine_texts = [ids[r] for r in rows], [texts[r] for r in rows]
        if list(held) == mine_ids and list(held.values()) == mine_texts:
            return [], []
    current = subs.texts_by_id()
    gone = [sub_id for sub_id, text in held.items() if current.get(sub_id) != text]
    new = [r for r in rows if held.get(ids[r]) != texts[r]]
    return gone, new


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
