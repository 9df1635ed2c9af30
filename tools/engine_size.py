"""Code lines of the optimizer base and its engine, as issue 21 counts them.

Usage::

    python tools/engine_size.py        # a line per file, then the total

The base and its engine are every ``.py`` file in ``lucid/optim`` except the optimizers
(with the code their family shares, e.g. ``schedule_free.py``'s modes), the package's exports
(``__init__.py``, which each new optimizer's import lengthens), the schedule values
(``schedules.py``), ``lr_scheduler/``, ``swa_utils.py`` and the wrappers of an optimizer
(``wrappers.py``, ``schedule_free_wrapper.py``). A code line is a physical line holding a
token that is not a comment, and not inside a module's, class's or function's docstring;
blank lines do not count.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import lucid.optim as optim

ROOT = Path(__file__).resolve().parent.parent
OPTIM = ROOT / "lucid" / "optim"
#: the exports, the schedule values, weight averaging, and the wrappers (each wraps an optimizer:
#: not an Optimizer, and not the base)
NOT_BASE = {"__init__.py", "schedules.py", "swa_utils.py", "wrappers.py", "schedule_free_wrapper.py"}


def code_lines(path: Path) -> int:
    """The number of code lines in ``path`` (docstrings, comments and blank lines left out)."""
    source = path.read_text()
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines: set[int] = set()
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skipped:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def is_optimizer_file(path: Path) -> bool:
    """Whether ``path`` defines a public optimizer (a class exported by ``lucid.optim``)."""
    names = {name for name in optim.__all__ if isinstance(getattr(optim, name), type)
             and issubclass(getattr(optim, name), optim.Optimizer) and name != "Optimizer"}
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.ClassDef) and node.name in names for node in tree.body)


def base_files() -> list[Path]:
    """The files of the base and its engine."""
    return [path for path in sorted(OPTIM.glob("*.py"))
            if path.name not in NOT_BASE and not is_optimizer_file(path)]


def main() -> int:
    total = 0
    for path in base_files():
        count = code_lines(path)
        total += count
        print(f"{count:5d}  {path.relative_to(ROOT)}")
    print(f"{total:5d}  total")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
