"""The compiler every matcher's kernels share (numba, cached on disk, releasing the GIL),
and the compiled helpers more than one matcher uses.

Each matcher keeps its kernels in a private ``_kernels`` module of its own and compiles them
with :func:`jit` or :func:`pjit` from here, so no matcher imports another's private module;
a kernel two matchers need (:func:`search_sorted`, :func:`check_slots`) lives here.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numba as nb
import numpy as np

F = TypeVar("F", bound=Callable[..., Any])


def _lock_the_disk_cache() -> None:
    """Make numba's on-disk cache safe for processes compiling at once.

    numba (0.68) saves an entry by reading the function's index (``.nbi``), taking the first
    data file name (``.N.nbc``) the index does not list, and writing the index, then the
    data file, with no lock. Two processes saving different signatures of one kernel at
    once both take ``.1.nbc``: the index then maps one signature to the other's machine
    code. And a process loading between another's index write and data write reads the
    data file the index names before it is written: after the kernels' source changed, an
    older entry's code. Either way a kernel silently computes garbage: the suite's two
    processes (and a server's spawned workers, or a test's servers) start cold caches
    together. Once, in the first run after this module's kernels changed, two brick-a
    tests missed matches in two processes, and passed in every later run.

    Here saves take an exclusive lock on a file beside the index, loads a shared one, so
    each sees an index and its data files as one save left them."""
    from numba.core import caching

    cache_file = caching.IndexDataCacheFile
    if getattr(cache_file.save, "semps_locked", False):
        return
    save, load = cache_file.save, cache_file.load

    def locked(method: Callable[..., Any], mode: int) -> Callable[..., Any]:
        def run(self: Any, *args: Any) -> Any:
            try:
                lock = open(self._index_path + ".lock", "ab")  # noqa: SIM115
            except OSError:  # numba checked the folder is writable: not expected
                return method(self, *args)
            with lock:
                fcntl.flock(lock, mode)  # released when the file closes
                return method(self, *args)

        run.semps_locked = True  # type: ignore[attr-defined]
        return run

    cache_file.save = locked(save, fcntl.LOCK_EX)  # type: ignore[method-assign]
    cache_file.load = locked(load, fcntl.LOCK_SH)  # type: ignore[method-assign]


_lock_the_disk_cache()


def kernel_sources_digest(root: Path) -> str:
    """A digest of the source files under ``root`` that define kernels (numba's ``jit``,
    ``njit`` or our ``pjit``) and of every semps module they import, directly or through
    another (numba freezes a global such as a constant of another module into the machine
    code it caches), paths and contents, followed through links."""
    sources: dict[Path, bytes] = {}
    for folder, subfolders, files in os.walk(root, followlinks=True):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = Path(folder, name)
            sources[path] = path.read_bytes()
    todo = [p for p, text in sources.items() if any(d in text for d in _DECORATORS)]
    chosen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in chosen:
            continue
        chosen.add(path)
        todo.extend(q for q in _imported(sources[path], root) if q in sources)
    digest = hashlib.sha256()
    for path in sorted(chosen):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + sources[path])
    return digest.hexdigest()[:16]


#: What marks a file as defining kernels.
_DECORATORS = (b"@jit", b"@pjit", b"njit", b"nb.jit", b"numba.jit")


def _imported(text: bytes, root: Path) -> list[Path]:
    """The files of the semps modules a source imports (``root`` is the package folder)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    out = []
    for name in names:
        if name == root.name or name.startswith(root.name + "."):
            parts = name.split(".")[1:]
            out += [root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")]
    return out


def _cache_by_sources() -> None:
    """Keep the compiled kernels in a folder named by :func:`kernel_sources_digest`.

    numba checks a cached kernel against its own file only: a kernel calling one of
    another file (:func:`search_sorted` here, called by the semantic and content kernels)
    keeps the callee's old machine code after that file changes (numba's documented
    limitation: "cache invalidation fails to recognize changes in symbols defined in a
    different file"), and so may a caller compiled while a stale callee was loaded. After
    an upgrade or an edit, that is a silently wrong kernel. Naming the folder by every
    kernel file's content makes any change start a new cache.

    The folder is ``$NUMBA_CACHE_DIR/semps-<digest>`` when that variable is set, else
    ``${XDG_CACHE_HOME:-~/.cache}/semps/numba/semps-<digest>``; when it cannot be
    created or written, numba's own choice stands."""
    config: Any = nb.config  # no stubs
    base = config.CACHE_DIR or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "semps", "numba"
    )
    folder = os.path.join(base, f"semps-{kernel_sources_digest(Path(__file__).parents[1])}")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return
    config.CACHE_DIR = folder


