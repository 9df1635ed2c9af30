"""Every public Tensor and SparseTensor method and property, and every name in
``lucid.__all__``, has a numpydoc docstring with an Examples section.

The examples themselves run as doctests (``--doctest-modules`` in pyproject.toml); this
test makes sure there is one to run. Dunder methods (operators, ``__len__``, ...) are the
only exception: they are documented by the public method they spell (``__add__`` by ``add``).
"""

from __future__ import annotations

import inspect
import re

import pytest

import lucid

# an Examples section whose first example may follow a paragraph of prose
EXAMPLES = re.compile(r"^Examples\n-{8,}\n(?:(?!>>> ).*\n)*?>>> ", re.MULTILINE)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _documented(obj) -> bool:
    return bool(EXAMPLES.search(inspect.getdoc(obj) or ""))


def _members(cls):
    """``(name, object whose docstring documents it)`` for the public methods and properties of ``cls``."""
    for name in sorted(dir(cls)):
        if name.startswith("_") and not _is_dunder(name):
            continue  # private
        static = inspect.getattr_static(cls, name)
        if isinstance(static, property) or inspect.isroutine(static):
            yield name, static


TENSOR_MEMBERS = [(name, obj) for name, obj in _members(lucid.Tensor) if not _is_dunder(name)]
SPARSE_MEMBERS = [(name, obj) for name, obj in _members(lucid.SparseTensor) if not _is_dunder(name)]


def test_the_walk_sees_methods_and_properties():
    names = {name for name, _ in TENSOR_MEMBERS}
    assert {"add_", "detach", "item", "numpy", "backward", "sum", "shape", "grad", "T"} <= names
    assert "is_sparse" not in names  # a plain class attribute, neither method nor property
    assert len(names) > 60


@pytest.mark.parametrize("name,member", TENSOR_MEMBERS, ids=[name for name, _ in TENSOR_MEMBERS])
def test_tensor_member_has_examples(name, member):
    assert _documented(member), f"Tensor.{name} has no numpydoc docstring with an Examples section"


def test_the_walk_sees_sparse_methods_and_properties():
    names = {name for name, _ in SPARSE_MEMBERS}
    assert {"coalesce", "to_dense", "indices", "values", "add_", "zero_", "shape", "dtype", "data"} <= names
    assert not names & {"is_sparse", "layout", "_nnz", "_make"}  # class attributes; private
    assert len(names) > 30


@pytest.mark.parametrize("name,member", SPARSE_MEMBERS, ids=[name for name, _ in SPARSE_MEMBERS])
def test_sparse_tensor_member_has_examples(name, member):
    assert _documented(member), f"SparseTensor.{name} has no numpydoc docstring with an Examples section"


@pytest.mark.parametrize("name", lucid.__all__)
def test_public_name_has_examples(name):
    obj = getattr(lucid, name)
    assert _documented(obj), f"lucid.{name} has no numpydoc docstring with an Examples section"


def test_dtype_is_floating_point_has_examples():
    assert _documented(inspect.getattr_static(lucid.dtype, "is_floating_point"))


def test_the_check_wants_a_runnable_example():
    def bare():
        """Nothing to run."""

    def heading_only():
        """Text.

        Examples
        --------
        None here.
        """

    def good():
        """Text.

        Examples
        --------
        >>> 1 + 1
        2
        """

    assert not _documented(bare) and not _documented(heading_only) and _documented(good)


def _public_api():
    """``(qualified name, object)`` for every class and function the nn and optim modules
    export, and for each public method and property of those classes (an override without
    a docstring of its own is documented by the one it overrides)."""
    from lucid import nn
    from lucid.nn import functional, init, utils
    from lucid.optim import lr_scheduler, schedules, swa_utils
    from lucid.utils import data

    modules = {"lucid.autograd": lucid.autograd,  # issue 24 (autograd)
               "lucid.nn": nn, "lucid.nn.functional": functional, "lucid.nn.utils": utils,
               "lucid.nn.init": init, "lucid.utils.data": data,
               "lucid.optim": lucid.optim, "lucid.optim.lr_scheduler": lr_scheduler,
               "lucid.optim.schedules": schedules, "lucid.optim.swa_utils": swa_utils}
    for prefix, module in modules.items():
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            yield f"{prefix}.{name}", obj
            if inspect.isclass(obj):
                for member, static in _members(obj):
                    if not _is_dunder(member):
                        bound = static if isinstance(static, property) else getattr(obj, member)
                        yield f"{prefix}.{name}.{member}", bound


PUBLIC_API = list(_public_api())


def test_the_api_walk_sees_the_extension_points():
    names = {name for name, _ in PUBLIC_API}
    assert {"lucid.optim.Optimizer.update", "lucid.optim.Optimizer.init_state",
            "lucid.optim.lr_scheduler.LRScheduler.get_lr", "lucid.optim.schedules.cosine.value",
            "lucid.nn.functional.cross_entropy", "lucid.optim.swa_utils.AveragedModel",
            "lucid.nn.init.kaiming_uniform_", "lucid.utils.data.DataLoader"} <= names


@pytest.mark.parametrize("name,obj", PUBLIC_API, ids=[name for name, _ in PUBLIC_API])
def test_public_api_has_examples(name, obj):
    assert _documented(obj), f"{name} has no numpydoc docstring with an Examples section"
