"""When the pool's writing worker saves its matchers' states for the next start
(:meth:`~semps.matcher.base.Matcher.save_state`, ``<kind>.state`` in the data directory).

Saving is seldom and out of the way: a state costs about as much to write as to read (25 s
for a million semantic subscriptions), and a start brings a state up to date by adding and
removing what changed since it was saved, each change costing what registering it does. So
a state is saved once its matchers changed by more than one subscription in
:data:`CHANGED_SHARE` since the last save (or were never saved), and nothing changed for
:data:`QUIET` seconds (the batches of a bulk registration follow each other closely): in a
child process forked for it, which writes the state as it was when forked (copy on write)
while the worker goes on serving; in the worker itself, untimed, where it cannot fork (it
runs threads). The child gives up, leaving no file, when the worker it was forked from is
gone. A failed save is logged, and tried again after the next change.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from semps.broker.worker_load import state_path
from semps.matcher.base import Matcher
from semps.pool import can_fork

__all__ = ["CHANGED_SHARE", "QUIET", "StateSaver"]

#: A state is saved once more than one subscription in this many changed since the last.
CHANGED_SHARE = 20
#: Seconds without a change before a state is saved.
QUIET = 2.0
#: Seconds between two looks at a saving child.
_POLL = 0.5

_log = logging.getLogger("semps.worker")


def _forget_abandoned(folder: Path) -> None:
    """Remove the temporary files of saves whose process is gone (killed outright: one
    that stops on its own removes its file), each as large as a state."""
    for tmp in folder.glob("*.state.*.tmp"):
        try:
            os.kill(int(tmp.name.rsplit(".", 2)[1]), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
        except (ValueError, OSError):  # not a save's name, or a process not ours: leave it
            continue


class StateSaver:
    """The writing worker's saves: what changed since the last, and the saving child."""

    def __init__(
        self, folder: Path, key: bytes, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.folder, self.key, self.clock = folder, key, clock
        _forget_abandoned(folder)
        #: Subscriptions added or removed since the state was last saved (or loaded as
        #: saved); ``None``: never saved.
        self.changed: int | None = None
        self.last_change = clock()
        self._child: tuple[int, int | None] | None = None  # (pid, what it saves) while saving
        self._failed_since = False  # the last save failed, and nothing changed since
        self.saves = 0  # saves finished

    def loaded(self, restored: bool, changed: int) -> None:
        """The worker loaded its matchers: from saved states with ``changed`` subscriptions
        added or removed since (``restored``), or without."""
        self.changed = changed if restored else None
        self.last_change = self.clock()

    def note(self, count: int) -> None:
        """``count`` subscriptions were added or removed."""
        if self.changed is not None:
            self.changed += count
        self.last_change = self.clock()
        self._failed_since = False

    def due(self, size: int) -> bool:
        """Whether a state of ``size`` subscriptions changed enough to be saved again (not
        after a failed save, until something changes)."""
        if self._failed_since:
            return False
        return self.changed is None or self.changed * CHANGED_SHARE > size

    def poll(self, matchers: Mapping[str, Matcher], untimed: Callable[[], None]) -> float | None:
        """The worker is idle: reap a child that finished, and start a save when one is
        due and nothing changed for :data:`QUIET` seconds (``untimed`` is called before a
        save in process). The seconds after which to be asked again, or ``None``."""
        saving = {kind: m for kind, m in matchers.items() if m.saves_state}
        if not saving:
            return None
        if self._child is not None and not self._reaped():
            return _POLL
        if not self.due(sum(len(m) for m in saving.values() if hasattr(m, "__len__"))):
            return None
        wait = QUIET - (self.clock() - self.last_change)
        if wait > 0:
            return wait
        self._start(saving, untimed)
        return _POLL if self._child is not None else None

    def _start(self, saving: Mapping[str, Matcher], untimed: Callable[[], None]) -> None:
        pending, self.changed = self.changed, 0
        if can_fork():
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:  # the child: save, and exit without the parent's clean-up
                code = 1
                try:
                    self._save(saving, lambda: os.getppid() == parent)
                    code = 0
                finally:
                    os._exit(code)
            self._child = (pid, pending)
            return
        untimed()
        try:
            self._save(saving, lambda: True)
        except Exception:  # logged; tried again after the next change
            self._failed(pending)
            return
        self.saves += 1

    def _save(self, saving: Mapping[str, Matcher], keep_going: Callable[[], bool]) -> None:
        started = time.perf_counter()
        for kind, matcher in saving.items():
            try:
                state, beside = state_path(self.folder, kind), self.folder / f"{kind}.snap"
                matcher.save_state(state, self.key, keep_going, beside)
            except Exception as exc:
                if keep_going():  # (else the worker is gone: nobody to tell)
                    _log.warning("saving the %s matcher's state failed: %s", kind, exc)
                raise
        _log.info("matchers' state saved in %.1f s", time.perf_counter() - started)

    def _reaped(self) -> bool:
        """Whether the saving child has finished (it is then forgotten)."""
        assert self._child is not None
        pid, pending = self._child
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 1
        if done == 0:
            return False
        self._child = None
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            self.saves += 1
        else:
            _log.warning("saving the matchers' state failed (the saving process exited %d)", code)
            self._failed(pending)
        return True

    def _failed(self, pending: int | None) -> None:
        """A save failed: what it was to save still counts as changed, and no save is due
        until something changes (a full disk must not make a save per idle moment)."""
        if pending is None or self.changed is None:
            self.changed = None
        else:
            self.changed += pending
        self._failed_since = True

    def close(self) -> None:
        """Stop a saving child (its file is abandoned)."""
        if self._child is not None:
            try:
                os.kill(self._child[0], 9)
                os.waitpid(self._child[0], 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._child = None
