"""Worker processes, the one way semps runs work in other processes.

Each :class:`Worker` is a process with its own duplex pipe: the parent sends requests, the
worker answers each with one reply, in order (``("ok", value)`` or ``("error", packed
exception)``, re-raised in the parent by :meth:`Worker.recv`). Several requests may be in
flight; :meth:`Worker.post` sends one whose reply is dropped. In the worker, a *handler*
built by the caller's ``target(*args, progress)`` answers each request
(:func:`serve`); when nothing waits after a reply, its ``idle()`` runs (a broker worker
warms its kernels there), and again after the seconds it returns if nothing came
meanwhile. A worker ignores Ctrl-C (the parent stops it by closing its pipe or killing it)
and stops when the pipe closes.

**Progress and the watchdog.** A worker started with ``progress=True`` writes where it is
into shared memory (:class:`Progress`: a phase, an item, the subject of its work, a tick
per step); :meth:`Worker.call` sends a request and, while it waits, raises
:class:`Overrun` as soon as the worker dies or its progress stands still while it
computes for longer than the request's time budget: the worker's CPU seconds are counted,
not the clock's, so work that waits for a core on a busy machine is not cut off (a worker
standing still without computing is stopped after :data:`STUCK` times its budget). Phase
:data:`UNTIMED` is never timed (compiling kernels).

**Fork or spawn.** :func:`context` forks when the workers should inherit this process's
memory (an index built here, shared copy-on-write) and forking is safe: the platform forks
and this process runs one thread (a fork copies only the calling thread: a lock another
thread holds stays held in the child). Otherwise it spawns (a fresh interpreter: the
target and its arguments are pickled). Callers that only make sense forked check
:func:`can_fork` first and work in process without it.

Example:
    >>> from semps.pool import _echo
    >>> workers = start_workers(2, _echo, ("ok: ",), inherit=False)
    >>> [w.call("a") for w in workers]
    ['ok: a', 'ok: a']
    >>> list(ordered_replies(workers, ["x", "y", "z"]))
    ['ok: x', 'ok: y', 'ok: z']
    >>> for w in workers:
    ...     w.close()
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Any

__all__ = [
    "IDLE",
    "POLL",
    "UNTIMED",
    "Handler",
    "Overrun",
    "Progress",
    "Worker",
    "WorkerGone",
    "can_fork",
    "context",
    "ordered_replies",
    "pack_error",
    "serve",
    "start_workers",
    "unpack_error",
]

#: The phase of a worker waiting for a request, and of one whose work is not timed.
IDLE, UNTIMED = 0, -1
#: How often (seconds) :meth:`Worker.call` looks at a worker's progress while it waits.
POLL = 0.05
#: A worker standing still is an overrun once it has *computed* for its budget (CPU
#: seconds, so a machine busy with other work does not make honest work overrun), or once
#: this many times its budget has passed on the clock (a worker stuck without computing).
STUCK = 30
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_SUBJECT_BYTES = 512


class Progress:
    """Where a worker is, in memory shared with its parent (written by the worker only).

    ``phase`` is the caller's (:data:`IDLE`, :data:`UNTIMED` or its own numbers); ``item``
    the index of the item being worked on; ``subject`` what the work is about (a
    subscription id; empty when none); every :meth:`watch` is a tick of progress.
    """

    def __init__(self, ctx: Any) -> None:
        self._phase = ctx.RawValue(ctypes.c_int64, 0)
        self._item = ctx.RawValue(ctypes.c_int64, 0)
        self._subject = ctx.RawArray(ctypes.c_char, _SUBJECT_BYTES)
        self._ticks = ctx.RawValue(ctypes.c_int64, 0)

    def at(self, phase: int, item: int) -> None:
        """Now in ``phase`` at ``item`` (the subject cleared)."""
        self._subject.value = b""
        self._item.value = item
        self._phase.value = phase

    def watch(self, subject: str) -> None:
        """Now working on ``subject`` (each call is progress, even for the same one)."""
        self._subject.value = subject.encode()[: _SUBJECT_BYTES - 1]
        self._ticks.value += 1

    def read(self) -> tuple[int, int, str, int]:
        """(phase, item, subject, ticks so far)."""
        return (
            int(self._phase.value),
            int(self._item.value),
            self._subject.value.decode("utf-8", "replace"),
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


class Overrun(Exception):
    """A worker overran its time budget or died while answering; where it was then.
    ``late`` says how it overran (``"took more than 2 s"``), empty when it died."""

    def __init__(self, phase: int, item: int, subject: str, why: str, late: str = "") -> None:
        super().__init__(why)
        self.phase, self.item, self.subject, self.why = phase, item, subject, why
        self.late = late


class WorkerGone(Exception):
    """A worker's pipe closed before its reply came (the process died or was killed)."""


