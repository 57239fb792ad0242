"""The service's log: standard :mod:`logging`, as text lines or one JSON object a line.

:func:`configure` installs one handler on the root logger (standard error), so the
broker's records (``semps.*``) and uvicorn's (``uvicorn.error``, and ``uvicorn.access``
when the access log is on) come out in the same format. In JSON, each line has ``time``
(UTC, ISO 8601), ``level``, ``logger`` and ``message``, plus the fields a record carries
in its ``semps`` extra (the start-up line's counts) or, for an access record, ``client``,
``method``, ``path``, ``http_version`` and ``status``.

No line carries a secret: a filter on the handler rewrites every record (uvicorn's access and
error records included) so that a ``token=`` query parameter, an ``Authorization`` header or a
``Bearer`` credential reads ``[redacted]`` (:func:`redact`).

Example:
    >>> import io, json
    >>> out = io.StringIO()
    >>> configure("info", "json", stream=out)
    >>> logging.getLogger("semps.demo").info("hello %s", "there", extra={"semps": {"n": 1}})
    >>> row = json.loads(out.getvalue())
    >>> row["message"], row["level"], row["n"]
    ('hello there', 'info', 1)
    >>> reset()
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

__all__ = ["JSONFormatter", "Redactor", "configure", "redact", "reset"]

#: A secret in a URL's query (``?token=``, ``&access_token=``), a header, or a credential.
_SECRETS = re.compile(
    r"(?i)(?P<key>[?&;](?:access_)?token=|authorization[\"']?\s*[:=]\s*[\"']?"
    r"(?:bearer\s+|basic\s+)?|bearer\s+(?=[\w.~+/=-]{12}))(?P<secret>[^\s&;\"',)\]]+)"
)
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """``text`` with every token-looking secret replaced.

    Example:
        >>> redact('GET /subscriptions/s1/ws?after=3&token=abc123 "Authorization: Bearer xyz"')
        'GET /subscriptions/s1/ws?after=3&token=[redacted] "Authorization: Bearer [redacted]"'
    """
    return _SECRETS.sub(lambda m: m["key"] + REDACTED, text)


class Redactor(logging.Filter):
    """Rewrites each record's message, arguments and exception text through :func:`redact`
    (records are shared by every handler: rewritten once, they are safe everywhere)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {
                k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()
            }
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
_handler: logging.Handler | None = None


class JSONFormatter(logging.Formatter):
    """One JSON object a line."""

    def format(self, record: logging.LogRecord) -> str:
        row: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        extra = getattr(record, "semps", None)
        if isinstance(extra, dict):
            row.update(extra)
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            if len(record.args) == len(_ACCESS_FIELDS):
                row.update(zip(_ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info:
            row["exception"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(row, default=str)


class _TextFormatter(logging.Formatter):
    """``time LEVEL logger: message`` with UTC times."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        when = datetime.fromtimestamp(record.created, UTC)
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def configure(level: str = "info", fmt: str = "text", *, stream: TextIO | None = None) -> None:
    """Send every log record at ``level`` or above to ``stream`` (standard error).

    Args:
        level: ``debug``, ``info``, ``warning`` or ``error``.
        fmt: ``text`` or ``json``.
        stream: where the lines go.
    """
    global _handler
    reset()
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(Redactor())
    handler.setFormatter(JSONFormatter() if fmt == "json" else _TextFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uv = logging.getLogger(name)
        uv.handlers.clear()  # uvicorn's own handlers would print every line twice
        uv.propagate = True
    _handler = handler


def reset() -> None:
    """Remove the handler :func:`configure` installed."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler = None
