"""Reading the documentation as data: its pages, their links and headings, and the ``semps``
command lines in their code (fenced blocks and inline code spans)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from semps_test_support import ROOT

#: Languages of the fenced blocks that hold shell command lines.
SHELL = {"", "bash", "sh", "shell", "console"}
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", flags=re.MULTILINE)
#: ``semps COMMAND`` in a command line (also ``.venv/bin/semps`` and the cluster's driver
#: script ``semps_main.py``, which takes the same arguments).
_INVOCATION = re.compile(r"(?:^|(?<=[\s/(]))semps(?:_main\.py)?\s+(?=[a-z])")
#: Words that end one command (pipes outside option brackets, lists, redirections).
_END = {"|", "||", "&&", ";", "&", ">", ">>", "2>", "<", ")"}


def pages() -> list[Path]:
    """The documentation: the README, the docs/ pages, the benchmarks' README and the
    changelog."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found += [p for p in (ROOT / "bench" / "README.md", ROOT / "CHANGELOG.md") if p.exists()]
    return found


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks, ``(language, code)``."""
    return [(m[1], m[2]) for m in _FENCE.finditer(text)]


def prose(text: str) -> str:
    """The text without its fenced blocks, inline code and HTML comments."""
    text = _FENCE.sub("", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    return _SPAN.sub("", text)


def spans(text: str) -> list[str]:
    """The inline code spans outside fenced blocks."""
    return _SPAN.findall(re.sub(r"<!--.*?-->", "", _FENCE.sub("", text), flags=re.DOTALL))


def links(text: str) -> list[str]:
    """The targets of the page's Markdown links (not in code)."""
    return _LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor (repeated headings get ``-1``, ``-2``, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return found


def shell_text(code: str) -> str:
    """Shell code as words: line continuations joined, comments dropped, each quoted string
    replaced by ``Q`` (so neither a SPARQL text nor an apostrophe in a comment is read as
    options)."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(code):
        c = code[i]
        if quote:
            if c == quote:
                quote = ""
                out.append("Q")
            elif c == "\\" and quote == '"':
                i += 1
        elif c in "'\"":
            quote = c
        elif c == "\\" and code[i + 1 : i + 2] == "\n":
            out.append(" ")
            i += 1
        elif c == "#" and (i == 0 or code[i - 1] in " \t\n"):
            while i < len(code) and code[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def invocations(line: str) -> Iterator[list[str]]:
    """Each ``semps`` command in one line of shell words: its words, up to what ends it."""
    for found in _INVOCATION.finditer(line):
        words: list[str] = []
        depth = 0
        for word in line[found.end() :].split():
            if depth == 0 and word in _END:
                break
            depth += word.count("[") - word.count("]")
            words.append(word)
        yield words


def command_lines(text: str) -> Iterator[list[str]]:
    """Every ``semps`` command of a page: in its shell blocks and in its inline code."""
    for language, code in blocks(text):
        if language in SHELL:
            for line in shell_text(code).splitlines():
                yield from invocations(line)
    for span in spans(text):
        yield from invocations(shell_text(span))
