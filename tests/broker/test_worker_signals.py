"""Ctrl-C reaches every process of the group: a matching worker leaves stopping to the
broker (which closes its pipe) instead of dying with a KeyboardInterrupt traceback."""

from __future__ import annotations

import os
import signal
import time

from semps_test_support import PATIENCE

from semps.broker.worker import start_worker
from semps.limits import DEFAULT_LIMITS


def test_a_worker_ignores_ctrl_c_and_exits_cleanly_when_its_pipe_closes() -> None:
    worker = start_worker(DEFAULT_LIMITS)
    try:
        assert worker.call(("remove", "nobody")) is None  # started and serving
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGINT)
        time.sleep(0.3)
        assert worker.alive()
        assert worker.call(("remove", "nobody")) is None  # still serving
    finally:
        worker.close(timeout=PATIENCE)
    assert worker.process.exitcode == 0
