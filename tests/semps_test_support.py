"""Paths and small helpers shared by the tests (importable because pytest puts tests/ on
sys.path)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT.parent / "shared" / "workloads"
