"""Registering many semantic subscriptions on two cores: a helper process parses ahead.

Lexing and parsing are about half of a registration's work (``parse_query`` ~30 us a
distinct text at 100k subscriptions, compiling and indexing ~25 us a subscription), and they
are a pure function of the text. :func:`add_parsed_ahead` forks a helper that parses the
texts chunk by chunk, each distinct text once, and sends each chunk's queries back
pickled (the helper is a fork of this process: the same code, nothing from outside; a
pickled query loads in ~5 us, a snapshot's in ~18). This process registers the
subscriptions in order, through the caller's ``add``, with each chunk's queries as the
parse memo (:func:`~semps.ingest.sparql.parse_memo`), so what is registered, and every
error and its message, is what registering them one by one gives: a text the helper did
not parse (it failed there, or the helper is gone) is parsed here, as without it. Inside
a :func:`~semps.ingest.sparql.parse_memo` block of the same limits (``semps index`` and
``semps spark match`` keep every text's parse for a snapshot), that memo gets every parse.

Only worth it for many subscriptions (:data:`MIN_SUBSCRIPTIONS`) on a machine that lets this
process use two cores or more; otherwise every subscription is added here, one by one.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection

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
    if len(subscriptions) < MIN_SUBSCRIPTIONS or _cores() < 2:
        for sub in subscriptions:
            add(sub)
        return
    ctx = multiprocessing.get_context("fork")  # the subscriptions are inherited, not sent
    mine, theirs = ctx.Pipe(duplex=False)
    helper = ctx.Process(
        target=_parse_ahead, args=(theirs, subscriptions, limits), name="semps-parse", daemon=True
    )
    helper.start()
    theirs.close()
    outer = open_memo(limits)  # a caller keeping every parse (semps index) keeps these too
    try:
        for start in range(0, len(subscriptions), CHUNK):
            memo = _next_chunk(mine)
            if outer is not None:
                outer.update(memo)
                memo = outer
            with parse_memo(memo, limits):
                for sub in subscriptions[start : start + CHUNK]:
                    add(sub)
    finally:
        mine.close()
        if helper.is_alive():
            helper.kill()
        helper.join()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _next_chunk(conn: Connection) -> dict[str, Query]:
    """The next chunk's queries by text; none when the helper is gone or sent nothing
    (those texts are then parsed here)."""
    if conn.closed:
        return {}
    try:
        blob = conn.recv_bytes()
    except (EOFError, OSError):
        conn.close()
        return {}
    queries = pickle.loads(blob) if blob else {}  # noqa: S301 - from our own fork
    return queries if type(queries) is dict else {}


def _parse_ahead(conn: Connection, subscriptions: Sequence[Subscription], limits: Limits) -> None:
    """The helper: per chunk, the texts not seen in an earlier chunk, parsed and pickled
    (empty bytes when they cannot be); a text that fails is left out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the adding process's to handle
    gc.disable()  # many small objects, all kept until sent
    seen: set[str] = set()
    try:
        for start in range(0, len(subscriptions), CHUNK):
            queries: dict[str, Query] = {}
            for sub in subscriptions[start : start + CHUNK]:
                text = sub.text
                if text in seen:
                    continue
                seen.add(text)
                try:
                    queries[text] = parse_query(text, limits=limits)
                except Exception:  # noqa: BLE001, S112 - the adding process parses it again and says why
                    continue
            conn.send_bytes(_encoded(queries))
    except (BrokenPipeError, OSError):  # the adding process stopped early
        pass
    finally:
        conn.close()


def _encoded(queries: dict[str, Query]) -> bytes:
    if not queries:
        return b""
    try:
        return pickle.dumps(queries, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return b""  # the adding process parses this chunk itself


__all__ = ["CHUNK", "MIN_SUBSCRIPTIONS", "add_parsed_ahead"]