#: What answers a worker's requests (built in the worker by its ``target``): a request ->
#: the reply's value (an exception is sent back and raised in the parent). It may have an
#: ``idle()`` method, run when no request waits after a reply; when it returns a number of
#: seconds, it runs again after them unless a request came.
Handler = Callable[[Any], Any]


def can_fork() -> bool:
    """Whether a worker may be forked from this process: the platform forks and this
    process runs one thread."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def context(inherit: bool) -> Any:
    """The multiprocessing context of workers that should inherit this process's memory
    (``inherit``: forked when :func:`can_fork`) or need not (spawned)."""
    return multiprocessing.get_context("fork" if inherit and can_fork() else "spawn")


def serve(conn: Connection, handler: Handler) -> None:
    """A worker's loop: one reply per request until the pipe closes; ``handler.idle()``
    (when it has one) whenever no request waits after a reply, and again after the
    seconds it returns (a number) while none comes."""
    idle: Callable[[], float | None] | None = getattr(handler, "idle", None)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):  # the parent is gone, or closed the pipe
            return
        try:
            reply: tuple[Any, ...] = ("ok", handler(request))
        except Exception as exc:  # reported to the parent, which decides
            reply = ("error", pack_error(exc))
        try:
            _send(conn, reply)
        except OSError:  # the parent is gone
            return
        wait: float | None = 0
        while idle is not None and wait is not None and not conn.poll(wait):
            wait = None
            with suppress(Exception):  # idle work is optional: a failure only skips it
                wait = idle()


def _send(conn: Connection, reply: tuple[Any, ...]) -> None:
    try:
        conn.send(reply)
    except OSError:
        raise
    except Exception as exc:  # the value would not pickle (nothing was sent): say so
        conn.send(("error", pack_error(exc)))


def _main(
    conn: Connection, target: Callable[..., Handler], args: tuple[Any, ...], progress: Any
) -> None:
    """The worker process: Ctrl-C is the parent's to handle (it reaches the whole process
    group; the parent stops its workers), then :func:`serve` the target's handler."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(conn, target(*args, progress))


