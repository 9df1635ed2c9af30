"""The seam rule: ``lucid/_backend`` is the only code that imports NumPy or MLX.

Every other module reaches arrays through a backend (``lucid._backend.get``) and host data
through ``lucid._backend.host``, so a third array library would be one more backend and
nothing else. The check parses each module (imports inside functions count too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lucid

PACKAGE = Path(lucid.__file__).parent
SEAM = PACKAGE / "_backend"
ARRAY_LIBRARIES = {"numpy", "mlx"}


def _imported_roots(tree: ast.AST):
    """``(line, top-level module)`` of every absolute import in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value.split(".")[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value.split(".")[0]


MODULES = sorted(path for path in PACKAGE.rglob("*.py") if SEAM not in path.parents)


def test_there_are_modules_outside_the_seam():
    assert len(MODULES) > 10 and PACKAGE / "_tensor.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_module_outside_the_backend_imports_no_array_library(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [f"line {line}: {root}" for line, root in _imported_roots(tree) if root in ARRAY_LIBRARIES]
    assert not found, f"{path.relative_to(PACKAGE.parent)} imports an array library outside lucid/_backend: {found}"


def test_the_check_sees_every_form_of_import():
    source = "import numpy as np\nfrom mlx import core\ndef f():\n    import numpy.linalg\n__import__('mlx.core')\n"
    roots = [root for _, root in _imported_roots(ast.parse(source))]
    assert sorted(roots) == ["mlx", "mlx", "numpy", "numpy"]
