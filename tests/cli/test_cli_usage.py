"""Every command and subcommand: ``--help`` in users' words, and a misspelt flag answered
with that command's own usage and one error line (exit 2)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest
from semps_test_support import PATIENCE

from semps.cli import COMMANDS, _build_parser


def _commands() -> list[tuple[str, ...]]:
    """Every runnable command path, e.g. ("token", "create"), read from the parsers."""
    found: list[tuple[str, ...]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.append(path)
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*path, name))

    for name in COMMANDS:
        parser = _build_parser([name])
        (top,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        walk(top.choices[name], (name,))
    return found


COMMAND_PATHS = _commands()


def semps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semps", *args], capture_output=True, text=True, timeout=PATIENCE
    )


def test_the_walk_finds_the_nested_commands() -> None:
    assert {("token", "create"), ("token", "list"), ("token", "revoke")} <= set(COMMAND_PATHS)
    assert ("serve",) in COMMAND_PATHS and ("content", "match") in COMMAND_PATHS


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_help_is_in_users_words(path: tuple[str, ...]) -> None:
    out = semps(*path, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"usage: semps {' '.join(path)}")
    assert not re.search(r"\bseeds? \d{3}", out.stdout), out.stdout
    # Every option says what it is for.
    parser = _build_parser(list(path))
    for name in path:
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[name]
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{' '.join(path)} {action.option_strings[0]} has no help"


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_a_misspelt_flag_prints_the_command_usage(path: tuple[str, ...]) -> None:
    out = semps(*path, "--no-such-flag")
    assert out.returncode == 2
    assert out.stderr.startswith(f"usage: semps {' '.join(path)}"), out.stderr
    assert out.stderr.splitlines()[-1].startswith(f"semps {' '.join(path)}: error: ")
    assert "Traceback" not in out.stderr


def test_a_close_misspelling_gets_a_suggestion() -> None:
    out = semps("demo", "--prot", "8001")
    assert out.stderr.splitlines()[-1] == (
        "semps demo: error: unrecognized arguments: --prot 8001 (did you mean --port?)"
    )


def test_the_top_level_help_lists_each_command_in_users_words() -> None:
    out = semps("--help")
    assert out.returncode == 0
    for name in COMMANDS:
        assert name in out.stdout
    assert "seed" not in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("composite", "run", "--definitions", "missing.txt", "--stream", "missing.jsonl"),
            "semps: error: definitions not found: missing.txt\n",
        ),
        (("parse", "missing.rdf"), None),
        (
            ("content", "match", "--subscriptions", "missing.jsonl", "--events", "e.jsonl"),
            None,
        ),
        (("match", "--subscriptions", "nowhere", "--events", "nowhere"), None),
    ],
)
def test_a_missing_input_file_is_one_error_line(args: tuple[str, ...], message: str | None) -> None:
    out = semps(*args)
    assert out.returncode == 2
    assert out.stderr.startswith("semps: error: ") and out.stderr.count("\n") == 1, out.stderr
    if message is not None:
        assert out.stderr == message


def test_content_match_takes_the_text_form_of_constraints(tmp_path) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text(
        '{"id": "text", "constraints": "a3 between 0.1 and 0.6 and colour = \\"red\\""}\n'
        '{"id": "json", "constraints": [{"attr": "a3", "op": ">=", "value": 0.5}]}\n'
    )
    events = tmp_path / "events.jsonl"
    events.write_text(
        '{"id": "e1", "values": {"a3": 0.3, "colour": "red"}}\n'
        '{"id": "e2", "values": {"a3": 0.55, "colour": "blue"}}\n'
        '{"id": "e3", "values": {"a3": 0.55, "colour": "red"}}\n'
    )
    # The oracle: the constraints read by hand.
    expected = {"e1": ["text"], "e2": ["json"], "e3": ["json", "text"]}
    for algorithm in ("brute", "predicate-table", "rein", "hcem"):
        out = semps(
            "content",
            "match",
            "--algorithm",
            algorithm,
            "--subscriptions",
            str(subs),
            "--events",
            str(events),
        )
        assert out.returncode == 0, out.stderr
        got = {
            row["event"]: sorted(row["matches"]) for row in map(json.loads, out.stdout.splitlines())
        }
        assert got == expected, algorithm


def test_a_bad_text_constraint_says_where(tmp_path) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text(
        '{"id": "ok", "constraints": "a >= 1"}\n{"id": "bad", "constraints": "a >> 1"}\n'
    )
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "e1", "values": {"a": 2}}\n')
    out = semps("content", "match", "--subscriptions", str(subs), "--events", str(events))
    assert out.returncode == 2
    assert out.stderr.startswith(f"semps: error: {subs}:2: constraints: 1:3: ")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_unreadable_event_file_is_one_error_line_with_any_number_of_workers(
    tmp_path, workers: str
) -> None:
    """A listed event that cannot be opened (a dangling link) stops ``semps match`` with
    its name, whether this process or a worker process reads it (a worker used to die
    with a traceback: "semantic worker process 1 died")."""
    subs, events = tmp_path / "subs", tmp_path / "events"
    subs.mkdir()
    events.mkdir()
    (subs / "s.rq").write_text("SELECT * WHERE { ?x <http://ex/p> ?y }")
    (events / "a.nt").write_text("<http://ex/a> <http://ex/p> <http://ex/b> .\n")
    (events / "b.nt").symlink_to(tmp_path / "gone.nt")
    args = ["--subscriptions", str(subs), "--events", str(events), "--workers", workers]
    out = semps("match", *args)
    assert out.returncode == 2
    assert out.stderr == f"semps: error: {events / 'b.nt'}: No such file or directory\n"
