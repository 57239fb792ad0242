"""Every relative link of the documentation leads somewhere: the file (or folder) exists and
the anchor, when there is one, is a heading of that page. Every docs/ page is reachable from
docs/index.md, so a new page cannot be left out of the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_support import anchors, links, pages, slug
from semps_test_support import ROOT


def broken(page: Path) -> list[str]:
    """The page's relative links that lead nowhere."""
    found = []
    for target in links(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            found.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(dest.read_text(encoding="utf-8")):
            found.append(f"{target}: no heading #{anchor} in {dest.name}")
    return found


def test_anchors_are_github_slugs() -> None:
    assert slug("Tokens and dead letters") == "tokens-and-dead-letters"
    assert slug("Continuous matching: `semps spark stream`") == (
        "continuous-matching-semps-spark-stream"
    )
    assert anchors("# A\n## Notes\n```\n# not a heading\n```\n## Notes\n") == {
        "a",
        "notes",
        "notes-1",
    }


def test_the_check_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# There\n## Found\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[a](there.md#found) [b](missing.md) [c](there.md#lost) [d](#here) "
        "[e](https://example.org/x) `[f](not-a-link.md)`\n## Here\n"
    )
    assert broken(page) == [
        "missing.md: no such file",
        "there.md#lost: no heading #lost in there.md",
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_index_links_every_docs_page() -> None:
    index = ROOT / "docs" / "index.md"
    linked = {(index.parent / t.partition("#")[0]).resolve() for t in links(index.read_text())}
    pages_here = {p.resolve() for p in (ROOT / "docs").glob("*.md")} - {index.resolve()}
    assert sorted(p.name for p in pages_here - linked) == []


def test_the_readme_links_the_docs_index() -> None:
    assert "docs/index.md" in links((ROOT / "README.md").read_text(encoding="utf-8"))