class Worker:
    """A worker process, the parent's end of its pipe and its :class:`Progress`.

    Args:
        target: called in the worker as ``target(*args, progress)`` (``progress`` is
            ``None`` unless asked for); returns the :class:`Handler`. Spawned workers get
            ``target`` and ``args`` pickled (a module-level function, picklable values).
        ctx: the multiprocessing context (:func:`context`); shared memory the target
            reads (arrays, locks) must come from it.
        role: names the worker in errors (``"the matching worker died"``).
        progress: whether the worker reports its progress (needed by :meth:`call`'s
            watchdog).
    """

    def __init__(
        self,
        target: Callable[..., Handler],
        args: tuple[Any, ...] = (),
        *,
        ctx: Any,
        role: str = "semps",
        progress: bool = False,
    ) -> None:
        self.role = role
        self.progress: Progress | None = Progress(ctx) if progress else None
        ours, theirs = ctx.Pipe(duplex=True)
        self.conn: Connection = ours
        self.process = ctx.Process(
            target=_main,
            args=(theirs, target, args, self.progress),
            name=f"semps-{role.replace(' ', '-')}",
            daemon=True,
        )
        self.process.start()
        theirs.close()
        #: Per request in flight, in order: whether its reply is dropped (posted).
        self._in_flight: deque[bool] = deque()

    @property
    def pid(self) -> int | None:
        return self.process.pid  # type: ignore[no-any-return]

    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system) the worker process has used, or ``None`` where
        ``/proc`` does not say (then the watchdog times work on the clock)."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / _TICK

    def send(self, request: Any) -> None:
        """Send a request; its reply is read by :meth:`recv` (replies come in order)."""
        self.conn.send(request)
        self._in_flight.append(False)

    def post(self, request: Any) -> None:
        """Send a request whose reply is dropped (read and forgotten by :meth:`recv`)."""
        self.conn.send(request)
        self._in_flight.append(True)

    def recv(self) -> Any:
        """The value of the reply to the oldest request sent and not answered yet (an
        error reply raised here); replies of posted requests before it are dropped.

        Raises:
            WorkerGone: the worker's pipe closed first.
        """
        while True:
            try:
                status, value = self.conn.recv()
            except (EOFError, OSError) as exc:
                msg = f"the {self.role} worker died ({str(exc) or type(exc).__name__})"
                raise WorkerGone(msg) from exc
            if self._in_flight and self._in_flight.popleft():
                continue
            if status == "error":
                raise unpack_error(value)
            return value

    def call(
        self,
        request: Any,
        timeout: float | None = None,
        budget: Callable[[tuple[int, int, str, int]], float] | None = None,
    ) -> Any:
        """Send ``request`` and wait for its value, watching the worker: an
        :class:`Overrun` when it dies, or (with a ``timeout``) when its progress stands
        still while it computes for longer than ``budget(where it is)`` (default
        ``timeout``; CPU seconds, see :data:`STUCK`) and the whole request took longer than
        ``timeout`` (phase :data:`UNTIMED` is not timed).

        Raises:
            Overrun: the worker died or overran (it is left as it is: kill it).
        """
        if self._in_flight or (timeout is not None and self.progress is None):
            msg = "call needs no other request in flight, and progress for a timeout"
            raise ValueError(msg)
        self.send(request)
        seen = self._where()
        since = started = time.monotonic()
        cpu_since = self.cpu_seconds()
        while True:
            if self.conn.poll(POLL):
                try:
                    return self.recv()
                except WorkerGone as exc:
                    raise Overrun(seen[0], seen[1], seen[2], str(exc)) from exc
            now = time.monotonic()
            if not self.alive():
                phase, item, subject, _ = self._where()
                why = f"the {self.role} worker died (exit {self.process.exitcode})"
                raise Overrun(phase, item, subject, why)
            if timeout is None:
                continue
            where = self._where()
            if where != seen or where[0] == UNTIMED:
                seen, since, cpu_since = where, now, self.cpu_seconds()
                continue
            allowed = timeout if budget is None else budget(where)
            if now - since > allowed and now - started > timeout:
                cpu = self.cpu_seconds()
                computed = now - since if cpu is None or cpu_since is None else cpu - cpu_since
                late = ""
                if computed > allowed:
                    late = f"took more than {timeout:g} s"
                elif now - since > STUCK * allowed:
                    late = f"made no progress for {STUCK * allowed:g} s"
                if late:
                    raise Overrun(*where[:3], f"{self.role} {late}", late)

    def _where(self) -> tuple[int, int, str, int]:
        return (IDLE, 0, "", 0) if self.progress is None else self.progress.read()

    def kill(self) -> None:
        """Stop the worker at once (and close the pipe)."""
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()

    def close(self, timeout: float = 5) -> None:
        """Close the pipe (the worker's loop ends) and wait for the process, killing it
        after ``timeout`` seconds."""
        self.conn.close()
        self.process.join(timeout=timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)


def start_workers(
    n: int,
    target: Callable[..., Handler],
    args: tuple[Any, ...] = (),
    *,
    inherit: bool,
    role: str = "semps",
    progress: bool = False,
) -> list[Worker]:
    """``n`` workers of one :func:`context`, each serving ``target(*args, progress)``."""
    ctx = context(inherit)
    return [Worker(target, args, ctx=ctx, role=role, progress=progress) for _ in range(n)]


def ordered_replies(
    workers: Sequence[Worker], requests: Iterable[Any], ahead: int = 2
) -> Iterator[Any]:
    """The values of ``requests``' replies, in request order: request ``i`` goes to worker
    ``i mod n``, at most ``ahead`` requests in flight per worker. A failed request's error
    is raised when its turn comes; the caller stops the workers if it gives up."""
    pending = iter(enumerate(requests))
    sent = 0

    def top_up(upto: int) -> None:
        nonlocal sent
        while sent < upto:
            step = next(pending, None)
            if step is None:
                return
            workers[step[0] % len(workers)].send(step[1])
            sent += 1

    top_up(ahead * len(workers))
    done = 0
    while done < sent:
        value = workers[done % len(workers)].recv()
        done += 1
        top_up(done + ahead * len(workers))
        yield value


def _echo(prefix: str, progress: Progress | None) -> Handler:
    """A handler answering ``prefix + request`` (the module doc's example)."""
    del progress
    return lambda request: prefix + request
