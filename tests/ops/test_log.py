"""The service's log lines: text or JSON, filtered by level."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest

from semps.log import configure, reset


@pytest.fixture
def out() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    yield stream
    reset()


def test_text_lines_carry_a_utc_time_the_level_and_the_logger(out: io.StringIO) -> None:
    configure("info", "text", stream=out)
    logging.getLogger("semps.webhooks").warning("webhook of %s failed", "sub-1")
    line = out.getvalue().strip()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING semps.webhooks: webhook of sub-1 failed",
        line,
    ), line


def test_records_under_the_level_are_left_out(out: io.StringIO) -> None:
    configure("warning", "text", stream=out)
    logging.getLogger("semps.retention").info("pruned 3")
    logging.getLogger("semps.retention").error("failed")
    assert [line.split(" ", 1)[1] for line in out.getvalue().splitlines()] == [
        "ERROR semps.retention: failed"
    ]


def test_json_lines_carry_an_access_records_fields(out: io.StringIO) -> None:
    configure("info", "json", stream=out)
    access = logging.getLogger("uvicorn.access")
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/health", "1.1", 200)
    row = json.loads(out.getvalue())
    assert row["message"] == '127.0.0.1:5 - "GET /health HTTP/1.1" 200'
    assert (row["client"], row["method"], row["path"], row["status"]) == (
        "127.0.0.1:5",
        "GET",
        "/health",
        200,
    )


def test_an_exception_is_kept_in_its_json_line(out: io.StringIO) -> None:
    configure("info", "json", stream=out)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("semps.api").exception("request failed")
    (line,) = out.getvalue().splitlines()
    row = json.loads(line)
    assert row["level"] == "error" and "RuntimeError: boom" in row["exception"]


def test_configuring_twice_leaves_one_handler(out: io.StringIO) -> None:
    configure("info", "text", stream=out)
    configure("info", "text", stream=out)
    logging.getLogger("semps.x").info("once")
    assert out.getvalue().count("once") == 1
