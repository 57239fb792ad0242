"""``semps spark package``: what a cluster's executors need to run semps.

PySpark 3.5 puts ``--py-files`` on the executors' ``sys.path`` only for ``.zip``, ``.egg``
and ``.jar`` files (a wheel is shipped but never importable), so :func:`build_package`
writes semps as a plain zip (``semps-<version>.zip``: the ``semps`` package with every
subpackage and its data files, no bytecode) and a driver script (``semps_main.py``) for
``spark-submit``::

    semps spark package --output dist
    spark-submit --master spark://HOST:7077 --py-files dist/semps-0.1.0.zip \\
        dist/semps_main.py spark match --subscriptions ... --events ... --output ...

semps is pure Python; its dependencies (rdflib, numpy, numba, ...) must be installed in the
Python the executors run (``spark.pyspark.python``). numba kernels imported from the zip are
compiled in each Python worker instead of cached (see
:data:`semps.matcher.kernels.CACHE`).
"""

from __future__ import annotations

import os
import pkgutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import semps

#: The driver script ``spark-submit`` runs: the ``semps`` command line.
MAIN_NAME = "semps_main.py"
MAIN_SCRIPT = '''"""The semps command line under spark-submit (from `semps spark package`)."""

import sys

from semps.cli import main

sys.exit(main())
'''

#: A fixed timestamp for every entry, so the same sources give the same zip.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_SKIPPED_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so.tmp")


@dataclass(frozen=True)
class Package:
    """What :func:`build_package` wrote."""

    zip: Path
    main: Path
    files: int


def package_files() -> dict[str, Path]:
    """The files of the installed ``semps`` package by their name in the zip
    (``semps/matcher/base.py``), following linked subpackages."""
    root = Path(semps.__file__).parent
    found: dict[str, Path] = {}
    _walk(root, "semps", found)
    # An editable install may map subpackages from elsewhere (a meta-path finder).
    for module in pkgutil.iter_modules(semps.__path__):
        if module.ispkg and f"semps/{module.name}/__init__.py" not in found:
            sub = __import__(f"semps.{module.name}", fromlist=["__path__"])
            _walk(Path(sub.__path__[0]), f"semps/{module.name}", found)
    return found


def _walk(folder: Path, prefix: str, found: dict[str, Path]) -> None:
    for parent, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        rel = Path(parent).relative_to(folder).as_posix()
        for name in sorted(files):
            if name.endswith(_SKIPPED_SUFFIXES):
                continue
            inside = f"{prefix}/{name}" if rel == "." else f"{prefix}/{rel}/{name}"
            found[inside] = Path(parent) / name


def build_package(output: Path) -> Package:
    """Write ``semps-<version>.zip`` and ``semps_main.py`` into the folder ``output``.

    The zip is written to a temporary name and renamed, so a half-written one is never seen.
    """
    output.mkdir(parents=True, exist_ok=True)
    target = output / f"semps-{semps.__version__}.zip"
    partial = target.with_suffix(".zip.partial")
    files = package_files()
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    os.replace(partial, target)
    main = output / MAIN_NAME
    main.write_text(MAIN_SCRIPT, encoding="utf-8")
    return Package(target, main, len(files))


__all__ = ["MAIN_NAME", "Package", "build_package", "package_files"]
