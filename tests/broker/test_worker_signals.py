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
    process, conn, _ = start_worker(DEFAULT_LIMITS)
    try:
        conn.send(("remove", "nobody"))
        assert conn.recv() == ("ok", None)  # started and serving
        assert process.pid is not None
        os.kill(process.pid, signal.SIGINT)
        time.sleep(0.3)
        assert process.is_alive()
        conn.send(("remove", "nobody"))
        assert conn.recv() == ("ok", None)  # still serving
    finally:
        conn.close()
        process.join(timeout=PATIENCE)
    assert process.exitcode == 0
