"""Which torch names real scripts use, and whether lucid has each.

Usage::

    python tools/torch_name_survey.py SOURCE [SOURCE ...]

Each ``SOURCE`` is a git directory (a bare mirror, as the ``fetch`` of pytorch/tutorials or
pytorch/examples gives: its ``HEAD`` is read) or a folder of ``.py`` files. Every Python file
is parsed with :mod:`ast`, never run. A script's torch names are

- attribute chains rooted at a name bound to torch, ``torch.nn``, ``torch.nn.functional``,
  ``torch.optim`` or ``torch.utils.data`` (``import torch.nn as nn``, ``from torch import nn``,
  ``import torch.nn.functional as F``, ...), and the names ``from torch... import`` brings in;
- method calls ``x.name(...)`` whose ``name`` is a method of ``torch.Tensor`` and of none of
  ``nn.Module``, ``list``, ``dict``, ``str``, ``set`` and ``optim.Optimizer`` (so ``x.view(...)``
  counts and ``model.train()`` does not): the receiver's type is not known, so this is a guess.

One line per name, the most used first: how many scripts use it, ``yes`` or ``NO`` for lucid,
the name as lucid would spell it. ``--missing`` prints only the names lucid lacks, ``--where``
the scripts that use each. The page
docs/guide/torch_names.rst lists what this found (CI has no network, so no test runs it).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import reduce
from pathlib import Path

import torch

import lucid
import lucid.distributed  # noqa: F401 - the submodules a name may be under
import lucid.nn.functional  # noqa: F401
import lucid.nn.parallel  # noqa: F401
import lucid.optim.lr_scheduler  # noqa: F401
import lucid.utils.data  # noqa: F401

# the torch modules a script binds to a name, and how a name under each is spelled from the top
ROOTS = {
    "torch": "", "torch.nn": "nn.", "torch.nn.functional": "nn.functional.", "torch.optim": "optim.",
    "torch.utils.data": "utils.data.", "torch.nn.init": "nn.init.", "torch.optim.lr_scheduler": "optim.lr_scheduler.",
    "torch.autograd": "autograd.", "torch.utils": "utils.",
}
NOT_TENSOR_METHODS = (torch.nn.Module, list, dict, str, set, torch.optim.Optimizer)


def python_files(source: str) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of each ``.py`` file of a git directory's HEAD or of a folder."""
    root = Path(source)
    if (root / "HEAD").is_file() and (root / "objects").is_dir():
        listing = subprocess.run(["git", "--git-dir", source, "ls-tree", "-r", "--name-only", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout.split()
        for path in listing:
            if path.endswith(".py"):
                text = subprocess.run(["git", "--git-dir", source, "show", f"HEAD:{path}"],
                                      capture_output=True, text=True, errors="replace").stdout
                yield path, text
    else:
        for path in sorted(root.rglob("*.py")):
            yield str(path.relative_to(root)), path.read_text(errors="replace")


def _bindings(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted torch path it stands for (``{"F": "nn.functional."}``)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ROOTS:
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = ROOTS[alias.name] if alias.asname else ""
        elif isinstance(node, ast.ImportFrom) and node.module in ROOTS:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                bound[alias.asname or alias.name] = ROOTS.get(full) or ROOTS[node.module] + alias.name
    return bound


def _chain(node: ast.Attribute) -> tuple[str, list[str]] | None:
    """``(root name, [attr, ...])`` of ``a.b.c``, or None when the root is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, parts[::-1]
    return None


def _is_tensor_method(name: str) -> bool:
    return (callable(getattr(torch.Tensor, name, None)) and not name.startswith("__")
            and not any(hasattr(kind, name) for kind in NOT_TENSOR_METHODS))


def names_in(text: str) -> set[str]:
    """The torch names one script uses: ``"nn.Linear"``, ``"multinomial"``, ``"Tensor.view"``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    _mark_parents(tree)
    bound = _bindings(tree)
    found = set()
    for local, path in bound.items():
        if path and not path.endswith("."):
            found.add(path)  # from torch.nn import Linear
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(getattr(node, "parent", None), ast.Attribute):
            chain = _chain(node)
            if chain and chain[0] in bound:
                prefix = bound[chain[0]]
                if prefix and not prefix.endswith("."):
                    prefix += "."
                found.add(_longest_torch_name(prefix, chain[1]))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            chain = _chain(node.func)
            if not (chain and chain[0] in bound) and _is_tensor_method(node.func.attr):
                found.add(f"Tensor.{node.func.attr}")
    return {name for name in found if name}


def _longest_torch_name(prefix: str, attrs: list[str]) -> str:
    """The longest leading part of ``prefix + attrs`` that names something in torch
    (``torch.nn.functional.relu`` of ``F.relu(x).sum``: attributes of a result are dropped)."""
    best = ""
    for end in range(1, len(attrs) + 1):
        name = prefix + ".".join(attrs[:end])
        if _lookup(torch, name) is None:
            break
        best = name
    return best


def _lookup(module, name: str):
    try:
        return reduce(getattr, name.split("."), module)
    except (AttributeError, RuntimeError):  # torch.classes raises RuntimeError for an unknown name
        return None


def lucid_has(name: str) -> bool:
    if name.startswith("Tensor."):
        return hasattr(lucid.Tensor, name.split(".", 1)[1])
    return _lookup(lucid, name) is not None


def _mark_parents(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node  # type: ignore[attr-defined]


def survey(sources: list[str], where: dict[str, list[str]] | None = None) -> Counter:
    """How many scripts use each torch name, over every ``.py`` file of ``sources``; ``where``,
    if given, collects the paths using each name."""
    uses: Counter = Counter()
    for source in sources:
        for path, text in python_files(source):
            names = names_in(text)
            uses.update(names)
            if where is not None:
                for name in names:
                    where.setdefault(name, []).append(path)
    return uses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="git directories (bare mirrors) or folders of .py files")
    parser.add_argument("--missing", action="store_true", help="only the names lucid lacks")
    parser.add_argument("--where", action="store_true", help="the scripts using each name, after it")
    args = parser.parse_args(argv)
    where: dict[str, list[str]] = {}
    for name, count in sorted(survey(args.sources, where).items(), key=lambda item: (-item[1], item[0])):
        has = lucid_has(name)
        if not (args.missing and has):
            print(f"{count:4d}  {'yes' if has else 'NO ':3s}  {name}")
            if args.where:
                print("".join(f"          {path}\n" for path in where[name]), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
