"""Every ``semps`` command line the documentation shows is one the command line accepts: the
command and subcommand exist, and each ``--option`` is one of that (sub)command's own
options, spelt out (argparse would also take a prefix; the pages may not rely on it). The
command lines are read from the pages' shell blocks and inline code."""

from __future__ import annotations

import argparse

import pytest
from docs_support import command_lines, pages

from semps.cli import COMMANDS, _build_parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def refused(words: list[str]) -> list[str]:
    """What the command line refuses in one documented ``semps`` command (its words after
    ``semps``): an unknown command or subcommand, or options it does not have."""
    command = words[0]
    if command not in COMMANDS:
        return [f"no command {command!r}"]
    parser = _subcommands(_build_parser([command]))[command]
    rest = words[1:]
    below = _subcommands(parser)
    if below and rest and rest[0] == "...":  # "semps spark ...": any of its commands
        return []
    if below and rest and not rest[0].startswith(("-", "[")):
        if rest[0] not in below:
            return [f"no command 'semps {command} {rest[0]}'"]
        parser, rest = below[rest[0]], rest[1:]
    known = _options(parser)
    flags = (word.strip("[]").split("=")[0] for word in rest)
    return [flag for flag in flags if flag.startswith("--") and flag not in known]


def test_the_check_refuses_what_the_command_line_refuses() -> None:
    assert refused(["match", "--events", "E", "--output", "x"]) == ["--output"]
    assert refused(["match", "--events", "E", "--subscription", "S"]) == ["--subscription"]
    assert refused(["spark", "match", "[--engine", "matcher|graphframes]"]) == []
    assert refused(["spark", "matches", "--events", "E"]) == ["no command 'semps spark matches'"]
    assert refused(["run", "--once"]) == ["no command 'run'"]
    assert refused(["serve", "--no-access-log", "--max-count=5"]) == []
    assert refused(["spark", "...", "--anything"]) == []


def test_the_pages_show_command_lines_of_every_command() -> None:
    shown = {words[0] for page in pages() for words in command_lines(page.read_text())}
    assert shown >= set(COMMANDS)


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_every_documented_command_line_is_accepted(page: object) -> None:
    text = page.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    problems = [
        f"semps {' '.join(words)}: {', '.join(bad)}"
        for words in command_lines(text)
        if (bad := refused(words))
    ]
    assert problems == []
