"""scripts/layers.py: the import rules between semps' parts hold, and the checker catches a
break of each rule (so scripts/check can fail)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("semps_layers", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


layers = _load()


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return tmp_path


def test_the_repository_keeps_the_rules() -> None:
    assert layers.violations(ROOT) == []


def test_the_ground_floor_may_import_nothing_above_it(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"semps/event.py": "from semps.ingest.rdf import read_event\n"})
    (found,) = layers.violations(root)
    assert "core may not import ingest" in found


def test_an_import_inside_a_function_counts(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"semps/ontology/load.py": "def f():\n    from semps.ingest import rdf\n    return rdf\n"},
    )
    (found,) = layers.violations(root)
    assert found.startswith("semps/ontology/load.py:2: ontology may not import ingest")


def test_a_private_module_is_private_to_its_package(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "semps/matcher/content/_kernels.py": "",
            "semps/matcher/symmetric/index.py": "from semps.matcher.content._kernels import jit\n",
            "semps/matcher/content/rein.py": "from semps.matcher.content._kernels import jit\n",
        },
    )
    (found,) = layers.violations(root)
    assert "private module imported from outside semps.matcher.content" in found


@pytest.mark.parametrize(
    ("source", "target"),
    [("ontology", "ingest"), ("ingest", "ontology"), ("matcher", "broker"), ("client", "api")],
)
def test_forbidden_directions(tmp_path: Path, source: str, target: str) -> None:
    root = _tree(tmp_path, {f"semps/{source}/m.py": f"import semps.{target}.x\n"})
    assert len(layers.violations(root)) == 1


def test_the_table_of_parts_has_no_cycle() -> None:
    layers._check_table_is_acyclic()
    assert "ingest" not in layers.MAY_IMPORT["ontology"]
    assert layers.MAY_IMPORT["core"] == frozenset()


@pytest.mark.parametrize("part", ["broker", "api"])
@pytest.mark.parametrize("plugin", ["semantic", "content", "symmetric", "composite"])
def test_the_broker_and_the_api_may_not_import_a_plugin(
    tmp_path: Path, part: str, plugin: str
) -> None:
    """They know the Matcher contract (semps.matcher); the registry creates plugins by kind."""
    root = _tree(
        tmp_path,
        {
            f"semps/matcher/{plugin}/matcher.py": "",
            f"semps/{part}/worker.py": f"from semps.matcher.{plugin}.matcher import M\n",
        },
    )
    (found,) = layers.violations(root)
    assert found == (
        f"semps/{part}/worker.py:1: {part} may not import matcher.{plugin} "
        f"(semps.matcher.{plugin}.matcher.M)"
    )


def test_an_import_circle_between_files_is_reported_as_a_path(tmp_path: Path) -> None:
    """A circle closed by an import inside a function, and one under TYPE_CHECKING, each
    within one part (the parts' table allows every import)."""
    root = _tree(
        tmp_path,
        {
            "semps/matcher/a.py": "from semps.matcher.b import B\nA = 1\n",
            "semps/matcher/b.py": "B = 2\n\ndef f():\n    from semps.matcher.c import C\n",
            "semps/matcher/c.py": "from semps.matcher import a\nC = 3\n",
            "semps/ingest/x.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from semps.ingest.y import Y\n"
            ),
            "semps/ingest/y.py": "from semps.ingest.x import TYPE_CHECKING\nY = 1\n",
            "semps/ingest/z.py": "from semps.ingest.x import TYPE_CHECKING\n",  # no circle
        },
    )
    assert layers.violations(root) == [
        "import circle: semps/ingest/x.py:4 -> semps/ingest/y.py:1 -> semps/ingest/x.py",
        "import circle: semps/matcher/a.py:1 -> semps/matcher/b.py:4 -> semps/matcher/c.py:1 "
        "-> semps/matcher/a.py",
    ]


def test_every_file_of_a_tangle_is_on_a_reported_circle(tmp_path: Path) -> None:
    """Two circles through one file: both are reported, each the shortest through a file
    not reported yet."""
    root = _tree(
        tmp_path,
        {
            "semps/ingest/hub.py": "import semps.ingest.left\nimport semps.ingest.right\n",
            "semps/ingest/left.py": "import semps.ingest.hub\n",
            "semps/ingest/right.py": "import semps.ingest.hub\n",
        },
    )
    assert layers.circles(root) == [
        ["semps.ingest.hub", "semps.ingest.left", "semps.ingest.hub"],
        ["semps.ingest.right", "semps.ingest.hub", "semps.ingest.right"],
    ]


def test_the_repository_has_no_import_circle_between_files() -> None:
    assert layers.circles(ROOT) == []
