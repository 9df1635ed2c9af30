"""lucid's modules import one way: no import cycle, counting imports made inside functions.

``tools/import_cycles.py`` builds the graph of imports between lucid's modules (those at the
top and those inside functions; not those under ``if TYPE_CHECKING:``) and lists its cycles.
A function-local import is the usual way to hide a cycle, so each one left in lucid must be
on the allow-list below with the reason it is there: a new one fails until it is justified
(or moved to the top), and an entry whose import is gone fails until it is removed.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
import_cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_cycles)

# (importer, imported): why the import is made inside a function
ALLOWED_LOCAL_IMPORTS = {
    ("lucid._backend", "lucid._backend.mlx_backend"):
        "MLX is optional and slow to import: the backend of device 'gpu' loads on its first use",
}


def test_lucid_has_no_import_cycle():
    found, _ = import_cycles.report()
    assert found == [], "import cycles: " + "; ".join(" -> ".join(component) for component in found)


def test_every_function_local_import_is_allowed_with_its_reason():
    _, local = import_cycles.report()
    found = {(importer, imported) for importer, imported, _ in local}
    unexplained = sorted(f"{importer}:{line} -> {imported}" for importer, imported, line in local
                         if (importer, imported) not in ALLOWED_LOCAL_IMPORTS)
    assert not unexplained, ("function-local imports without a reason (move them to the top, or add them "
                             f"to ALLOWED_LOCAL_IMPORTS with why): {unexplained}")
    stale = sorted(set(ALLOWED_LOCAL_IMPORTS) - found)
    assert not stale, f"ALLOWED_LOCAL_IMPORTS names imports lucid no longer makes: {stale}"
    assert all(reason.strip() for reason in ALLOWED_LOCAL_IMPORTS.values())


def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


SYNTHETIC = {
    "pkg/__init__.py": "from . import a\n",
    "pkg/a.py": "from . import b, c\n",
    # the import inside a function closes the cycle a -> b -> a
    "pkg/b.py": """\
        def f():
            from .a import g
            return g
        """,
    # not executed: no edge c -> a, so no cycle a -> c -> a
    "pkg/c.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from .a import g
        """,
    # its parent package pkg (which imports a) is imported implicitly: not an edge either
    "pkg/sub/__init__.py": "",
    "pkg/sub/d.py": "import pkg.c\n",
}


def test_the_tool_finds_a_cycle_closed_inside_a_function(tmp_path):
    _write_package(tmp_path, SYNTHETIC)
    found, local = import_cycles.report("pkg", tmp_path)
    assert found == [["pkg.a", "pkg.b"]]
    assert local == [("pkg.b", "pkg.a", 2)]


def test_the_tool_finds_no_cycle_once_the_import_is_gone(tmp_path):
    _write_package(tmp_path, {**SYNTHETIC, "pkg/b.py": "def f():\n    return 1\n"})
    assert import_cycles.report("pkg", tmp_path) == ([], [])


def test_the_tool_counts_a_type_checking_import_in_its_else_branch(tmp_path):
    _write_package(tmp_path, {**SYNTHETIC, "pkg/b.py": "", "pkg/c.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            pass
        else:
            from . import a
        """})
    assert import_cycles.report("pkg", tmp_path) == ([["pkg.a", "pkg.c"]], [])
