"""The matching worker: a process that reads events and matches them against its own copy of
every stateless matcher's index.

The broker starts one or more of these (:mod:`semps.broker.pipeline`) and talks to each over
a pipe, one request at a time, with tuples:

- ``("load", subscriptions, expansion, snapshot, write)`` index these subscriptions (start-up,
  respawn), with the parses of the semantic snapshot at ``snapshot`` (a path or ``None``),
  rewriting it when stale if ``write`` (one worker of the pool writes);
- ``("add", subscription, old_kind)`` index (or replace) one; ``old_kind`` names the matcher
  that held the id before when it changes kind (removed only once the new one is indexed);
- ``("add_many", subscriptions)`` index new ones, each accepted or refused on its own;
- ``("remove", subscription_id)``, ``("remove_many", ids)``, ``("ontology", expansion)``;
- ``("match", [(event_id, media_type, body), ...])`` read and match a batch of events.

Every request gets one reply: ``("ok", value)`` or ``("error", packed exception)``. A batch's
value is one outcome per event: ``("ok", event_time, [(subscription id, payload head), ...])``
(the payload head is the notification's JSON without its closing brace, see
:class:`~semps.broker.store.EventRecord`) or ``("error", packed exception)`` for an event
that could not be read.

While it works, the worker writes where it is into shared memory (:class:`Progress`): which
event of the batch, and which subscription is being verified. The broker's watchdog reads it
when a batch overruns its time budget, kills the worker and knows whom to blame.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
from collections.abc import Mapping, Sequence
from contextlib import nullcontext, suppress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import orjson

from semps._types import Term
from semps.errors import NotFound, SempsError
from semps.event import Event
from semps.gcpolicy import SERVING_THRESHOLDS, BatchCollector
from semps.ingest.json_event import is_json_media_type, read_json_event
from semps.ingest.rdf import read_event
from semps.limits import DEFAULT_LIMITS, Limits
from semps.matcher.base import MatchContext, Matcher
from semps.matcher.registry import create_matcher
from semps.matcher.semantic.matcher import SemanticMatcher
from semps.matcher.semantic.snapshot import snapshot_memo
from semps.matcher.values import Match, Subscription, Verdict
from semps.ontology.expansion import Expansion
from semps.terms import RDF_TYPE, XSD, Literal, n3


def _dumps(value: object) -> str:
    """Compact JSON (orjson: several times faster than ``json`` for the payloads)."""
    return orjson.dumps(value).decode()


#: Phases a worker reports in :class:`Progress` (WARMING: compiling a matcher's kernels on
#: its first use, which the watchdog does not time).
IDLE, READING, MATCHING, WARMING = 0, 1, 2, 3
_SUB_BYTES = 512


class Progress:
    """Where a worker is, in memory shared with the broker (written by the worker only).

    ``phase`` is IDLE, READING or MATCHING; ``event`` the index of the event in the batch;
    ``subscription`` the id of the subscription being verified (empty when none).
    """

    def __init__(self, ctx: Any) -> None:
        self._phase = ctx.RawValue(ctypes.c_int64, 0)
        self._event = ctx.RawValue(ctypes.c_int64, 0)
        self._sub = ctx.RawArray(ctypes.c_char, _SUB_BYTES)
        self._ticks = ctx.RawValue(ctypes.c_int64, 0)

    def at(self, phase: int, event: int) -> None:
        self._sub.value = b""
        self._event.value = event
        self._phase.value = phase

    def watch(self, subscription_id: str) -> None:
        """Called by matchers before they verify a subscription (each call is progress,
        even for the same subscription on the next event)."""
        self._sub.value = subscription_id.encode()[: _SUB_BYTES - 1]
        self._ticks.value += 1

    def read(self) -> tuple[int, int, str, int]:
        """(phase, event index, subscription id, watch calls so far)."""
        return (
            int(self._phase.value),
            int(self._event.value),
            self._sub.value.decode("utf-8", "replace"),
            int(self._ticks.value),
        )


def pack_error(exc: BaseException) -> tuple[type[BaseException], str, dict[str, Any]]:
    """An exception as picklable parts (ours have keyword-only arguments pickle can't
    replay)."""
    return (type(exc), str(exc), dict(getattr(exc, "__dict__", {})))


def unpack_error(packed: tuple[type[BaseException], str, dict[str, Any]]) -> BaseException:
    """The exception :func:`pack_error` took apart."""
    cls, message, attrs = packed
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    exc.__dict__.update(attrs)
    return exc


def payload_head(match: Match, limits: Limits = DEFAULT_LIMITS) -> str:
    """The notification of ``match`` as JSON without its closing brace.

    A count over ``limits.max_count`` is reported as that and ``"count_truncated": true``;
    solutions that would take the notification past ``limits.max_notification_bytes`` are
    left out from the end, with ``"solutions_truncated": true``.
    """
    tail = _tail(match.count, match.solutions, not match.detail, limits)
    usual = _usual_head(match.subscription, _dumps(match.event), tail, limits)
    if usual is not None:
        return usual
    solutions = match.solutions[: limits.max_solutions]
    rendered = _rendered(solutions)
    count = match.count
    head = {
        "subscription": match.subscription,
        "event": match.event,
        "count": min(count, limits.max_count),
    }
    if count > limits.max_count:
        head["count_truncated"] = True
    head["solutions"] = rendered
    if match.detail:
        head["detail"] = dict(match.detail)
    whole = _dumps(head)  # everything fits
    if len(whole) + 64 <= limits.max_notification_bytes:
        return whole[:-1]
    del head["solutions"]
    head.pop("detail", None)
    tail = f',"detail":{_dumps(dict(match.detail))}' if match.detail else ""
    text = _dumps(head)[:-1]
    budget = limits.max_notification_bytes - len(text) - len(tail) - 64
    parts: list[str] = []
    for solution in solutions:
        part = _dumps({k: n3(v) for k, v in solution.items()})
        budget -= len(part) + 1
        if budget < 0:
            tail = ',"solutions_truncated":true' + tail
            break
        parts.append(part)
    return f'{text},"solutions":[{",".join(parts)}]{tail}'


def verdict_heads(
    found: Sequence[tuple[str, Verdict]], event_id: str, limits: Limits = DEFAULT_LIMITS
) -> list[tuple[str, str]]:
    """``(subscription id, payload head)`` of each ``(id, verdict)`` matched by event
    ``event_id``: :func:`payload_head` of its match, with each verdict's solutions
    rendered once for all the subscriptions that share it (subscriptions of one shape)."""
    event = _dumps(event_id)
    tails: dict[int, str | None] = {}  # by verdict: what follows the ids, or None: no fast path
    out: list[tuple[str, str]] = []
    for sub_id, verdict in found:
        key = id(verdict)
        tail = tails.get(key, _UNSEEN)
        if tail is _UNSEEN:
            tail = tails[key] = _tail(
                verdict.count, verdict.solutions, not verdict.truncated, limits
            )
        head = _usual_head(sub_id, event, tail, limits)
        if head is None:
            detail = {"truncated": True} if verdict.truncated else {}
            match = Match(sub_id, event_id, verdict.count, verdict.solutions, detail)
            head = payload_head(match, limits)
        out.append((sub_id, head))
    return out


#: A verdict not rendered yet (:func:`verdict_heads`).
_UNSEEN = "\x00unseen"


def _tail(
    count: int, solutions: Sequence[Mapping[str, Term]], plain: bool, limits: Limits
) -> str | None:
    """``,"count":...,"solutions":[...]`` of the usual notification: a ``plain`` match
    (no detail) whose count is within ``limits.max_count``; else ``None``."""
    if not plain or count > limits.max_count:
        return None
    rendered = _rendered(solutions[: limits.max_solutions])
    return f',"count":{count},"solutions":{_dumps(rendered)}'


def _usual_head(sub_id: str, event: str, tail: str | None, limits: Limits) -> str | None:
    """The usual notification in one piece (``event``: the event id as JSON), or ``None``
    when there is no ``tail`` or it would not fit in ``limits.max_notification_bytes``."""
    if tail is None:
        return None
    head = f'{{"subscription":{_dumps(sub_id)},"event":{event}{tail}'
    return head if len(head) + 65 <= limits.max_notification_bytes else None


def _rendered(solutions: Sequence[Mapping[str, Term]]) -> list[dict[str, str]]:
    """Solutions with their terms in N-Triples (IRIs in ``<>``, blank nodes as they are)."""
    out: list[dict[str, str]] = []
    for solution in solutions:  # (loops: cheaper than comprehensions for one or two)
        row = {}
        for name, value in solution.items():
            if type(value) is not str:
                row[name] = n3(value)
            elif value[:2] == "_:":
                row[name] = value
            else:
                row[name] = "<" + value + ">"
        out.append(row)
    return out


class Worker:
    """The state of one matching worker (also usable in process, as the tests do)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, progress: Progress | None = None):
        self.limits = limits
        self.progress = progress
        self.matchers: dict[str, Matcher] = {}
        self.expansion = Expansion()
        self._warm: set[str] = set()
        self._collector = BatchCollector()

    def matcher(self, kind: str) -> Matcher:
        found = self.matchers.get(kind)
        if found is None:
            found = self.matchers[kind] = create_matcher(kind)
            found.limits = self.limits
        return found

    def load(
        self,
        subscriptions: Sequence[Subscription],
        expansion: Expansion,
        snapshot: Path | None = None,
        write_snapshot: bool = True,
    ) -> int:
        """Index ``subscriptions`` (with the parses of the semantic ``snapshot``, which is
        rewritten when it did not hold them all if ``write_snapshot``); returns the
        matchers' sizes."""
        self.expansion = expansion
        memo = (
            nullcontext()
            if snapshot is None
            else snapshot_memo(snapshot, subscriptions, self.limits, write=write_snapshot)
        )
        with memo:
            for sub in subscriptions:
                try:
                    self.matcher(sub.kind).add(sub)
                except SempsError:  # registered under older limits or code: skip, keep serving
                    continue
        _settle()
        return sum(_size(m) for m in self.matchers.values())

    def add(self, sub: Subscription, old_kind: str | None) -> None:
        self.matcher(sub.kind).add(sub)  # raises before anything changes
        if old_kind is not None and old_kind != sub.kind and old_kind in self.matchers:
            self.remove_from(old_kind, sub.id)

    def add_many(self, subs: Sequence[Subscription]) -> list[Any]:
        """Index new subscriptions; per subscription ``None`` or its packed error."""
        outcomes: list[Any] = []
        for sub in subs:
            try:
                self.matcher(sub.kind).add(sub)
                outcomes.append(None)
            except SempsError as exc:
                outcomes.append(pack_error(exc))
        if len(subs) > 1:
            _settle()
        return outcomes

    def remove(self, sub_id: str) -> None:
        for kind in list(self.matchers):
            self.remove_from(kind, sub_id)

    def remove_from(self, kind: str, sub_id: str) -> None:
        try:
            self.matchers[kind].remove(sub_id)
        except NotFound:
            pass

    def warm_up(self) -> None:
        """Run a made-up event (alone, and in a batch) through each matcher that has
        subscriptions and has not matched yet: its compiled kernels load or compile now,
        untimed, instead of inside the first real event's time budget."""
        for kind, matcher in self.matchers.items():
            if kind in self._warm or not _size(matcher):
                continue
            if self.progress is not None:
                self.progress.at(WARMING, 0)
            self._warm.add(kind)
            matcher.warm()
            for n in (1, 20):
                events = [_warm_up_event(i) for i in range(n)]
                contexts = [MatchContext(e, self.expansion, limits=self.limits) for e in events]
                try:
                    matcher.match_batch(contexts)
                except Exception:  # noqa: S112  (a made-up event: nothing to report)
                    continue

    def read(self, event_id: str, media_type: str, body: bytes) -> Event:
        limits = self.limits
        if is_json_media_type(media_type):
            return read_json_event(body, event_id=event_id, max_bytes=limits.max_event_bytes)
        return read_event(
            body,
            event_id=event_id,
            media_type=media_type,
            max_bytes=limits.max_event_bytes,
            limits=limits,
        )

    def match(self, items: Sequence[tuple[str, str, bytes]]) -> list[tuple[Any, ...]]:
        """Read and match a batch; one outcome per item (see the module docstring), the
        cyclic GC scheduled around it (:class:`~semps.gcpolicy.BatchCollector`)."""
        progress = self.progress
        untimed = None if progress is None else lambda: progress.at(WARMING, 0)
        with self._collector.batch(untimed):  # a full collection: ~1 s at 100k subscriptions
            return self._match(items)

    def _match(self, items: Sequence[tuple[str, str, bytes]]) -> list[tuple[Any, ...]]:
        progress = self.progress
        events: list[Event] = []
        contexts: list[MatchContext] = []
        outcomes: list[tuple[Any, ...] | None] = []
        self.warm_up()
        watch = progress.watch if progress is not None else None
        closing = any(_size(m) for m in self.matchers.values())
        for i, (event_id, media_type, body) in enumerate(items):
            if progress is not None:
                progress.at(READING, i)
            try:
                event = self.read(event_id, media_type, body)
                context = MatchContext(event, self.expansion, watch=watch, limits=self.limits)
                if closing and event.triples:
                    context.parts  # noqa: B018  (the closure, here: its limit is per event)
            except SempsError as exc:
                outcomes.append(("error", pack_error(exc)))
                continue
            events.append(event)
            contexts.append(context)
            outcomes.append(None)
        limits = self.limits
        found: list[list[tuple[str, str]]] = [[] for _ in events]
        for matcher in self.matchers.values():
            if not _size(matcher):
                continue
            if progress is not None:
                progress.at(MATCHING, 0)
            if isinstance(matcher, SemanticMatcher):  # a verdict rendered once per shape
                for i, verdicts in enumerate(matcher.verdict_batch(contexts)):
                    found[i] += verdict_heads(verdicts, events[i].id, limits)
                continue
            for i, matches in enumerate(matcher.match_batch(contexts)):
                found[i] += [(m.subscription, payload_head(m, limits)) for m in matches]
        if progress is not None:
            progress.at(IDLE, 0)
        it = iter(zip(events, found, strict=True))
        results: list[tuple[Any, ...]] = []
        for outcome in outcomes:
            if outcome is not None:
                results.append(outcome)
                continue
            event, notes = next(it)
            results.append(("ok", event.time, notes))
        return results


