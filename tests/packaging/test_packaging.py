"""The distribution installs one top-level name, ``semps``, with the customer's folders
(``ontology/``, ``ingest/``, ``matcher/``, ``api/``, ``spark/``) inside it: the code lives in
``semps/``, and the customer's names at the repository root are links into that tree."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The customer's top-level folders are links at the root into semps/: the one list of them.
# (A hidden link, such as a developer's ``.venv`` linked from another checkout, is not one.)
FOLDERS = tuple(
    sorted(
        p.name
        for p in ROOT.iterdir()
        if p.is_symlink() and p.is_dir() and not p.name.startswith(".")
    )
)


def test_the_root_links_are_the_customer_folders_into_the_package() -> None:
    assert set(FOLDERS) == {"ontology", "ingest", "matcher", "api", "spark"}
    for name in FOLDERS:
        assert (ROOT / name).resolve() == ROOT / "semps" / name
        assert (ROOT / "semps" / name / "__init__.py").is_file()


def test_no_part_of_the_package_is_a_link() -> None:
    links = [str(p.relative_to(ROOT)) for p in (ROOT / "semps").rglob("*") if p.is_symlink()]
    assert links == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (found,) = out.glob("semps-*.whl")
    return found


def test_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("semps-")}
    assert top == {"semps"}


def test_wheel_maps_every_customer_folder_under_semps(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in FOLDERS:
        assert f"semps/{folder}/__init__.py" in names


def test_wheel_install_imports_under_semps_only(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--quiet",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    code = (
        f"import importlib, sys; sys.path.insert(0, {str(target)!r});"
        f"[importlib.import_module('semps.' + f) for f in {FOLDERS!r}];"
        "import semps.errors, semps.matcher.registry;"
        f"print(sorted(p.name for p in __import__('pathlib').Path({str(target)!r}).iterdir()))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    # --target also drops the console script in bin/; only packages count here.
    listed = [n for n in eval(result.stdout) if not n.endswith(".dist-info") and n != "bin"]
    assert listed == ["semps"]
