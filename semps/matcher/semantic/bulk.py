"""Registering many semantic subscriptions on two cores: a helper process parses ahead.

Lexing and parsing are about half of a registration's work (``parse_query`` ~30 us a
distinct text at 100k subscriptions, compiling and indexing ~25 us a subscription), and they
are a pure function of the text. :func:`add_parsed_ahead` forks a helper (a
:class:`semps.pool.Worker`) that parses the texts chunk by chunk as asked, each distinct
text once, and sends each chunk's queries back pickled (the helper is a fork of this
process: the same code, nothing from outside; a pickled query loads in ~5 us, a snapshot's
in ~18). This process registers the
subscriptions in order, through the caller's ``add``, with each chunk's queries as the
parse memo (:func:`~semps.ingest.sparql.parse_memo`), so what is registered, and every
error and its message, is what registering them one by one gives: a text the helper did
not parse (it failed there, or the helper is gone) is parsed here, as without it. Inside
a :func:`~semps.ingest.sparql.parse_memo` block of the same limits (``semps index`` and
``semps spark match`` keep every text's parse for a snapshot), that memo gets every parse.

Only worth it for many subscriptions (:data:`MIN_SUBSCRIPTIONS`) on a machine that lets this
process use two cores or more, and where it may fork (:func:`semps.pool.can_fork`);
otherwise every subscription is added here, one by one.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Sequence
from typing import Any

from semps import pool
from semps.ingest.sparql import Query, open_memo, parse_memo, parse_query
from semps.limits import Limits
from semps.matcher.values import Subscription

#: Fewer subscriptions than this are added one by one (a helper costs a fork and ~50 ms).
MIN_SUBSCRIPTIONS = 8192
#: Subscriptions a chunk (the helper parses chunk k + 1 while this process adds chunk k).
CHUNK = 4096


def add_parsed_ahead(
    subscriptions: Sequence[Subscription],
    add: Callable[[Subscription], None],
    limits: Limits,
) -> None:
    """``add(sub)`` for each subscription, in order, with its text parsed ahead by a helper
    process when there are many and two cores (see the module doc). An exception from
    ``add`` stops the helper and propagates."""
    if len(subscriptions) < MIN_SUBSCRIPTIONS or _cores() < 2 or not pool.can_fork():
        for sub in subscriptions:
            add(sub)
        return
    # forked: the subscriptions are inherited, not sent
    (helper,) = pool.start_workers(1, _parser, (subscriptions, limits), inherit=True)
    starts = range(0, len(subscriptions), CHUNK)
    ahead = _Ahead(helper, starts)
    outer = open_memo(limits)  # a caller keeping every parse (semps index) keeps these too
    try:
        for start in starts:
            memo = ahead.next_chunk()
            if outer is not None:
                outer.update(memo)
                memo = outer
            with parse_memo(memo, limits):
                for sub in subscriptions[start : start + CHUNK]:
                    add(sub)
    finally:
        helper.kill()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


class _Ahead:
    """The helper's chunks, asked for :data:`AHEAD` at a time: while this process adds
    chunk k, the helper parses the next."""

    def __init__(self, helper: pool.Worker, starts: Sequence[int]) -> None:
        self.helper: pool.Worker | None = helper
        self.starts = starts
        self.asked = 0
        self._ask(AHEAD)

    def _ask(self, upto: int) -> None:
        while self.helper is not None and self.asked < min(upto, len(self.starts)):
            try:
                self.helper.send(self.starts[self.asked])
            except OSError:  # the helper is gone: this process parses the rest
                self.helper = None
                return
            self.asked += 1

    def next_chunk(self) -> dict[str, Query]:
        """The next chunk's queries by text; none when the helper is gone or could not
        send them (those texts are then parsed here)."""
        if self.helper is None:
            return {}
        try:
            queries = self.helper.recv()
        except pool.WorkerGone:
            self.helper = None
            return {}
        except Exception:  # noqa: BLE001 - the chunk did not come through: parsed here
            queries = {}
        self._ask(self.asked + 1)
        return queries if type(queries) is dict else {}


#: Chunks asked of the helper ahead of the one being added.
AHEAD = 2


class _Parser:
    """The helper's handler: a chunk (by its first subscription's position), the texts
    not seen in an earlier chunk, parsed; a text that fails is left out (the adding
    process parses it again and says why)."""

    def __init__(self, subscriptions: Sequence[Subscription], limits: Limits) -> None:
        self.subscriptions, self.limits = subscriptions, limits
        self.seen: set[str] = set()
        gc.disable()  # many small objects, all kept until sent

    def __call__(self, request: int) -> dict[str, Query]:
        start = request
        queries: dict[str, Query] = {}
        for sub in self.subscriptions[start : start + CHUNK]:
            text = sub.text
            if text in self.seen:
                continue
            self.seen.add(text)
            try:
                queries[text] = parse_query(text, limits=self.limits)
            except Exception:  # noqa: BLE001, S112 - the adding process parses it again and says why
                continue
        return queries


def _parser(subscriptions: Sequence[Subscription], limits: Limits, progress: Any) -> _Parser:
    del progress
    return _Parser(subscriptions, limits)


__all__ = ["AHEAD", "CHUNK", "MIN_SUBSCRIPTIONS", "add_parsed_ahead"]
