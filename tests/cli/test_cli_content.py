"""semps content match / semps symmetric match: JSONL in, one JSON line per event out (in
input order), every algorithm the same answers as brute force; bad lines stop the run with
FILE:LINE and exit status 2."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from semps_test_support import PATIENCE

from semps.matcher.content import BruteForceIndex, subscription_from_json
from semps.matcher.symmetric import BruteForceRegions, parse_region_subscription


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


def write_jsonl(path: Path, docs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def workload(rng: random.Random) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    subs = []
    for i in range(300):
        constraints: list[dict[str, object]] = []
        for attr in rng.sample(["a0", "a1", "a2", "a3", "c"], rng.randint(1, 3)):
            if attr == "c":
                constraints.append({"attr": "c", "op": "=", "value": rng.choice("xyz")})
            elif rng.random() < 0.5:
                low = round(rng.random() * 0.6, 2)
                constraints.append({"attr": attr, "op": "between", "low": low, "high": low + 0.4})
            else:
                op = rng.choice([">=", "<=", "="])
                constraints.append({"attr": attr, "op": op, "value": round(rng.random(), 1)})
        subs.append({"id": f"s{i:03d}", "constraints": constraints})
    events = []
    for i in range(120):
        values: dict[str, object] = {
            a: round(rng.random(), 1) for a in ["a0", "a1", "a2", "a3"] if rng.random() < 0.9
        }
        if rng.random() < 0.7:
            values["c"] = rng.choice("xyz")
        events.append({"id": f"e{119 - i:03d}", "values": values})  # ids not in input order
    return subs, events


@pytest.mark.parametrize("algorithm", ["predicate-table", "rein", "hcem", "brute"])
def test_content_match_equals_brute_force(tmp_path: Path, algorithm: str) -> None:
    subs, events = workload(random.Random(4))
    oracle = BruteForceIndex()
    for doc in subs:
        oracle.add(subscription_from_json(doc))
    want = [
        {"event": e["id"], "matches": oracle.match({k: [v] for k, v in e["values"].items()})}  # type: ignore[union-attr]
        for e in events
    ]
    result = semps(
        "content", "match", "--algorithm", algorithm, "--batch", "50", "--buckets", "7",
        "--subscriptions", str(write_jsonl(tmp_path / "subs.jsonl", subs)),
        "--events", str(write_jsonl(tmp_path / "events.jsonl", events)),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == want
    assert sum(len(w["matches"]) for w in want) > 50  # the workload does match


def test_symmetric_match_equals_brute_force(tmp_path: Path) -> None:
    rng = random.Random(2)

    def region() -> dict[str, list[float]]:
        out = {}
        for attr in rng.sample(["x", "y", "z"], rng.randint(1, 3)):
            low = round(rng.random(), 2)
            out[attr] = [low, round(low + rng.random() * 0.3, 2)]
        return out

    subs = [{"id": f"s{i}", "region": region()} for i in range(200)]
    events = [{"id": f"e{i}", "region": region()} for i in range(80)]
    oracle = BruteForceRegions()
    for doc in subs:
        oracle.add(parse_region_subscription(json.dumps(doc)))
    result = semps(
        "symmetric", "match", "--batch", "30",
        "--subscriptions", str(write_jsonl(tmp_path / "subs.jsonl", subs)),
        "--events", str(write_jsonl(tmp_path / "events.jsonl", events)),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    got = [json.loads(line) for line in result.stdout.splitlines()]
    assert got == [
        {"event": e["id"], "matches": oracle.match({k: tuple(v) for k, v in e["region"].items()})}  # type: ignore[union-attr]
        for e in events
    ]


@pytest.mark.parametrize(
    ("command", "subs", "events", "message"),
    [
        (
            "content",
            '{"id": "s1", "constraints": [{"attr": "a", "op": ">=", "value": 1}]}\n\n{"id": "s2"',
            '{"id": "e1", "values": {"a": 1}}\n',
            "subs.jsonl:3:12: invalid JSON: Expecting ',' delimiter",
        ),
        (
            "content",
            '{"id": "s1", "constraints": [{"attr": "a", "op": ">=", "value": "x"}]}\n',
            '{"id": "e1", "values": {"a": 1}}\n',
            'subs.jsonl:1: constraints[0]: a >= "x": strings support only =',
        ),
        (
            "content",
            '{"id": "s1", "constraints": [{"attr": "a", "op": ">=", "value": 1}]}\n',
            '{"id": "e1", "values": {"a": 1}}\n{"id": "e2", "values": {"a": null}}\n',
            "events.jsonl:2: value of 'a' must be a number or a string, not null",
        ),
        (
            "symmetric",
            '{"id": "s1", "region": {"x": [0, 1]}}\n',
            '{"id": "e1", "values": {"x": 1}}\n',
            'events.jsonl:1: a symmetric publication needs "region"',
        ),
        (
            "symmetric",
            '{"id": "s1", "region": {"x": [2, 1]}}\n',
            '{"id": "e1", "region": {"x": [1, 1]}}\n',
            "subs.jsonl:1: region attribute 'x' has low 2 > high 1",
        ),
    ],
)
def test_bad_lines_stop_with_file_and_line(
    tmp_path: Path, command: str, subs: str, events: str, message: str
) -> None:
    (tmp_path / "subs.jsonl").write_text(subs)
    (tmp_path / "events.jsonl").write_text(events)
    result = semps(
        command, "match",
        "--subscriptions", str(tmp_path / "subs.jsonl"),
        "--events", str(tmp_path / "events.jsonl"),
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == f"semps: error: {tmp_path}/{message}\n"


@pytest.mark.parametrize("bad", [None, "json", "constraint", "repeat"])
def test_parallel_load_equals_sequential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str | None
) -> None:
    from semps.cli import content
    from semps.errors import SempsError
    from semps.matcher.content import create_index

    subs, events = workload(random.Random(7))
    lines = [json.dumps(d) for d in subs * 1] + [""]
    where = 250
    if bad == "json":
        lines[where] = '{"id": "x", "constraints": ['
    elif bad == "constraint":
        lines[where] = '{"id": "x", "constraints": [{"attr": "a0", "op": ">=", "value": []}]}'
    elif bad == "repeat":
        lines[where] = lines[3]
    path = tmp_path / "subs.jsonl"
    path.write_text("\n".join(lines))
    monkeypatch.setattr(content, "PARALLEL_BYTES", 0)
    monkeypatch.setattr("semps.cli.jsonl.CHUNK", 1)  # many small chunks
    monkeypatch.setattr(content, "CHUNK_BYTES", 700)
    outcomes = []
    for workers in (1, 2):
        index = create_index("rein", buckets=5)
        try:
            content.load_bulk(path, index, workers=workers)
            error = None
        except SempsError as exc:
            error = (type(exc), str(exc))
        views = [{k: [v] for k, v in e["values"].items()} for e in events]  # type: ignore[union-attr]
        # After an error the run stops: what was indexed by then depends on the chunks.
        outcomes.append((error, None) if error else (None, index.match_batch(views)))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0][0] is None) == (bad is None)
    if bad is not None:
        assert outcomes[0][0][1].startswith(f"{path}")  # type: ignore[index]


@pytest.mark.parametrize("algorithm", ["rein", "hcem"])
def test_a_saved_index_answers_as_brute_force(tmp_path: Path, algorithm: str) -> None:
    """semps content index writes a snapshot; match --index answers from it, byte for byte
    as match --subscriptions does, with the snapshot's algorithm and buckets."""
    subs, events = workload(random.Random(5))
    sub_path = write_jsonl(tmp_path / "subs.jsonl", subs)
    event_path = write_jsonl(tmp_path / "events.jsonl", events)
    made = semps(
        "content", "index", "--algorithm", algorithm, "--buckets", "7",
        "--subscriptions", str(sub_path), "--output", str(tmp_path / "i.npz"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout == f"{tmp_path / 'i.npz'}: 300 subscriptions, {algorithm}\n"
    oracle = BruteForceIndex()
    for doc in subs:
        oracle.add(subscription_from_json(doc))
    from_index = semps(
        "content", "match", "--batch", "40", "--index", str(tmp_path / "i.npz"),
        "--events", str(event_path),
    )  # fmt: skip
    assert from_index.returncode == 0, from_index.stderr
    want = [
        {"event": e["id"], "matches": oracle.match({k: [v] for k, v in e["values"].items()})}  # type: ignore[union-attr]
        for e in events
    ]
    assert [json.loads(line) for line in from_index.stdout.splitlines()] == want
    from_jsonl = semps(
        "content", "match", "--batch", "40", "--algorithm", algorithm,
        "--subscriptions", str(sub_path), "--events", str(event_path),
    )  # fmt: skip
    assert from_index.stdout == from_jsonl.stdout


def test_a_damaged_or_foreign_index_is_one_error_line(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "subs.jsonl", workload(random.Random(6))[0])
    write_jsonl(tmp_path / "events.jsonl", [{"id": "e1", "values": {"a0": 0.5}}])
    snap = tmp_path / "i.npz"
    made = semps(
        "content", "index", "--subscriptions", str(tmp_path / "subs.jsonl"), "--output", str(snap)
    )
    assert made.returncode == 0, made.stderr
    data = bytearray(snap.read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "damaged.npz").write_bytes(bytes(data))
    (tmp_path / "foreign.npz").write_bytes(b"PK\x05\x06" + bytes(18))
    for name in ("damaged.npz", "foreign.npz"):
        result = semps(
            "content", "match", "--index", str(tmp_path / name),
            "--events", str(tmp_path / "events.jsonl"),
        )  # fmt: skip
        assert result.returncode == 2
        assert result.stderr.startswith(
            f"semps: error: {tmp_path / name}: not a usable content index snapshot: "
        )
        assert result.stderr.count("\n") == 1 and result.stdout == ""
    both = semps(
        "content", "match", "--index", str(snap), "--subscriptions", str(tmp_path / "subs.jsonl"),
        "--events", str(tmp_path / "events.jsonl"),
    )  # fmt: skip
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
