"""A matcher's built state kept in a file, so that a starting worker reads it instead of
registering every subscription again.

The file is a cache of what the matcher built; it is trusted only as far as it is checked.
Its layout::

    semps-matcher-state\\n      the magic line
    {header JSON}\\n            format, version, the matcher's kind, the code that wrote it
                               (:func:`code_fingerprint`), the Python and NumPy versions, and
                               the matcher's own fields (``meta``: the limits it parsed under)
    payload                    the state, pickled (protocol 5)
    trailer                    the payload's length (8 bytes, big-endian), then the
                               HMAC-SHA256 (32 bytes) of everything before it

The tag is keyed by the caller (the service derives its key from ``secret.key`` in the
data directory, owner-only like the rest of it): :func:`read_state` maps the file, checks its
size, header and tag before a byte of the payload is unpickled, and unpickles it with only
the globals the caller allows. A missing file is :class:`NoState`; a damaged, truncated or
altered file, one written under another key, by another semps, Python or NumPy, or under
other limits, is a :class:`~semps.errors.MatcherError` that says which.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import mmap
import os
import pickle
import sys
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import IO, Any

import numpy as np

import semps
from semps.errors import MatcherError

__all__ = [
    "FORMAT",
    "VERSION",
    "NoState",
    "Reducers",
    "code_fingerprint",
    "read_state",
    "write_state",
]

#: The magic first line and the header's ``format``.
FORMAT = "semps-matcher-state"
#: The header's ``version`` (of this layout; the payload's is the code fingerprint's).
VERSION = 1
_MAX_HEADER = 64 * 1024
_LENGTH, _TAG = 8, 32
_TRAILER = _LENGTH + _TAG

#: Per class, how a state's objects of that class are pickled (a pickler's dispatch table).
Reducers = Mapping[type, Callable[[Any], tuple[Any, ...]]]


class NoState(MatcherError):
    """There is no state file (nothing was saved yet, or it was deleted)."""


@cache
def code_fingerprint() -> str:
    """SHA-256 (hex) of the semps package's Python sources (paths and contents): a state
    pickled by other code may hold objects this code lays out differently, so it is read
    only by the very code that wrote it (any upgrade or edit builds the index once again)."""
    root = Path(semps.__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _header(kind: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "code": code_fingerprint(),
        "python": sys.version,
        "numpy": np.__version__,
        "meta": dict(meta),
    }


class _Tagged(io.RawIOBase):
    """A file being written that keeps the HMAC of what it is given; ``keep_going`` is
    asked before each write (False: the writing stops with an OSError)."""

    def __init__(self, out: IO[bytes], key: bytes, keep_going: Callable[[], bool]) -> None:
        self.out, self.keep_going = out, keep_going
        self.mac = hmac.new(key, digestmod=hashlib.sha256)
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if not self.keep_going():
            msg = "stopped"
            raise OSError(msg)
        view = memoryview(data).cast("B")
        self.mac.update(view)
        self.out.write(view)
        self.size += len(view)
        return len(view)


def write_state(
    path: Path,
    kind: str,
    state: object,
    key: bytes,
    meta: Mapping[str, Any],
    reducers: Reducers,
    keep_going: Callable[[], bool] = lambda: True,
) -> None:
    """Write ``state`` (pickled with ``reducers``) to ``path`` atomically, owner-only, with
    the header and the tag under ``key`` (see the module docstring). ``keep_going`` is asked
    as the file is written; when it answers False the file is abandoned.

    Raises:
        OSError: the file could not be written (or ``keep_going`` stopped it).
        pickle.PicklingError: the state holds what ``reducers`` cannot pickle.
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as raw:
            tagged = _Tagged(raw, key, keep_going)
            head = FORMAT.encode() + b"\n" + json.dumps(_header(kind, meta)).encode() + b"\n"
            tagged.write(head)
            start = tagged.size
            _pickle(tagged, state, reducers)
            length = (tagged.size - start).to_bytes(_LENGTH, "big")
            tagged.write(length)
            raw.write(tagged.mac.digest())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _pickle(out: _Tagged, state: object, reducers: Reducers) -> None:
    """Pickle ``state`` into ``out`` (frames of about 64 KiB, each one write), the pickler
    and its memo, which holds every object, dropped on return."""
    pickler = pickle.Pickler(out, protocol=5)
    pickler.dispatch_table = dict(reducers)
    pickler.dump(state)


