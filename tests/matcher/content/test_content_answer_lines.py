"""The answer lines ``semps content match`` writes, as HCEM's batch pass and the parallel
line writer produce them on 1 and 2 threads: byte for byte ``json.dumps`` of the brute
force's answers, for batches with empty events, events no subscription matches, events
every subscription matches, and ids that JSON must escape, short and long; and
``--threads N`` pinning the cores, its bad values one error line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from semps._types import Value
from semps.cli._lines_out import LineWriter
from semps.matcher.content import BruteForceIndex, HcemIndex
from semps.matcher.content.constraints import Constraint, ContentSubscription
from semps.matcher.kernels import max_threads, set_threads

ATTRS = ["a", "b"]
GRID = [0.0, 0.25, 0.5, 0.75, 1.0]

constraint = st.builds(
    lambda attr, low, width: Constraint(attr, "between", low=low, high=low + width),
    st.sampled_from(ATTRS),
    st.sampled_from(GRID),
    st.sampled_from([0.0, 0.25, 1.0]),
)
#: Every event giving ``a`` a value of the grid matches it.
EVERYTHING = (Constraint("a", "between", low=-1.0, high=2.0),)
event_values = st.dictionaries(st.sampled_from(ATTRS), st.sampled_from(GRID))


class _Text(io.StringIO):
    """A text stream with a byte buffer, as ``sys.stdout``."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = io.BytesIO()


@settings(max_examples=40, deadline=None)
@given(
    subs=st.lists(
        st.one_of(st.just(EVERYTHING), st.lists(constraint, min_size=1, max_size=2).map(tuple)),
        min_size=1,
        max_size=40,
    ),
    names=st.lists(st.text(min_size=1, max_size=40), min_size=40, max_size=40, unique=True),
    batches=st.lists(st.lists(event_values, max_size=70), min_size=1, max_size=3),
    threads=st.sampled_from([1, 2]),
)
def test_lines_are_json_dumps_of_the_brute_force_answers(
    subs: list[tuple[Constraint, ...]],
    names: list[str],
    batches: list[list[dict[str, Value]]],
    threads: int,
) -> None:
    index, oracle = HcemIndex(buckets=3, block=4, min_batch=1), BruteForceIndex()
    for name, constraints in zip(names, subs, strict=False):
        sub = ContentSubscription(name, tuple({c.attr: c for c in constraints}.values()))
        index.add(sub)
        oracle.add(sub)
    index.rebuild()
    out, want = _Text(), []
    set_threads(min(threads, max_threads()))
    try:
        writer = LineWriter(out)
        for b, batch in enumerate(batches):
            event_ids = [f"e{b}-{i}\u00e9" for i in range(len(batch))]
            writer.write(event_ids, index.match_columns_values(batch))
            for event_id, values in zip(event_ids, batch, strict=True):
                matches = oracle.match({k: (v,) for k, v in values.items()})
                want.append(json.dumps({"event": event_id, "matches": matches}) + "\n")
    finally:
        set_threads(max_threads())
    assert out.buffer.getvalue().decode("ascii") == "".join(want)


def _semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, check=False
    )


def test_threads_pins_the_cores_and_bad_counts_are_one_error_line(tmp_path: Path) -> None:
    subs = [
        {"id": "s1", "constraints": [{"attr": "a", "op": ">=", "value": 0.5}]},
        {"id": "s2", "constraints": "a between 0 and 2 and b <= 1"},
    ]
    events = [{"id": "e1", "values": {"a": 0.7, "b": 3}}, {"id": "e2", "values": {"a": 1, "b": 0}}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(d) + "\n" for d in subs))
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(d) + "\n" for d in events))
    files = ["--subscriptions", str(tmp_path / "s.jsonl"), "--events", str(tmp_path / "e.jsonl")]
    done = _semps("content", "match", "--threads", "1", *files)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"event": "e1", "matches": ["s1"]},
        {"event": "e2", "matches": ["s1", "s2"]},
    ]
    for bad in ("0", str(max_threads() + 1)):
        done = _semps("content", "match", "--threads", bad, *files)
        assert done.returncode == 2
        assert done.stderr == (
            f"semps: error: --threads must be between 1 and {max_threads()}, not {bad}\n"
        )
