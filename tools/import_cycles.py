"""Import cycles among lucid's modules, counting imports made inside functions.

Usage::

    python tools/import_cycles.py          # each cycle, then the function-local imports

A module's edges are every ``import`` and ``from ... import`` it executes, at the top or
inside a function, to another module of the package (``from . import x`` names submodule
``x`` when there is one). Imports under ``if TYPE_CHECKING:`` are not executed and are
left out, and so is the implicit import of a module's parent packages. A cycle is a
strongly connected component of more than one module; a function-local import is reported
with the cycle it would hide, if any.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_names(package: str = "lucid", root: Path = ROOT) -> dict[str, Path]:
    """Every module of ``package`` (a folder of ``root``), by dotted name (a package by its own name)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """``(node, local)`` for each import executed, ``local`` when inside a function."""
    def walk(nodes, local):
        for child in nodes:
            if isinstance(child, ast.If) and _is_type_checking(child):
                yield from walk(child.orelse, local)  # the else branch runs: its imports count
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, local
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from walk(ast.iter_child_nodes(child), inner)
    yield from walk(ast.iter_child_nodes(tree), False)


def edges(modules: dict[str, Path]) -> list[tuple[str, str, bool, int]]:
    """``(importer, imported, local, line)`` for every import between modules of ``modules``."""
    out = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node, local in _imports(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target and target not in modules:  # import a.b.c of a module a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    out.append((name, target, local, node.lineno))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def report(package: str = "lucid", root: Path = ROOT) -> tuple[list[list[str]], list[tuple[str, str, int]]]:
    """The cycles, and the function-local imports ``(importer, imported, line)``."""
    modules = module_names(package, root)
    all_edges = edges(modules)
    graph: dict[str, set[str]] = {}
    for importer, imported, _, _ in all_edges:
        graph.setdefault(importer, set()).add(imported)
    local = [(a, b, line) for a, b, is_local, line in all_edges if is_local]
    return cycles(graph), local


def main() -> int:
    found, local = report()
    for component in found:
        print("cycle:", " -> ".join(component))
    members = {m for component in found for m in component}
    for importer, imported, line in local:
        hides = " (in a cycle)" if importer in members and imported in members else ""
        print(f"function-local import: {importer}:{line} -> {imported}{hides}")
    print(f"{len(found)} cycles, {len(local)} function-local imports")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
