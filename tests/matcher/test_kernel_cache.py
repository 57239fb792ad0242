"""numba's disk cache, shared by processes that compile kernels at once
(:mod:`semps.matcher.kernels` locks its saves and loads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from semps_test_support import PATIENCE

import semps
from semps.matcher.kernels import kernel_sources_digest

KERNEL = """
from semps.matcher.kernels import jit


@jit
def twice(x):
    return x.sum() * 2
"""

RUN = """
import sys
import time
from pathlib import Path

import numpy as np
from numba.core import caching

import semps.matcher.kernels  # locks the cache
import kernel

folder, role = Path(sys.argv[1]), sys.argv[2]
if role == "saver":  # stops in the middle of its save: index written, data not yet
    write = caching.IndexDataCacheFile._save_data

    def slow(self, name, data):
        (folder / "saving").touch()
        time.sleep(5)
        write(self, name, data)

    caching.IndexDataCacheFile._save_data = slow
else:
    while not (folder / "saving").exists():
        time.sleep(0.01)
print(kernel.twice(np.arange(4, dtype=np.int64)), sum(kernel.twice.stats.cache_hits.values()))
"""


def test_a_load_during_another_processs_save_gets_what_it_saves(tmp_path: Path) -> None:
    """Unlocked, the loader reads the index the saver has written, finds no data file yet,
    and compiles the kernel again (or, when an older data file of that name is there, runs
    its machine code: another signature's, or the previous source's)."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))
    env["PYTHONPATH"] += os.pathsep + os.environ.get("PYTHONPATH", "")

    def start(role: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(tmp_path / "run.py"), str(tmp_path), role],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )

    saver, loader = start("saver"), start("loader")
    saved, _ = saver.communicate(timeout=PATIENCE)
    loaded, _ = loader.communicate(timeout=PATIENCE)
    assert (saver.returncode, loader.returncode) == (0, 0)
    assert saved.split() == ["12", "0"]  # compiled
    assert loaded.split() == ["12", "1"]  # waited for the save, then read it


def test_a_change_to_any_kernel_file_names_a_new_cache_folder(tmp_path: Path) -> None:
    """numba checks a cached kernel against its own file only: a caller compiled with an
    older callee of another file would keep it. Any kernel file's change starts anew."""
    (tmp_path / "sub").mkdir()
    kernel, other = tmp_path / "sub" / "k.py", tmp_path / "plain.py"
    kernel.write_text("@jit\ndef f(x):\n    return x\n")
    other.write_text("def g():\n    pass\n")
    first = kernel_sources_digest(tmp_path)
    other.write_text("def g():\n    return 1\n")  # no kernel in it
    assert kernel_sources_digest(tmp_path) == first
    kernel.write_text("@jit\ndef f(x):\n    return x + 1\n")
    assert kernel_sources_digest(tmp_path) != first


def test_kernels_are_cached_under_the_digest_of_the_installed_sources(tmp_path: Path) -> None:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "import numba, semps.matcher.kernels; print(numba.config.CACHE_DIR)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    digest = kernel_sources_digest(Path(semps.__file__).parent)
    assert out.stdout.strip() == str(tmp_path / f"semps-{digest}")


def test_a_change_to_a_module_a_kernel_imports_names_a_new_cache_folder(tmp_path: Path) -> None:
    """numba freezes another module's constant into the kernel it caches: a module the
    kernel files import, directly or through another, counts as a kernel file
    (``njit`` marks one as well as ``@jit``)."""
    root = tmp_path / "semps"
    (root / "m").mkdir(parents=True)
    (root / "m" / "_k.py").write_text(
        "import numba as nb\nfrom semps.m.codes import AND\n\n"
        "@nb.njit\ndef f(x):\n    return x & AND\n"
    )
    codes, deeper = root / "m" / "codes.py", root / "base.py"
    codes.write_text("from semps.base import ONE\nAND = ONE\n")
    deeper.write_text("ONE = 1\n")
    first = kernel_sources_digest(root)
    deeper.write_text("ONE = 2\n")
    second = kernel_sources_digest(root)
    assert second != first
    codes.write_text("from semps.base import ONE\nAND = ONE + 1\n")
    assert kernel_sources_digest(root) not in (first, second)