class _Reader:
    """A read-only file over a memory view (what the unpickler reads, without a copy)."""

    def __init__(self, view: memoryview) -> None:
        self.view, self.pos = view, 0

    def read(self, n: int = -1) -> bytes:
        end = len(self.view) if n < 0 else min(len(self.view), self.pos + n)
        data = self.view[self.pos : end].tobytes()
        self.pos = end
        return data

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        n = min(len(target), len(self.view) - self.pos)
        target[:n] = self.view[self.pos : self.pos + n]
        self.pos += n
        return n

    def readline(self) -> bytes:
        rest = self.view[self.pos :]
        end = bytes(rest[:_MAX_HEADER]).find(b"\n")
        return self.read(len(rest) if end < 0 else end + 1)


class _Restricted(pickle.Unpickler):
    """An unpickler that resolves only the globals ``allowed`` accepts."""

    def __init__(self, file: _Reader, allowed: Callable[[str, str], bool]) -> None:
        super().__init__(file)
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        if not self.allowed(module, name):
            msg = f"it names {module}.{name}, which a state may not hold"
            raise pickle.UnpicklingError(msg)
        return super().find_class(module, name)


def read_state(
    path: Path,
    kind: str,
    key: bytes,
    meta: Mapping[str, Any],
    allowed: Callable[[str, str], bool],
) -> Any:
    """The state in the file at ``path``, checked (see the module docstring): written for
    ``kind`` with ``key`` by this code, under this Python and NumPy, with these ``meta``
    fields; unpickled resolving only the globals ``allowed`` accepts.

    Raises:
        NoState: there is no file at ``path``.
        MatcherError: the file is damaged, altered, foreign or stale (the message says which).
    """
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= len(FORMAT) + 1 + _TRAILER:
                raise _refused(path, f"{size} bytes is too short")
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        msg = f"{path}: no saved state"
        raise NoState(msg) from None
    except OSError as exc:
        raise _refused(path, f"it cannot be read ({exc})") from exc
    with mapped, memoryview(mapped) as view:
        body = _checked(path, view, kind, key, meta, size)
        try:
            with body:
                return _Restricted(_Reader(body), allowed).load()
        except Exception as exc:  # a tagged file is ours: anything here is a bug or a mismatch
            raise _refused(path, f"it does not unpickle ({type(exc).__name__}: {exc})") from exc


def _checked(
    path: Path, view: memoryview, kind: str, key: bytes, meta: Mapping[str, Any], size: int
) -> memoryview:
    """The payload of the mapped file, once its header, size and tag are checked."""
    if bytes(view[: len(FORMAT) + 1]) != FORMAT.encode() + b"\n":
        raise _refused(path, f"it does not start with {FORMAT!r}")
    start = len(FORMAT) + 1
    end = bytes(view[start : start + _MAX_HEADER]).find(b"\n")
    if end < 0:
        raise _refused(path, "no header line (or one over 64 KiB)")
    try:
        header = json.loads(bytes(view[start : start + end]))
    except ValueError as exc:
        raise _refused(path, "its header is not JSON") from exc
    want = _header(kind, meta)
    if type(header) is not dict or header.get("format") != FORMAT:
        raise _refused(path, f"its header's format is not {FORMAT!r}")
    for field in ("version", "kind", "code", "python", "numpy", "meta"):
        if header.get(field) != want[field]:
            raise _refused(path, f"stale: {_STALE[field]}")
    payload = start + end + 1
    length = int.from_bytes(view[size - _TRAILER : size - _TAG], "big")
    if payload + length + _TRAILER != size:
        raise _refused(path, f"{size} bytes, not the {payload + length + _TRAILER} it says")
    mac = hmac.new(key, view[: size - _TAG], hashlib.sha256).digest()
    if not hmac.compare_digest(mac, bytes(view[size - _TAG :])):
        raise _refused(path, "its tag does not match (damaged, altered, or another key's)")
    return view[payload : payload + length]


_STALE = {
    "version": "another version of the layout",
    "kind": "another matcher's state",
    "code": "written by other code (another semps, or an edited one)",
    "python": "written under another Python",
    "numpy": "written under another NumPy",
    "meta": "built under other limits",
}


def _refused(path: Path, why: str) -> MatcherError:
    return MatcherError(f"{path}: not a usable matcher state: {why}")
