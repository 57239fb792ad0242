"""The CLI's JSON lines writer gives json.dumps' bytes, whatever the ids hold."""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pytest

from semps.cli.jsonl import QuotedIds, write_columns
from semps.matcher.results import MatchColumns

ALPHABET = ["a", "b", "7", "-", '"', "\\", "\x00", "\x1f", "\x7f", "é", "\u2028", "\U0001f600"]


def _id(rng: random.Random, plain: bool) -> str:
    pool = ALPHABET[:4] if plain else ALPHABET
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 6)))


@pytest.mark.parametrize("seed", range(6))
def test_lines_equal_json_dumps(seed: int) -> None:
    rng = random.Random(seed)
    ids: list[str] = []
    quoted = QuotedIds()
    for round_ in range(4):  # the id list grows between batches, escapes may appear late
        ids.extend(_id(rng, plain=seed % 2 == 0 or round_ < 2) for _ in range(20))
        events = [_id(rng, plain=False) for _ in range(8)]
        rows = [sorted(rng.sample(range(len(ids)), rng.randint(0, 5))) for _ in events]
        columns = MatchColumns(
            len(events),
            np.repeat(np.arange(len(events)), [len(r) for r in rows]),
            np.array([s for r in rows for s in r], np.int64),
            ids,
            np.ones(sum(map(len, rows)), np.int64),
        )
        out = io.StringIO()
        write_columns(out, events, columns, quoted)
        assert out.getvalue() == "".join(
            json.dumps({"event": e, "matches": [ids[s] for s in r]}) + "\n"
            for e, r in zip(events, rows, strict=True)
        )
