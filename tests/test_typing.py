"""lucid is typed: its annotations check clean under mypy, cover the public API, and ship.

- ``python -m mypy`` over ``lucid/`` (the ``[tool.mypy]`` settings of pyproject.toml) finds
  no error; under CI=true a missing mypy fails the run instead of skipping (tests/conftest.py).
- Every function and method of every public module's ``__all__`` has its parameters and
  return annotated.
- A user's script type-checks against lucid as expected: the ops are Tensor methods and
  operators, ``max(dim=...)`` gives its named tuple, and misuse is reported.
- The wheel carries ``lucid/py.typed`` (PEP 561), so type checkers read the annotations of an
  installed lucid.

And the behaviour bugs the type check found, each kept fixed here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import pkgutil
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import lucid

ROOT = Path(__file__).resolve().parent.parent
MYPY_TIMEOUT = 300  # seconds; a cold run over lucid/ takes about 10 on the 2-core development machine


def _mypy(args: list[str], cache: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")  # a skip fails under CI=true, which installs it (the test extra)
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=MYPY_TIMEOUT)


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    """One cache for the module's runs: the second reads lucid's analysis from the first."""
    return tmp_path_factory.mktemp("mypy_cache")


def test_mypy_finds_no_error_in_lucid(mypy_cache):
    """pyproject's [tool.mypy]: ``packages = ["lucid"]``, every annotated body checked."""
    run = _mypy([], mypy_cache)
    assert run.returncode == 0 and "Success: no issues found" in run.stdout, run.stdout + run.stderr


# --- the public API is annotated ----------------------------------------------------------------
_NOT_API = {"__repr__", "__str__", "__format__", "__hash__", "__reduce__", "__reduce_ex__", "__getstate__",
            "__setstate__", "__init_subclass__", "__new__", "__dir__", "__class_getitem__"}


