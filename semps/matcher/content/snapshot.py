"""Snapshots of a built REIN/HCEM index: saved once, loaded instead of re-parsing JSONL.

A snapshot is an uncompressed NumPy ``.npz`` file (no pickle anywhere): a JSON *header*
(format name and version, algorithm and options, the SHA-256 of the subscriptions file it
was built from, the attribute columns and string codes, and a SHA-256 *digest* of every
array) and the slot table's arrays (``starts``, ``cols``, ``lows``, ``highs``) with the ids
as one UTF-8 text and offsets. Slots are stored in id order, so loading needs no sort.

Loading treats the file as hostile: only stored (uncompressed) members with the expected
names, sizes within the file, the digest recomputed and compared, then every invariant the
compiled kernels rely on checked (offsets, column numbers, ``low <= high``, ids sorted and
distinct, string codes). The bucket lists are rebuilt from the checked table, which is
exact by construction and costs a fraction of parsing. Any failure is one
:class:`~semps.errors.SubscriptionError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from itertools import islice
from operator import lt
from pathlib import Path
from typing import Any

import numpy as np

from semps.errors import SubscriptionError
from semps.matcher.content.hcem import HcemIndex
from semps.matcher.content.index import CompiledIndex
from semps.matcher.content.rein import ReinIndex

__all__ = ["FORMAT", "VERSION", "file_digest", "load_index", "save_index"]

#: The header's ``format``.
FORMAT = "semps-content-index"
#: The header's ``version``: snapshots of another version are refused.
VERSION = 1

_CLASSES: dict[str, type[ReinIndex]] = {"rein": ReinIndex, "hcem": HcemIndex}
#: name -> dtype of every array member besides the header.
_ARRAYS = {
    "starts": np.dtype(np.int64),
    "cols": np.dtype(np.int32),
    "lows": np.dtype(np.float64),
    "highs": np.dtype(np.float64),
    "id_text": np.dtype(np.uint8),
    "id_offsets": np.dtype(np.int64),
}


def file_digest(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def save_index(index: CompiledIndex, path: Path, *, source_digest: str) -> None:
    """Write ``index`` (REIN or HCEM, rebuilt first) to ``path`` atomically.

    Example:
        >>> import tempfile
        >>> from semps.matcher.content.parse import parse_subscription
        >>> index = HcemIndex(buckets=8)
        >>> index.add(parse_subscription('a between 0.2 and 0.5 and c = "x"', sub_id="s1"))
        >>> folder = Path(tempfile.mkdtemp())
        >>> save_index(index, folder / "i.npz", source_digest="0" * 64)
        >>> load_index(folder / "i.npz").match({"a": [0.3], "c": ["x"]})
        ['s1']
    """
    if not isinstance(index, ReinIndex) or type(index).name not in _CLASSES:
        msg = f"snapshots hold rein or hcem indexes, not {type(index).name}"
        raise SubscriptionError(msg)
    index.rebuild()  # compact, slots in id order
    t, space = index.table, index.space
    text = "".join(t.ids)
    lengths = np.fromiter(map(len, t.ids), np.int64, count=len(t.ids))
    offsets = np.zeros(len(t.ids) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    arrays = {
        "starts": t.starts,
        "cols": t.cols,
        "lows": t.lows,
        "highs": t.highs,
        "id_text": np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8),
        "id_offsets": offsets,
    }
    columns = space.columns()
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "algorithm": type(index).name,
        "options": {"buckets": index.buckets, "block": index.block},
        "subscriptions_sha256": source_digest,
        "count": len(t.ids),
        "columns": [[attr, is_string] for attr, is_string in columns],
        "codes": {str(c): space.codes(c) for c, (_, s) in enumerate(columns) if s},
    }
    header["digest"] = _digest(header, arrays)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as out:
        head = np.frombuffer(json.dumps(header).encode(), np.uint8)
        np.savez(out, header=head, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, path)


def _digest(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in header.items() if k != "digest"}).encode())
    for name in _ARRAYS:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.data.cast("B"))
    return h.hexdigest()


def _refuse(path: Path, why: str) -> SubscriptionError:
    return SubscriptionError(f"{path}: not a usable content index snapshot: {why}")


def load_index(path: Path) -> ReinIndex:
    """The index saved in ``path``, built and ready (see the module doc for the checks).

    Raises:
        SubscriptionError: the file is missing, not a snapshot, of another version,
            altered, or inconsistent.
    """
    header, arrays = _read(path)
    try:
        return _restore(path, header, arrays)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise _refuse(path, f"inconsistent content ({exc})") from exc


def _read(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not path.is_file():
        msg = f"file not found: {path}"
        raise SubscriptionError(msg)
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            names = sorted(i.filename for i in infos)
            want = sorted(f"{n}.npy" for n in ("header", *_ARRAYS))
            if names != want:
                raise _refuse(path, f"members {names} instead of {want}")
            if any(i.compress_type != zipfile.ZIP_STORED for i in infos):
                raise _refuse(path, "compressed members")
            if sum(i.file_size for i in infos) > size:
                raise _refuse(path, "members larger than the file")
        with np.load(path, allow_pickle=False) as data:
            raw = {name: data[name] for name in ("header", *_ARRAYS)}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _refuse(path, str(exc) or type(exc).__name__) from exc
    head = raw.pop("header")
    try:
        header = json.loads(head.astype(np.uint8, copy=False).tobytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise _refuse(path, "the header is not JSON") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _refuse(path, f"the header's format is not {FORMAT!r}")
    if header.get("version") != VERSION:
        msg = f"version {header.get('version')!r}, this semps reads version {VERSION}"
        raise _refuse(path, msg)
    for name, dtype in _ARRAYS.items():
        if raw[name].dtype != dtype or raw[name].ndim != 1:
            raise _refuse(path, f"{name} is not a 1-d {dtype} array")
    if header.get("digest") != _digest(header, raw):
        raise _refuse(path, "its digest does not match its content (altered or damaged)")
    return header, raw


def _restore(path: Path, header: dict[str, Any], a: dict[str, np.ndarray]) -> ReinIndex:
    cls = _CLASSES.get(header["algorithm"])
    options = header["options"]
    if cls is None or set(options) != {"buckets", "block"}:
        raise _refuse(path, f"unknown algorithm {header['algorithm']!r} or options")
    buckets, block = int(options["buckets"]), int(options["block"])
    if not (1 <= buckets <= 1 << 20 and 1 <= block <= 1 << 30):
        raise _refuse(path, "buckets or block out of range")
    index = cls(buckets=buckets, block=block)
    columns = [(str(attr), bool(s)) for attr, s in header["columns"]]
    if len(set(columns)) != len(columns):
        raise _refuse(path, "repeated columns")
    for attr, is_string in columns:
        index.space.column(attr, is_string)
    codes = header["codes"]
    for c, (_, is_string) in enumerate(columns):
        if is_string:
            table = codes[str(c)]
            if sorted(table.values()) != list(range(len(table))):
                raise _refuse(path, f"the string codes of column {c} are not 0..n-1")
            index.space.set_codes(c, {str(k): int(v) for k, v in table.items()})
    ids = _ids(path, a["id_text"], a["id_offsets"], int(header["count"]))
    _check_table(path, a, len(ids), len(columns))
    index.table.restore(ids, a["starts"], a["cols"], a["lows"], a["highs"])
    index.ncols_built = len(columns)
    index.built = len(ids)
    index._build()
    return index


def _ids(path: Path, text_bytes: np.ndarray, offsets: np.ndarray, count: int) -> list[str]:
    try:
        text = text_bytes.tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise _refuse(path, "ids are not UTF-8") from exc
    if (
        offsets.shape[0] != count + 1
        or offsets[0] != 0
        or offsets[-1] != len(text)
        or bool(np.any(offsets[1:] <= offsets[:-1]))
    ):
        raise _refuse(path, "id offsets do not cut the id text into non-empty ids")
    bounds = offsets.tolist()
    ids = [text[x:y] for x, y in zip(bounds, islice(bounds, 1, None), strict=False)]
    if not all(map(lt, ids, islice(ids, 1, None))):
        raise _refuse(path, "ids are not sorted and distinct")
    return ids


def _check_table(path: Path, a: dict[str, np.ndarray], n: int, ncols: int) -> None:
    starts, cols, lows, highs = a["starts"], a["cols"], a["lows"], a["highs"]
    npred = cols.shape[0]
    if starts.shape[0] != n + 1 or starts[0] != 0 or starts[-1] != npred:
        raise _refuse(path, "starts do not cover the predicates")
    if bool(np.any(starts[1:] < starts[:-1])):
        raise _refuse(path, "starts decrease")
    if lows.shape[0] != npred or highs.shape[0] != npred:
        raise _refuse(path, "cols, lows and highs differ in length")
    if npred and (int(cols.min()) < 0 or int(cols.max()) >= ncols):
        raise _refuse(path, "a predicate's column is out of range")
    if bool(np.any(np.isnan(lows) | np.isnan(highs) | (lows > highs))):
        raise _refuse(path, "a predicate's interval is empty or NaN")
    first = np.zeros(npred, np.bool_)
    first[starts[:-1][starts[:-1] < npred]] = True
    if npred > 1 and bool(np.any((cols[1:] <= cols[:-1]) & ~first[1:])):
        raise _refuse(path, "a subscription's columns are not distinct and sorted")
