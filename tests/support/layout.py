"""The package's layout read from its source, for tests/test_architecture.py: its modules, the rooms they are in, the
graph of the imports between them, and the map of docs/architecture.md. Every function takes the package's root
folder (``.../evalset``), so that a rule can be run on a copy of the package (the rules' own tests break a copy).

Conventions
-----------
- A module is a ``.py`` file under the root, named by its dotted name (``evalset.io.trec``; a package by its folder:
  ``evalset.io``). Its **room** is the first name below the root (``io``); a module of the root itself is a room of
  its own (``errors``, ``contract``); the root package (``evalset/__init__.py``, which holds the version) is the room
  ``""``, below every other; ``evalset/__main__.py`` (``python -m evalset``) is the command line's.
- An **import** is any ``import`` or ``from ... import`` statement anywhere in a module: at its top, inside a function
  (a late import), under ``if TYPE_CHECKING:``. ``from a.b import c`` imports the module ``a.b.c`` when there is one,
  else ``a.b``; a relative import is resolved against the module's package. Importing ``a.b.c`` is an edge to
  ``a.b.c`` alone: the packages Python initialises on the way are not edges (that would make every package and its
  modules a cycle).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package rooted at ``root``, by dotted name (``__pycache__`` and the like left out)."""
    return {module_name(root, path): path for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}


def room(module: str) -> str:
    """``evalset.io.trec`` -> ``io``; ``evalset.errors`` -> ``errors``; ``evalset`` -> ``""``; ``evalset.__main__``
    -> ``cli`` (the program of ``python -m evalset`` is the command line)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    return "cli" if parts[1] == "__main__" else parts[1]


@dataclass(frozen=True)
class Import:
    """One import of a module of the package by another: where it is written and whether it is at the top."""

    importer: str
    imported: str
    line: int
    late: bool  # inside a function, a class or an ``if`` (TYPE_CHECKING among them)

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}{', late' if self.late else ''}) imports {self.imported}"


def _imported_names(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # a relative import: against the importer's package
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of the package ``name`` loads (``a.b.c`` -> ``a.b`` when ``c`` is a name in ``a.b``), or None."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(root: Path) -> list[Import]:
    """Every import between two modules of the package (module docstring), in module then line order."""
    known = modules(root)
    found = []
    for importer, path in known.items():
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = _imported_names(node, importer, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):  # ``from a.b import c``: a.b.c when a module, else a.b
                base, *members = names
                names = [member for member in members if member in known] or [base]
            targets = dict.fromkeys(filter(None, (_resolve(name, known) for name in names)))
            found += [Import(importer, target, node.lineno, id(node) not in top) for target in targets
                      if target != importer]
    return found


def cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative), each sorted, in order."""
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        graph[edge.importer].add(edge.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
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
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


# --- what a module writes, calls and imports, as written
def imported_names(source_tree: ast.Module, top_level_only: bool = False) -> set[str]:
    """The modules ``source_tree`` imports, as written (``from evalset import x`` counts as ``evalset.x`` too)."""
    found = set()
    for node in (source_tree.body if top_level_only else ast.walk(source_tree)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "evalset":
                found.update(f"evalset.{alias.name}" for alias in node.names)
    return found


def string_pieces(source_tree: ast.AST, docstrings_too: bool = False) -> list[tuple[int, str]]:
    """The string literals of ``source_tree`` (f-strings' literal parts among them), docstrings left out unless
    asked."""
    docstrings = set() if docstrings_too else {
        id(node.body[0].value) for node in ast.walk(source_tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(source_tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def called_or_imported(source_tree: ast.AST) -> set[str]:
    """The names ``source_tree`` calls (``f(...)``, ``np.f(...)``) or imports (``from m import f``)."""
    names = {alias.name for node in ast.walk(source_tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    for node in ast.walk(source_tree):
        if isinstance(node, ast.Call):
            function = node.func
            names.add(function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", ""))
    return names


# --- the map of docs/architecture.md
FLOOR_ROW = re.compile(r"^\|\s*(\d+|-)\s*\|\s*`([a-z_]+)/?`\s*\|\s*(foundation|stage|command line|adapter)\s*\|"
                       r"\s*(\S.*?)\s*\|\s*$")
"""A row of the map's table of rooms: ``| floor | `room` | kind | what it owns |`` (an adapter's floor: ``-``)."""
def map_rooms(text: str) -> list[tuple[str, str, str]]:
    """``(floor, room, kind)`` of every row of the map's table of rooms, in the order written."""
    return [(m[1], m[2], m[3]) for line in text.splitlines() if (m := FLOOR_ROW.match(line))]
