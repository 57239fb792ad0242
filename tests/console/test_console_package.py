"""The console ships inside the package: a built wheel holds every file it serves, and a
machine without Debian's chromium fails the browser tests instead of skipping them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from console import browser

from semps.api.console.router import STATIC

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_built_wheel_holds_every_console_file(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    command += ["--quiet", "--wheel-dir", str(tmp_path), str(ROOT)]
    subprocess.run(command, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("semps-*.whl")
    archive = zipfile.ZipFile(wheel)
    for path in sorted(STATIC.iterdir()):
        assert archive.read(f"semps/api/console/static/{path.name}") == path.read_bytes()


def test_without_chromium_the_browser_tests_fail_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.fail.Exception, match=r"no-chromium: run scripts/bootstrap"):
        browser.start_chromium(tmp_path / "profile")
