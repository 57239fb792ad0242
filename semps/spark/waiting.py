"""A warning when a Spark job waits for resources instead of running.

A cluster that cannot meet a job's request (``spark.executor.memory`` above what any worker
offers, every core taken by another application) accepts the job and runs nothing, and
Spark's own "Initial job has not accepted any resources" is hidden at the ERROR log level.
:class:`ResourceWatch` polls the status tracker from a daemon thread and, when stages are
active, no executor has registered and no task has run for ``patience`` seconds, tells the
user once per stall. Local masters are not watched: they always have their cores.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from semps.spark.session import note

if TYPE_CHECKING:
    from pyspark import SparkContext

#: Environment variable: seconds without a running task before the warning (default 30).
PATIENCE_ENV = "SEMPS_SPARK_PATIENCE"
DEFAULT_PATIENCE = 30.0


def patience_from_env() -> float:
    """``$SEMPS_SPARK_PATIENCE`` as seconds, else :data:`DEFAULT_PATIENCE`."""
    raw = os.environ.get(PATIENCE_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_PATIENCE
    return value if value > 0 else DEFAULT_PATIENCE


def waiting_message(seconds: float) -> str:
    """The warning for a job that has run no task for ``seconds``."""
    return (
        f"semps: warning: Spark has run no task for {seconds:.0f} s and no executor has "
        "registered: the cluster may not offer what the job asks for (compare "
        "spark.executor.memory, spark.executor.cores and spark.cores.max with the workers' "
        "memory and cores in the master's web UI); still waiting"
    )


class ResourceWatch:
    """Warn (through ``warn``, default :func:`~semps.spark.session.note`) while the
    context's jobs wait for resources. Use as a context manager around the jobs."""

    def __init__(
        self,
        context: SparkContext,
        *,
        patience: float | None = None,
        poll: float = 1.0,
        warn: Callable[[str], None] = note,
    ) -> None:
        self._context = context
        self._patience = patience if patience is not None else patience_from_env()
        self._poll = poll
        self._warn = warn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="semps-resource-watch", daemon=True)

    def __enter__(self) -> ResourceWatch:
        from semps.spark.session import is_local

        if not is_local(str(getattr(self._context, "master", ""))):  # local: never waits
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        idle_since: float | None = None
        warned = False
        while not self._stop.wait(self._poll):
            try:
                stalled = self._stalled()
            except Exception:  # noqa: BLE001  (the context is stopping: nothing to watch)
                return
            if not stalled:
                idle_since, warned = None, False
                continue
            now = time.monotonic()
            idle_since = idle_since if idle_since is not None else now
            if not warned and now - idle_since >= self._patience:
                self._warn(waiting_message(now - idle_since))
                warned = True

    def _stalled(self) -> bool:
        """Stages are active, none has a running or finished task, and no executor has
        registered (a slow executor start is not a stall)."""
        if self._executors() > 0:
            return False
        tracker = self._context.statusTracker()
        infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
        stages = [s for s in infos if s is not None]
        if not stages:
            return False
        return all(s.numActiveTasks == 0 and s.numCompletedTasks == 0 for s in stages)

    def _executors(self) -> int:
        """Executors registered, besides the driver (0 when the tracker cannot say)."""
        try:
            infos = self._context._jsc.sc().statusTracker().getExecutorInfos()
            return max(0, len(infos) - 1)
        except Exception:  # noqa: BLE001
            return 0


__all__ = ["PATIENCE_ENV", "ResourceWatch", "patience_from_env", "waiting_message"]
