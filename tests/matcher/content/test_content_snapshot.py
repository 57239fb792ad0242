"""Snapshots of REIN/HCEM indexes: a loaded snapshot answers as brute force over the same
subscriptions; a damaged, altered, foreign or inconsistent file is refused with one
SubscriptionError naming it, and never loads."""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from semps.errors import SubscriptionError
from semps.matcher.content import BruteForceIndex, HcemIndex, ReinIndex
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.content.snapshot import _digest, load_index, save_index

ATTRS = ["a", "b", "c", "colour"]


def subscriptions(rng: random.Random, n: int) -> list[ContentSubscription]:
    subs = []
    for i in range(n):
        cs = []
        for attr in rng.sample(ATTRS, rng.randint(1, 3)):
            if attr == "colour":
                cs.append(Constraint(attr, "=", rng.choice(["red", "blue", "é\n"])))
            else:
                low = round(rng.random(), 2)
                cs.append(Constraint(attr, "between", low=low, high=low + 0.3))
        subs.append(ContentSubscription(f"s{i}é" if i % 7 == 0 else f"s{i}", tuple(cs)))
    return subs


def views(rng: random.Random, n: int) -> list[dict[str, list[Any]]]:
    out = []
    for _ in range(n):
        view: dict[str, list[Any]] = {a: [rng.random()] for a in "abc" if rng.random() < 0.9}
        if rng.random() < 0.8:
            view["colour"] = [rng.choice(["red", "blue", "é\n", "green"])]
        out.append(view)
    return out


@pytest.mark.parametrize("cls", [ReinIndex, HcemIndex])
def test_a_loaded_snapshot_answers_as_brute_force(tmp_path: Path, cls: type[ReinIndex]) -> None:
    rng = random.Random(3)
    index, oracle = cls(buckets=7, block=16), BruteForceIndex()
    for sub in subscriptions(rng, 200):
        index.add(sub)
        oracle.add(sub)
    index.remove("s3")
    oracle.remove("s3")
    save_index(index, tmp_path / "i.npz", source_digest="ab" * 32)
    loaded = load_index(tmp_path / "i.npz")
    assert type(loaded) is cls
    assert (loaded.buckets, loaded.block, len(loaded)) == (7, 16, 199)
    events = views(rng, 60)
    assert loaded.match_batch(events) == [oracle.match(v) for v in events]
    assert [loaded.match(v) for v in events[:5]] == [oracle.match(v) for v in events[:5]]


def _rewrite(path: Path, change: Any, *, redigest: bool) -> None:
    """Rewrite a snapshot with ``change(header, arrays)`` applied."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k].copy() for k in data.files}
    header = json.loads(arrays.pop("header").tobytes())
    change(header, arrays)
    if redigest:
        header["digest"] = _digest(header, arrays)
    with path.open("wb") as out:
        np.savez(out, header=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    index = HcemIndex(buckets=4)
    for sub in subscriptions(random.Random(1), 30):
        index.add(sub)
    save_index(index, tmp_path / "i.npz", source_digest="0" * 64)
    return tmp_path / "i.npz"


def refused(path: Path) -> str:
    with pytest.raises(SubscriptionError) as info:
        load_index(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


def test_a_changed_byte_is_refused(snapshot: Path) -> None:
    with zipfile.ZipFile(snapshot) as archive:
        member = archive.read("lows.npy")
    data = bytearray(snapshot.read_bytes())
    data[data.index(member) + len(member) - 1] ^= 0x01  # the last byte of the lows
    snapshot.write_bytes(bytes(data))
    assert "not a usable content index snapshot" in refused(snapshot)


def test_another_version_is_refused(snapshot: Path) -> None:
    _rewrite(snapshot, lambda h, a: h.update(version=2), redigest=True)
    assert "version 2, this semps reads version 1" in refused(snapshot)


def test_an_altered_array_without_a_new_digest_is_refused(snapshot: Path) -> None:
    _rewrite(snapshot, lambda h, a: a["lows"].__setitem__(0, -5.0), redigest=False)
    assert "digest does not match" in refused(snapshot)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda h, a: a["cols"].__setitem__(0, 99), "column is out of range"),
        (lambda h, a: a["starts"].__setitem__(1, 10**6), "starts"),
        (lambda h, a: a["lows"].__setitem__(0, np.nan), "empty or NaN"),
        (lambda h, a: a["id_offsets"].__setitem__(1, 0), "id offsets"),
        (lambda h, a: a.__setitem__("id_text", a["id_text"][::-1].copy()), "ids"),
        (lambda h, a: h.update(algorithm="brute"), "unknown algorithm"),
        (lambda h, a: h["options"].update(buckets=0), "out of range"),
        (lambda h, a: h.update(count=3), "id offsets"),
        (lambda h, a: a.__setitem__("cols", a["cols"].astype(np.int64)), "int32"),
        (lambda h, a: h.update(columns=[["a", False], ["a", False]]), "repeated columns"),
    ],
)
def test_a_forged_but_consistent_digest_still_fails_the_checks(
    snapshot: Path, change: Any, why: str
) -> None:
    """The digest only catches damage; the checks keep a forged file from reaching the
    compiled kernels with offsets or columns out of range."""
    _rewrite(snapshot, change, redigest=True)
    assert why in refused(snapshot)


def test_files_that_are_not_snapshots_are_refused(tmp_path: Path, snapshot: Path) -> None:
    (tmp_path / "text").write_text("hello")
    assert "not a usable content index snapshot" in refused(tmp_path / "text")
    with pytest.raises(SubscriptionError, match="^file not found: "):
        load_index(tmp_path / "missing")
    pickled = tmp_path / "pickled.npz"
    with pickled.open("wb") as out:
        np.savez(out, header=np.array([{"format": 1}], dtype=object))
    assert "members" in refused(pickled)
    compressed = tmp_path / "compressed.npz"
    with zipfile.ZipFile(snapshot) as src, zipfile.ZipFile(compressed, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename), zipfile.ZIP_DEFLATED)
    assert "compressed members" in refused(compressed)
