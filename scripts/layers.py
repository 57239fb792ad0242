"""The import rules between semps' parts, checked from the source (run by scripts/check).

A *part* is a folder under ``semps/``: the ground floor (every module directly in ``semps/``
plus ``semps/documents/``), ``pool`` (``semps/pool.py``: worker processes), ``ontology``,
``ingest``, ``graph`` (the knowledge graph: its store, reasoner and updates), ``matcher``
(the contract, registry, results and shared kernels) and each matcher plugin, ``broker``,
``api``, ``spark``, ``client`` and ``cli``. Each part may import only the parts listed for it
in :data:`MAY_IMPORT`, so the graph of parts has no cycles and the ground floor imports
nothing of ours. Imports inside functions and under ``TYPE_CHECKING`` count as much as those
at the top of a module. A private module (``semps.x._y``) may be imported only from inside
its own package.

Files have no import circles either: read as a graph of files (each import an arrow from its
file to the file it names: the module, or the package's ``__init__.py``), no file reaches
itself. Each circle is reported as a path, ``a.py:3 -> b.py:12 -> a.py`` (each file with the
line of its import of the next), every file of a circle in at least one path.

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
#: Worker processes (semps/pool.py): the broker's matching workers, the semantic matcher's
#: verification and parse-ahead processes, and the CLI's all run on it.
_POOL = "pool"

#: part -> the parts it may import (besides itself).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "ontology": frozenset({"core"}),
    "ingest": frozenset({"core"}),
    "graph": frozenset({"core", "ontology", "ingest"}),
    "matcher": frozenset({"core", "ontology", "ingest", "graph"}),
    "pool": frozenset({"core"}),
    "matcher.content": frozenset(_BELOW_MATCHERS),
    "matcher.semantic": frozenset({*_BELOW_MATCHERS, _POOL}),
    "matcher.composite": frozenset(_BELOW_MATCHERS),
    # region matching is built on the content matcher's tables
    "matcher.symmetric": frozenset({*_BELOW_MATCHERS, "matcher.content"}),
    # the broker and the API know the Matcher contract, never a plugin (the registry
    # creates matchers by kind)
    "broker": frozenset({*_BELOW_MATCHERS, _POOL}),
    "api": frozenset({*_BELOW_MATCHERS, "broker"}),
    # protocols beside HTTP that feed the broker and carry its notifications (MQTT): they
    # drive the broker as the API does, and nothing but the command line starts them
    "bridges": frozenset({*_BELOW_MATCHERS, "broker"}),
    "spark": frozenset({*_BELOW_MATCHERS, *PLUGINS}),
    "client": frozenset({"core"}),
    "cli": frozenset(
        {*_BELOW_MATCHERS, *PLUGINS, _POOL, "broker", "api", "bridges", "spark", "client"}
    ),
}

_TOP_PARTS = (
    "pool",
    "ontology",
    "ingest",
    "graph",
    "matcher",
    "broker",
    "api",
    "bridges",
    "spark",
    "client",
    "cli",
)
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
    """Every import that crosses a forbidden direction or reaches into a private module, and
    every import circle between files (:func:`circles`)."""
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
    found.extend(circle_report(root, path) for path in circles(root))
    return found


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """module -> {module it imports: the line of its first such import}, ``semps`` only."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules(root):
        arrows: dict[str, int] = {}
        for line, target in imports(path, module):
            if not target.startswith("semps.") and target != "semps":
                continue
            named = target if _is_module(root, target) else target.rpartition(".")[0]
            if named != module and _is_module(root, named):
                arrows.setdefault(named, line)
        graph[module] = arrows
    return graph


def _components(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, arrows = work[-1]
            step = next((n for n in arrows if n not in index or n in on_stack), None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif step in index:
                low[node] = min(low[node], index[step])
            else:
                index[step] = low[step] = len(index)
                stack.append(step)
                on_stack.add(step)
                work.append((step, iter(sorted(graph[step]))))
    return found


def _shortest_circle(graph: dict[str, dict[str, int]], start: str, inside: set[str]) -> list[str]:
    """The shortest path from ``start`` back to it through modules of ``inside``."""
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(graph[node]):
                if step == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [*reversed(path), start]
                if step in inside and step not in came:
                    came[step] = node
                    following.append(step)
        frontier = following
    raise AssertionError(f"{start} is in no circle")  # pragma: no cover


def circles(root: Path) -> list[list[str]]:
    """Import circles between files, as module paths ``[a, b, ..., a]``: per strongly
    connected component of the file graph, shortest circles until each of its modules is
    on one."""
    graph = import_graph(root)
    found: list[list[str]] = []
    for component in _components(graph):
        inside, left = set(component), set(component)
        while left:
            path = _shortest_circle(graph, min(left), inside)
            found.append(path)
            left -= set(path)
    return found


def _file(root: Path, module: str) -> str:
    path = root.joinpath(*module.split("."))
    found = path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"
    return str(found.relative_to(root))


def circle_report(root: Path, path: list[str]) -> str:
    """``import circle: a.py:3 -> b.py:12 -> a.py`` (each line: the import of the next)."""
    graph = import_graph(root)
    steps = [f"{_file(root, a)}:{graph[a][b]}" for a, b in zip(path, path[1:], strict=False)]
    return "import circle: " + " -> ".join([*steps, _file(root, path[-1])])


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
