"""The import rules between semps' parts, checked from the source (run by scripts/check).

A *part* is a folder under ``semps/``: the ground floor (every module directly in ``semps/``
plus ``semps/documents/``), ``ontology``, ``ingest``, ``graph`` (the knowledge graph: its
store, reasoner and updates), ``matcher`` (the contract, registry,
results and shared kernels) and each matcher plugin, ``broker``, ``api``, ``spark``,
``client`` and ``cli``. Each part may import only the parts listed for it in :data:`MAY_IMPORT`,
so the graph of parts has no cycles and the ground floor imports nothing of ours. Imports
inside functions count as much as those at the top of a module. A private module
(``semps.x._y``) may be imported only from inside its own package.

Usage: ``python scripts/layers.py [ROOT]``; prints each violation and exits 1 if any.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterator
from pathlib import Path

PLUGINS = ("matcher.content", "matcher.semantic", "matcher.symmetric", "matcher.composite")
_BELOW_MATCHERS = ("core", "ontology", "ingest", "graph", "matcher")

#: part -> the parts it may import (besides itself).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "ontology": frozenset({"core"}),
    "ingest": frozenset({"core"}),
    "graph": frozenset({"core", "ontology", "ingest"}),
    "matcher": frozenset({"core", "ontology", "ingest", "graph"}),
    "matcher.content": frozenset(_BELOW_MATCHERS),
    "matcher.semantic": frozenset(_BELOW_MATCHERS),
    "matcher.composite": frozenset(_BELOW_MATCHERS),
    # region matching is built on the content matcher's tables
    "matcher.symmetric": frozenset({*_BELOW_MATCHERS, "matcher.content"}),
    "broker": frozenset({*_BELOW_MATCHERS, *PLUGINS}),
    "api": frozenset({*_BELOW_MATCHERS, *PLUGINS, "broker"}),
    "spark": frozenset({*_BELOW_MATCHERS, *PLUGINS}),
    "client": frozenset({"core"}),
    "cli": frozenset({*_BELOW_MATCHERS, *PLUGINS, "broker", "api", "spark", "client"}),
}

_TOP_PARTS = ("ontology", "ingest", "graph", "matcher", "broker", "api", "spark", "client", "cli")
#: Modules directly in semps/ that are entry points, not ground floor.
_ENTRY_POINTS = {"semps.__main__": "cli"}


def part_of(module: str) -> str:
    """The part a dotted module name belongs to.

    >>> part_of("semps.errors"), part_of("semps.documents.triples"), part_of("semps.ingest.rdf")
    ('core', 'core', 'ingest')
    >>> part_of("semps.matcher.base"), part_of("semps.matcher.semantic.index")
    ('matcher', 'matcher.semantic')
    """
    if module in _ENTRY_POINTS:
        return _ENTRY_POINTS[module]
    names = module.split(".")
    if len(names) < 2 or names[1] not in _TOP_PARTS:
        return "core"
    if names[1] == "matcher" and len(names) > 2 and f"matcher.{names[2]}" in PLUGINS:
        return f"matcher.{names[2]}"
    return names[1]


def modules(root: Path) -> Iterator[tuple[str, Path]]:
    """Every module under ``root/semps``."""
    for folder, _, files in os.walk(root / "semps"):
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(folder) / name
                dotted = ".".join(path.relative_to(root).with_suffix("").parts)
                yield dotted.removesuffix(".__init__"), path


def imports(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """``(line, imported module or name)`` for every ``semps`` import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _is_module(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private_owner(root: Path, target: str) -> str | None:
    """The package that owns the first private *module* on ``target``'s path, if any."""
    names = target.split(".")
    for i, name in enumerate(names[1:], start=1):
        private = name.startswith("_") and not name.startswith("__")
        if private and _is_module(root, ".".join(names[: i + 1])):
            return ".".join(names[:i])
    return None


def violations(root: Path) -> list[str]:
    """Every import that crosses a forbidden direction or reaches into a private module."""
    found: list[str] = []
    for module, path in modules(root):
        source = part_of(module)
        for line, target in imports(path, module):
            if not target.startswith("semps.") and target != "semps":
                continue
            where = f"{path.relative_to(root)}:{line}"
            dest = part_of(target)
            if dest != source and dest not in MAY_IMPORT[source]:
                found.append(f"{where}: {source} may not import {dest} ({target})")
            owner = _private_owner(root, target)
            if owner is not None and not (module == owner or module.startswith(owner + ".")):
                found.append(f"{where}: private module imported from outside {owner} ({target})")
    return found


def _check_table_is_acyclic() -> None:
    seen: dict[str, int] = {}

    def visit(part: str, trail: tuple[str, ...]) -> None:
        if seen.get(part) == 1:
            raise SystemExit(f"MAY_IMPORT has a cycle: {' -> '.join((*trail, part))}")
        if seen.get(part) == 2:
            return
        seen[part] = 1
        for dest in MAY_IMPORT[part]:
            visit(dest, (*trail, part))
        seen[part] = 2

    for part in MAY_IMPORT:
        visit(part, ())


def main(argv: list[str]) -> int:
    _check_table_is_acyclic()
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    found = violations(root)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"layers: {len(found)} forbidden import(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