def _warm_up_event(i: int) -> Event:
    node = f"urn:semps:warm-up:{i}"
    one = Literal(str(i), XSD + "integer")
    triples = ((node, RDF_TYPE, node + "/C"), (node, node + "/p", one))
    return Event(f"semps-warm-up-{i}", triples, {"a": float(i)}, {"a": (0.0, float(i))})


def _settle() -> None:
    """Move the index built so far out of the cyclic GC's sight: a full collection would
    otherwise walk every subscription's objects, and the events' short-lived tuples trigger
    collections often (to_partab: 260 us an event with the GC walking a 10k index, 114 us
    without)."""
    gc.collect()
    gc.freeze()


def _size(matcher: Matcher) -> int:
    return len(matcher) if hasattr(matcher, "__len__") else 1


def serve(conn: Connection, limits: Limits, progress: Progress) -> None:
    """The worker process's loop: one reply per request until the pipe closes."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # Ctrl-C reaches the whole process group: the broker stops this process (it closes the
    # pipe, and recv ends), so a KeyboardInterrupt here would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*SERVING_THRESHOLDS)  # events allocate many small tuples, none cyclic
    worker = Worker(limits, progress)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):  # the broker is gone
            return
        op = request[0]
        try:
            if op == "match":
                value: Any = worker.match(request[1])
            elif op == "add":
                worker.add(request[1], request[2])
                value = None
            elif op == "remove":
                worker.remove(request[1])
                value = None
            elif op == "add_many":
                value = worker.add_many(request[1])
            elif op == "remove_many":
                for sub_id in request[1]:
                    worker.remove(sub_id)
                value = None
            elif op == "ontology":
                worker.expansion = request[1]
                value = None
            elif op == "load":
                value = worker.load(request[1], request[2], request[3], request[4])
            else:
                msg = f"unknown worker request {op!r}"
                raise ValueError(msg)
            reply: tuple[Any, ...] = ("ok", value)
        except Exception as exc:  # reported to the broker, which decides
            reply = ("error", pack_error(exc))
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return
        if op != "match" and not conn.poll(0):
            # Idle after a change: warm up now (loading the kernels takes about a second)
            # rather than inside the next event's request. A failure is ignored here: the
            # kernels then load on first use, as they would without this.
            with suppress(Exception):
                worker.warm_up()
            progress.at(IDLE, 0)


def start_worker(
    limits: Limits,
) -> tuple[multiprocessing.process.BaseProcess, Connection, Progress]:
    """Spawn a worker process; returns it, the broker's end of its pipe and its progress."""
    ctx = multiprocessing.get_context("spawn")
    progress = Progress(ctx)
    ours, theirs = ctx.Pipe(duplex=True)
    process = ctx.Process(
        target=serve, args=(theirs, limits, progress), name="semps-matcher", daemon=True
    )
    process.start()
    theirs.close()
    return process, ours, progress
