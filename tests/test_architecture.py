"""The package's layout as a specification (docs/architecture.md): which module may import what, and sizes."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "evalset"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
# the rooms of the house that hold no stage: a stage may use them, they use no stage
FOUNDATIONS = {"errors", "contract", "render", "speed", "io", "metrics", "stats"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """The modules ``path`` imports (``from evalset import x`` counts as ``evalset.x``)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "evalset":
                found.update(f"evalset.{alias.name}" for alias in node.names)
    return found


def room(module: str) -> str:
    """``evalset.io.trec`` -> ``io``; ``evalset.pooling`` -> ``pooling``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def evalset_rooms(path: Path) -> set[str]:
    return {room(name) for name in imports(path) if name.startswith("evalset.")} - {room(module_name(path))}


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_module_is_over_500_lines(path):
    assert len(path.read_text().splitlines()) <= 500


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) != "cli"], ids=module_name)
def test_the_library_imports_neither_the_command_line_nor_click(path):
    assert not {name for name in imports(path) if name == "click" or name.startswith("evalset.cli")}


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) in FOUNDATIONS], ids=module_name)
def test_the_foundations_import_no_stage(path):
    assert evalset_rooms(path) <= FOUNDATIONS, f"{module_name(path)} imports a stage"


COMMANDS = [p for p in MODULES if room(module_name(p)) == "cli" and p.name not in ("__init__.py", "__main__.py")]


@pytest.mark.parametrize("path", COMMANDS, ids=module_name)
def test_a_command_module_is_short_and_loads_no_library_until_run(path):
    assert len(path.read_text().splitlines()) < 150
    light = {"click", "functools", "json", "sys", "pathlib", "__future__", "evalset.contract",
             "evalset.errors"}  # and the cli's
    assert {name for name in imports(path, top_level_only=True) if not name.startswith("evalset.cli.")} <= light
