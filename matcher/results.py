"""The one result format of bulk matching (``semps match``, ``semps spark match``).

One JSON object per event, as in the shared workloads' ``expected.jsonl``:
``{"event": id, "matches": [sorted subscription ids], "solutions": {id: count}}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def result_record(event_id: str, counts: Mapping[str, int]) -> dict[str, object]:
    """The result object of one event from subscription id -> solution count.

    Example:
        >>> result_record("e1", {"s2": 1, "s1": 3})
        {'event': 'e1', 'matches': ['s1', 's2'], 'solutions': {'s1': 3, 's2': 1}}
    """
    ids = sorted(counts)
    return {"event": event_id, "matches": ids, "solutions": {i: counts[i] for i in ids}}


def result_line(event_id: str, counts: Mapping[str, int]) -> str:
    """One output line (JSON, no newline) of an event: :func:`result_record`, serialised.

    Example:
        >>> result_line("e1", {"s1": 3})
        '{"event": "e1", "matches": ["s1"], "solutions": {"s1": 3}}'
    """
    return json.dumps(result_record(event_id, counts))
