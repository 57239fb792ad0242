"""The compiler every matcher's kernels share: numba, cached on disk, releasing the GIL.

Each matcher keeps its kernels in a private ``_kernels`` module of its own and compiles them
with :func:`jit` or :func:`pjit` from here, so no matcher imports another's private module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba as nb

F = TypeVar("F", bound=Callable[..., Any])

#: Cache compiled kernels on disk, except when semps is imported from a zip (Spark executors
#: given ``semps spark package``'s zip): numba then caches in the user's cache folder, which
#: an executor may not be able to create, and the import fails; compiling costs seconds.
CACHE = ".zip" not in __file__


def jit(fn: F) -> F:
    """Compile ``fn`` with numba (cached on disk, releasing the GIL)."""
    return cast(F, nb.njit(cache=CACHE, nogil=True)(fn))


def pjit(fn: F) -> F:
    """Compile ``fn`` with numba's parallel loops (``prange``)."""
    return cast(F, nb.njit(cache=CACHE, nogil=True, parallel=True)(fn))
