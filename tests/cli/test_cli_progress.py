"""Long CLI work shows progress on a terminal, on stderr only; piped, nothing extra.

The commands run for real on a pseudo-terminal (stderr and stdin on it, stdout to a file):
a user at a terminal sees what is being done (reading, registering, matching; loading a
content file by bytes) and the answers on stdout are the same bytes as without one.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from semps_test_support import PATIENCE, workload_options

from semps.cli.progress import progress


def _on_terminal(args: list[str], out: Path) -> tuple[int, str]:
    """Run ``semps args`` with stderr on a 120-column pseudo-terminal and stdout into
    ``out``; its exit status and what the terminal showed."""
    ours, theirs = pty.openpty()
    fcntl.ioctl(theirs, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with out.open("wb") as stdout:
        done = subprocess.Popen(
            [sys.executable, "-m", "semps", *args], stdin=theirs, stdout=stdout, stderr=theirs
        )
        os.close(theirs)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(ours, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            shown += chunk
        status = done.wait(timeout=PATIENCE)
    os.close(ours)
    return status, shown.decode("utf-8", "replace")


def _piped(args: list[str], out: Path) -> subprocess.CompletedProcess[bytes]:
    with out.open("wb") as stdout:
        return subprocess.run(
            [sys.executable, "-m", "semps", *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=PATIENCE,
        )


def test_semps_match_shows_reading_registering_and_matching(
    workloads: Path, tmp_path: Path
) -> None:
    args = ["match", *workload_options(workloads / "synthetic-s7"), "--workers", "2"]
    status, shown = _on_terminal(args, tmp_path / "tty.jsonl")
    assert status == 0, shown
    for step, total in (("reading", "100/100"), ("registering", "100/100"), ("matching", "30/30")):
        assert step in shown and total in shown, shown
    assert "subscription/s" in shown and "event/s" in shown
    piped = _piped(args, tmp_path / "piped.jsonl")
    assert piped.returncode == 0 and piped.stderr == b""
    answers = (tmp_path / "piped.jsonl").read_bytes()
    assert answers.count(b"\n") == 30
    assert (tmp_path / "tty.jsonl").read_bytes() == answers


def test_content_match_shows_the_loading_by_bytes(tmp_path: Path) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text(
        "".join(
            f'{{"id": "s{i}", "constraints": "a1 between {i / 100} and {i / 100 + 0.5}"}}\n'
            for i in range(50)
        )
    )
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "e", "values": {"a1": 0.4}}\n')
    args = ["content", "match", "--subscriptions", str(subs), "--events", str(events)]
    status, shown = _on_terminal(args, tmp_path / "tty.jsonl")
    assert status == 0, shown
    size = subs.stat().st_size
    assert "loading" in shown and f"{size / 1024:.2f}k/{size / 1024:.2f}k" in shown, shown
    piped = _piped(args, tmp_path / "piped.jsonl")
    assert piped.returncode == 0 and piped.stderr == b""
    assert (tmp_path / "tty.jsonl").read_bytes() == (tmp_path / "piped.jsonl").read_bytes()
    assert b'"s0"' in (tmp_path / "piped.jsonl").read_bytes()


def test_a_bar_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """``semps match`` forks its workers after its loading bars, and forks only while it
    runs one thread (a second one makes it spawn them, and each parses every
    subscription again): the bars must not start tqdm's monitor thread."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    before = threading.active_count()
    with progress(100, "subscription", "registering") as tick:
        tick(50)
        assert threading.active_count() == before
    assert "registering" in screen.getvalue()