def _public_modules() -> list:
    """lucid and its submodules with an ``__all__`` whose path has no private part."""
    found = [lucid]
    for info in pkgutil.walk_packages(lucid.__path__, "lucid."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.name == "lucid.distributed.run":
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found.append(module)
    return found


def _exempt(fn) -> bool:
    """Functions whose types are declared elsewhere, or cannot be written on them:

    - the operators lucid._ops.methods makes for Tensor at import (``_operator``'s wrappers,
      the reflected lambdas): Tensor's body declares them for type checkers (see below);
    - the update rules' vocabulary (``sqrt``, ``lerp``, ...): polymorphic over numbers and
      every backend's arrays, and a helper's source is compiled by numba as it is written.
    """
    from lucid._backend.rules import VOCABULARY

    generated = "<lambda>" in fn.__qualname__ or "<locals>" in fn.__qualname__
    return generated or (fn.__module__ == "lucid._backend.rules" and fn.__name__ in VOCABULARY)


def _functions_of(obj):
    """``(name, function)`` for a function, or for a lucid class: its public methods and
    properties (and the dunders that are part of its interface), along its lucid bases."""
    if not inspect.isclass(obj):
        yield obj.__qualname__, obj
        return
    seen = set()
    for klass in obj.__mro__:
        if not klass.__module__.startswith("lucid"):
            continue
        for name, value in vars(klass).items():
            if name in seen or name in _NOT_API or (name.startswith("_") and not name.endswith("__")):
                continue
            seen.add(name)
            value = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            value = value.fget if isinstance(value, property) else value
            if inspect.isfunction(value):
                yield f"{obj.__name__}.{name}", value


def _unannotated(fn) -> list[str]:
    signature = inspect.signature(fn)
    parameters = list(signature.parameters.values())
    if parameters and parameters[0].name in ("self", "cls") and "." in fn.__qualname__:
        parameters = parameters[1:]
    missing = [p.name for p in parameters if p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_the_public_api_is_annotated():
    modules = _public_modules()
    assert {"lucid", "lucid.nn", "lucid.nn.functional", "lucid.optim", "lucid.optim.lr_scheduler",
            "lucid.utils.data", "lucid.distributed"} <= {m.__name__ for m in modules}
    missing, checked = [], set()
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or not getattr(obj, "__module__", "").startswith("lucid"):
                continue
            for qualname, fn in _functions_of(obj):
                if id(fn) not in checked and not _exempt(fn):
                    checked.add(id(fn))
                    gaps = _unannotated(fn)
                    if gaps:
                        missing.append(f"{fn.__module__}.{qualname}: {', '.join(gaps)}")
    assert len(checked) > 400
    assert not missing, "not annotated:\n" + "\n".join(sorted(missing))


def test_tensor_declares_every_method_lucid_attaches_to_it():
    """The ``if TYPE_CHECKING:`` block of Tensor's body names what ``lucid._ops.methods.METHODS``
    attaches at import (and ``T``), so that a type checker sees ``x.sum()`` and ``x + 1``."""
    from lucid._ops.methods import METHODS

    tree = ast.parse((ROOT / "lucid" / "_tensor.py").read_text(encoding="utf-8"))
    (tensor,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"]
    (block,) = [n for n in tensor.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    declared = set()
    for node in block.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                declared.update(t.id for t in (target.elts if isinstance(target, ast.Tuple) else [target]))
        elif isinstance(node, ast.FunctionDef):
            declared.add(node.name)
    assert declared == set(METHODS) | {"T"}, (set(METHODS) | {"T"}) ^ declared


# --- what a user's type checker sees --------------------------------------------------------------
USER_SCRIPT = '''
import lucid
from lucid import nn, optim
from lucid.optim.lr_scheduler import StepLR
from lucid.utils.data import DataLoader, TensorDataset

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = optim.AdamW(model.parameters(), lr=1e-2)
scheduler = StepLR(optimizer, step_size=2)
x, y = lucid.randn(8, 3), lucid.randn(8, 1)
for xb, yb in DataLoader(TensorDataset(x, y), batch_size=4):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    optimizer.step()
scheduler.step()
reveal_type(loss)
reveal_type((x * 2 + 1).sum(dim=0).exp())
reveal_type(2.0 - x)
reveal_type(x.max(dim=1).indices)
reveal_type(x.max())
reveal_type(x.shape)
reveal_type(x.size(0))
reveal_type(x[0] > 0)
reveal_type(x.T @ x)
reveal_type(x.sort().values)
reveal_type(optimizer.param_groups[0]["lr"])
reveal_type(nn.Linear(3, 4).to("cpu"))
with lucid.no_grad():
    reveal_type(nn.functional.softmax(x, dim=1))
x.add_("one")  # misuse, to be reported
optim.SGD(model.parameters(), lr="0.1")  # misuse, to be reported
'''
REVEALED = ["lucid._tensor.Tensor"] * 3 + ["lucid._tensor.Tensor", "lucid._tensor.Tensor", "tuple[int, ...]",
            "int", "lucid._tensor.Tensor", "lucid._tensor.Tensor", "lucid._tensor.Tensor", "Any",
            "lucid.nn.modules.linear.Linear", "lucid._tensor.Tensor"]


def test_a_users_script_type_checks_against_lucid(tmp_path, mypy_cache):
    script = tmp_path / "train.py"
    script.write_text(USER_SCRIPT)
    run = _mypy([str(script)], mypy_cache)  # lucid from this checkout (cwd)
    lines = run.stdout.splitlines()
    revealed = [line.split('Revealed type is "', 1)[1].rstrip('"') for line in lines if "Revealed type" in line]
    assert revealed == REVEALED, run.stdout
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 2 and all(script.name in e for e in errors), run.stdout
    assert '"add_" of "Tensor"' in errors[0] and '"SGD"' in errors[1], run.stdout


# --- py.typed ships -------------------------------------------------------------------------------
def test_the_wheel_ships_py_typed(tmp_path):
    """Built from a copy of the package and pyproject.toml, with setuptools' PEP 517 hook."""
    assert (ROOT / "lucid" / "py.typed").is_file()
    source = tmp_path / "source"
    shutil.copytree(ROOT / "lucid", source / "lucid", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    dist = tmp_path / "dist"
    dist.mkdir()
    hook = f"from setuptools import build_meta; build_meta.build_wheel({str(dist)!r})"
    build = subprocess.run([sys.executable, "-c", hook], cwd=source, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith("lucid_autograd-")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "lucid/py.typed" in names
    assert re.search(r"^Name: lucid-autograd$", metadata, re.M)


# --- behaviour bugs the type check found ----------------------------------------------------------
def test_sort_and_topk_results_pickle():
    """Their named tuples were called "sort" and "topk" in the module whose functions have
    those names, so pickle found the functions instead of the classes (mypy: name-match)."""
    x = lucid.tensor([3.0, 1.0, 2.0])
    for result, name in ((x.sort(), "sort"), (x.topk(2), "topk")):
        back = pickle.loads(pickle.dumps(result))
        assert type(back) is type(result) and repr(back) == repr(result)
        assert repr(result).startswith(f"{name}(values=")  # torch.return_types' names, as before


def test_is_available_is_annotated_with_the_builtin_bool():
    """In lucid/__init__.py ``bool`` is lucid.bool, the dtype: the annotation said that dtype."""
    import typing

    assert typing.get_type_hints(lucid.is_available)["return"] is bool
