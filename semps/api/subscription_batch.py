"""The bodies ``POST /subscriptions/batch`` reads: many subscriptions in one request.

Three forms, by the body's media type:

- ``text/plain`` (or ``application/sparql-query``, or none): one subscription a line,
  blank lines skipped; a line's subscription has no name.
- JSON lines (``application/x-ndjson``, ``application/jsonl``): one JSON object a line,
  ``{"text": "...", "name": "..."}`` (``name`` optional), blank lines skipped; a line
  that is not such an object is that item's error.
- a tar archive (``application/x-tar``, uncompressed): every regular member whose name
  ends in ``.rq`` is a subscription named after its file stem, in the archive's order;
  other members (folders, other files) are skipped.

Every form is bounded by the body's size (``max_batch_bytes``, read bounded before this)
and by ``max_batch_subscriptions`` items, checked before anything is registered.
"""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from semps.errors import SempsError, SubscriptionError, SubscriptionSyntaxError
from semps.limits import Limits

__all__ = ["BATCH_MEDIA_TYPES", "JSON_LINES", "TAR", "BatchEntry", "read_batch"]

TEXT = "text/plain"
SPARQL = "application/sparql-query"
#: The JSON lines media types, the first the one clients send.
JSON_LINES = ("application/x-ndjson", "application/jsonl")
#: The tar media types, the first the one clients send.
TAR = ("application/x-tar", "application/tar")
#: Every media type a batch may have.
BATCH_MEDIA_TYPES = (TEXT, SPARQL, *JSON_LINES, *TAR)


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One item of a batch: its text and name, or why it could not be read."""

    text: str = ""
    name: str | None = None
    error: SempsError | None = None


def read_batch(body: bytes, media_type: str | None, limits: Limits) -> list[BatchEntry]:
    """The items of a batch body of ``media_type`` (``None``: text), in order.

    Raises:
        SubscriptionError: a tar body that is not a tar archive (400).
        SubscriptionLimitExceeded: more than ``max_batch_subscriptions`` items (422).
    """
    if media_type in TAR:
        entries = _tar(body, limits)
    elif media_type in JSON_LINES:
        entries = [_json_line(n, line) for n, line in _lines(body)]
    else:
        entries = [BatchEntry(line.strip()) for _, line in _lines(body)]
    limits.check_batch_size(len(entries))
    return entries


def _lines(body: bytes) -> list[tuple[int, str]]:
    """The non-blank lines with their 1-based numbers."""
    text = body.decode("utf-8", "replace")
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _json_line(number: int, line: str) -> BatchEntry:
    expected = 'expected {"text": "...", "name": "..."}'
    try:
        item = json.loads(line)
    except ValueError as exc:
        msg = f"line {number} is not JSON ({exc.args[0]}); {expected}"
        return BatchEntry(error=SubscriptionSyntaxError(msg, line=number))
    text = item.get("text") if isinstance(item, dict) else None
    name = item.get("name") if isinstance(item, dict) else None
    if not isinstance(text, str) or not (name is None or isinstance(name, str)):
        msg = f"line {number}: {expected}"
        return BatchEntry(error=SubscriptionSyntaxError(msg, line=number))
    return BatchEntry(text, name)


def _tar(body: bytes, limits: Limits) -> list[BatchEntry]:
    entries: list[BatchEntry] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:") as archive:
            for member in archive:
                if not member.isfile() or not member.name.lower().endswith(".rq"):
                    continue
                limits.check_batch_size(len(entries) + 1)  # before reading any further
                stream = archive.extractfile(member)
                data = stream.read() if stream is not None else b""
                name = PurePosixPath(member.name).stem
                entries.append(BatchEntry(data.decode("utf-8", "replace"), name))
    except (tarfile.TarError, EOFError) as exc:
        msg = f"the body is not a tar archive of .rq files ({exc})"
        raise SubscriptionError(msg) from exc
    return entries
