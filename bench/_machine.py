"""How fast the machine is right now (not a test): a fixed reference workload, timed.

This 2-core VM's speed drifts by 30-50% within minutes (the host's other tenants), and a
figure measured in a slow stretch says little about the code. The benchmarks print the
reference's CPU time next to their figures: compare figures only at similar reference
times. The workload is pure Python and touches no semps code (sorting, a dict, JSON, an
integer loop), so a change to semps never moves it.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path


def reference_ms(repeats: int = 3) -> float:
    """The least CPU time (ms) of ``repeats`` runs of the reference workload (~80 ms each
    on the machine bench/README.md's figures come from, in its fast stretches)."""
    best = float("inf")
    for _ in range(repeats):
        rng = random.Random(5)
        begin = time.process_time()
        words = [f"w{rng.getrandbits(40):x}" for _ in range(60_000)]
        table = {w: i for i, w in enumerate(words)}
        sorted(words)
        json.loads(json.dumps(table))
        total = 0
        for i in range(300_000):
            total += i * i % 7
        best = min(best, time.process_time() - begin)
    return 1000 * best


def stamp(label: str) -> str:
    """``machine (LABEL) HH:MM:SS: reference N ms``, printed and returned."""
    line = f"machine ({label}) {time.strftime('%H:%M:%S')}: reference {reference_ms():.0f} ms"
    print(line, flush=True)
    return line


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children, from ``/proc`` (0 for
    a process gone meanwhile)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    for p in [pid, *map(int, kids)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total