#: Cache compiled kernels on disk, except when semps is imported from a zip (Spark executors
#: given ``semps spark package``'s zip): numba then caches in the user's cache folder, which
#: an executor may not be able to create, and the import fails; compiling costs seconds.
CACHE = ".zip" not in __file__
if CACHE:
    _cache_by_sources()


def jit(fn: F) -> F:
    """Compile ``fn`` with numba (cached on disk, releasing the GIL)."""
    return cast(F, nb.njit(cache=CACHE, nogil=True)(fn))


def pjit(fn: F) -> F:
    """Compile ``fn`` with numba's parallel loops (``prange``)."""
    return cast(F, nb.njit(cache=CACHE, nogil=True, parallel=True)(fn))


def max_threads() -> int:
    """The threads compiled kernels may use at most: numba's pool (``NUMBA_NUM_THREADS``,
    by default one per core)."""
    return int(getattr(nb.config, "NUMBA_NUM_THREADS"))  # noqa: B009 (numba.config has no stubs)


def set_threads(count: int) -> None:
    """Let the kernels started from this thread (``prange`` loops, HCEM's passes) use
    ``count`` threads, ``1 <= count <= max_threads()``."""
    nb.set_num_threads(count)


@jit
def search_sorted(a: np.ndarray, lo: int, hi: int, x: float, right: bool) -> int:
    """The first index in ``a[lo:hi]`` (ascending) whose value is > ``x`` (``right``) or
    >= ``x``: :func:`numpy.searchsorted` over a slice, without the slice."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x or (right and a[mid] == x):
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def check_slots(
    s0: int,
    s1: int,
    starts: np.ndarray,
    cols: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    alive: np.ndarray,
    ev_start: np.ndarray,
    ev_lows: np.ndarray,
    ev_highs: np.ndarray,
    out: np.ndarray,
) -> int:
    """Write to ``out`` the live slots of ``s0..s1`` whose every interval overlaps one the
    event gives its column; return their count.

    Slot ``s`` holds the closed intervals ``[lows[p], highs[p]]`` on column ``cols[p]`` for
    ``p`` in ``starts[s]:starts[s+1]``; the event gives column ``c`` the intervals
    ``[ev_lows[q], ev_highs[q]]`` for ``q`` in ``ev_start[c]:ev_start[c+1]`` (a point value
    is ``ev_lows[q] == ev_highs[q]``; none, or a column past ``ev_start``'s end: missing,
    which fails). The direct check of the slots no index covers yet (recent inserts).
    """
    ncols_ev = ev_start.shape[0] - 1
    n = 0
    for s in range(s0, s1):
        if not alive[s]:
            continue
        ok = True
        for p in range(starts[s], starts[s + 1]):
            c = cols[p]
            hit = False
            if c < ncols_ev:
                lo = lows[p]
                hi = highs[p]
                for q in range(ev_start[c], ev_start[c + 1]):
                    if lo <= ev_highs[q] and ev_lows[q] <= hi:
                        hit = True
                        break
            if not hit:
                ok = False
                break
        if ok:
            out[n] = s
            n += 1
    return n
