"""The seam rule: ``lucid/_backend`` is the only code that imports NumPy or MLX.

Every other module reaches arrays through a backend (``lucid._backend.get``) and host data
through ``lucid._backend.host``, so a third array library would be one more backend and
nothing else. The check parses each module (imports inside functions count too). Nor does
any module outside the seam reach a backend's array namespace (its private ``_xp``, once
the public ``xp``): it calls the backend's named methods instead.
Nor is a backend a way back into it: the methods that take an operation's name (``compare``,
``logical``, ``inplace``) accept only the names lucid itself passes, and raise ValueError
otherwise.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
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


NAMESPACE_ATTRIBUTES = {"xp", "_xp"}


def _namespace_uses(tree: ast.AST):
    """``(line, name)`` of every use of an attribute named ``xp`` or ``_xp`` in ``tree``:
    ``obj.xp`` (read or written) and ``getattr``/``setattr``/``hasattr`` with the name spelled out."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in NAMESPACE_ATTRIBUTES:
            yield node.lineno, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in NAMESPACE_ATTRIBUTES):
            yield node.lineno, node.args[1].value


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_module_outside_the_backend_does_not_reach_the_array_namespace(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [f"line {line}: .{name}" for line, name in _namespace_uses(tree)]
    assert not found, (f"{path.relative_to(PACKAGE.parent)} reaches a backend's array namespace outside "
                       f"lucid/_backend (call a named Backend method instead): {found}")


def test_the_namespace_check_sees_every_form_of_use():
    source = ("a = backend.xp.zeros_like(g)\nb = t._backend._xp\nc = getattr(backend, 'xp')\n"
              "def f(backend):\n    return getattr(backend._xp, 'logical_and')\n"
              "backend.compare('equal', x, 0)\nexpand = backend.expand_dims\n")
    assert sorted(_namespace_uses(ast.parse(source))) == [(1, "xp"), (2, "_xp"), (3, "xp"), (5, "_xp")]


def test_the_namespace_is_private_to_the_backends():
    from lucid import _backend

    for device in _backend.DEVICES:
        if _backend.is_available(device):
            backend = _backend.get(device)
            assert not hasattr(backend, "xp") and backend._xp is not None


# --- the methods that take an operation's name ----------------------------------------------
def _named_operations() -> dict:
    """Each name-taking Backend method with the names lucid passes to it (as string literals)."""
    found = {"compare": set(), "logical": set(), "inplace": set()}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.lstrip("_") in found and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found[node.func.attr.lstrip("_")].add(node.args[0].value)
    return found


def _available_backends():
    from lucid import _backend

    return [_backend.get(device) for device in _backend.DEVICES if _backend.is_available(device)]


def test_the_name_taking_methods_accept_exactly_the_names_lucid_uses():
    from lucid._backend.base import _COMPARE, _INPLACE, _LOGICAL

    allowed = {"compare": set(_COMPARE), "logical": set(_LOGICAL), "inplace": set(_INPLACE)}
    assert _named_operations() == allowed


@pytest.mark.parametrize("method,name", [
    ("compare", "save"), ("compare", "logical_and"), ("compare", "__class__"), ("compare", "add"),
    ("logical", "equal"), ("logical", "bitwise_and"),
    ("inplace", "save"), ("inplace", "equal"), ("inplace", "copyto"), ("inplace", "__class__"), ("inplace", ""),
])
def test_the_name_taking_methods_reject_any_other_name(method, name):
    for backend in _available_backends():
        a = backend.asarray([1.0, -2.0, 4.0], lucid.float32)
        with pytest.raises(ValueError, match=f"unknown .*{name!r}; expected one of"):
            getattr(backend, method)(name, a, a)
        assert backend.to_numpy(a).tolist() == [1.0, -2.0, 4.0]  # nothing was written


def test_every_accepted_name_works_on_every_backend():
    from lucid._backend.base import _COMPARE, _INPLACE, _LOGICAL

    unary = {"negative", "sqrt", "abs", "sign"}
    for backend in _available_backends():
        a, b = [1.0, 4.0, 9.0], [2.0, 4.0, 1.0]
        x, y = backend.asarray(a, lucid.float32), backend.asarray(b, lucid.float32)
        for op in _COMPARE:
            assert backend.to_numpy(backend.compare(op, x, y)).tolist() == getattr(np, op)(a, b).tolist()
        for op in _LOGICAL:
            got = backend.logical(op, backend.compare("greater", x, 1.5), backend.compare("greater", y, 1.5))
            assert backend.to_numpy(got).tolist() == getattr(np, op)(np.greater(a, 1.5), np.greater(b, 1.5)).tolist()
        for op in _INPLACE:
            args = () if op in unary else (backend.asarray(b, lucid.float32),)
            got = backend.inplace(op, backend.asarray(a, lucid.float32), *args)
            want = getattr(np, op)(np.float32(a), *(np.float32(b),) * len(args))
            assert np.allclose(backend.to_numpy(got), want)


# --- a tensor's private members stay in the core ---------------------------------------------
#: The layers above the core: they use tensors through their public names only.
ABOVE_THE_CORE = sorted(path for folder in ("optim", "distributed") for path in (PACKAGE / folder).rglob("*.py"))


def _tensor_privates() -> set[str]:
    """The private fields (``__slots__``) and private methods of :class:`lucid.Tensor`."""
    names = {name for cls in lucid.Tensor.__mro__ for name in getattr(cls, "__slots__", ())}
    names |= set(vars(lucid.Tensor))
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def _private_uses(tree: ast.AST, privates: set[str]):
    """``(line, name)`` of each ``x._name`` in ``tree`` with ``_name`` a tensor's private and
    ``x`` not ``self`` or ``cls`` (a class's own private members are its business)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in privates and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            yield node.lineno, node.attr


def test_the_layers_above_the_core_are_found():
    assert any(path.name == "optimizer.py" for path in ABOVE_THE_CORE)
    assert {"_data", "_box", "_backend", "_retains_grad", "_describe"} <= _tensor_privates()


@pytest.mark.parametrize("path", ABOVE_THE_CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_above_the_core_touches_no_private_member_of_a_tensor(path):
    uses = list(_private_uses(ast.parse(path.read_text(encoding="utf-8")), _tensor_privates()))
    assert not uses, f"{path.relative_to(PACKAGE)} reaches a tensor's private members: {uses}"


def test_the_private_member_check_sees_a_use():
    source = "def f(param, self):\n    return param._retains_grad, self._data, param.grad\n"
    assert list(_private_uses(ast.parse(source), _tensor_privates())) == [(2, "_retains_grad")]
