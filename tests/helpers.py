"""Helpers that several test files share (the tests directory is on ``sys.path``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import lucid
from lucid import nn


def torch_or_skip():
    """The torch module (a test that needs it is skipped where it is not installed)."""
    return pytest.importorskip("torch")


def raised(fn):
    """The exception ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any exception is compared
        return exc
    return None


def param(values, device="cpu", dtype=None):
    """A lucid Parameter holding ``values``."""
    return nn.Parameter(lucid.tensor(values, dtype=dtype, device=device))


def host(t) -> np.ndarray:
    """A NumPy copy of the values of ``t``."""
    return np.array(t.detach())


def torch_pair(values, dtype=np.float64):
    """The same parameter in lucid and torch."""
    torch = torch_or_skip()
    array = np.asarray(values, dtype=dtype)
    return nn.Parameter(lucid.tensor(array)), torch.from_numpy(array.copy()).requires_grad_()


def assert_same_signature(ours, theirs):
    """``ours`` takes the same parameters as ``theirs``: names, order, kinds and defaults."""
    ours, theirs = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
    assert list(ours) == list(theirs)
    for key in theirs:
        assert ours[key].kind == theirs[key].kind, key
        assert ours[key].default == theirs[key].default, key


def torch_or_none():
    """The torch module, or None where it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def run_case(case, module, arrays, dtype: str, cotangent, device="cpu"):
    """An ``op_cases`` case through ``module`` (lucid, or torch on its CPU) in ``dtype`` from
    ``arrays``, backward from ``cotangent(output shape)``: ``(output tensor, output,
    gradients)``, the last two float64 NumPy arrays (a gradient None where its input got
    none). Each gradient has its input's dtype and device."""
    if module is lucid:
        def make(values, grad=False):
            return lucid.tensor(values, dtype=getattr(lucid, dtype), device=device, requires_grad=grad)
    else:
        def make(values, grad=False):
            return module.tensor(values, dtype=getattr(module, dtype), requires_grad=grad)
    inputs = [make(a, grad=True) for a in arrays]
    out = case.fn(module, *inputs)
    out.backward(make(cotangent(tuple(out.shape))))
    for t in inputs:
        assert t.grad is None or (t.grad.dtype == t.dtype and t.grad.device == t.device), (case.name, t.grad)

    def values(t):
        return None if t is None else np.array(t.detach().cpu().numpy(), dtype=np.float64)

    return out, values(out), [values(t.grad) for t in inputs]


def case_truth(case, arrays, cotangent):
    """The float64 truth of ``case`` on ``arrays`` (the float32 or float16 values a run is
    given), backward from ``cotangent`` (as in :func:`run_case`): ``(output, gradients)`` by torch in float64 where it is
    installed, else by lucid's "cpu" (held to torch and to finite differences in
    test_gradcheck.py)."""
    torch = torch_or_none()
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    return run_case(case, torch or lucid, arrays, "float64", cotangent)[1:]


def judge_case(case, mine, reference, truth, dtype: str, what: str):
    """``mine`` (lucid's ``(output, gradients)`` of ``case`` in ``dtype``) against ``truth``:
    equal to it where the case is exact by construction (``op_cases.EXACT``), else judged
    (``tolerances.judge``) with ``reference``'s error on the same inputs as the ceiling."""
    from op_cases import EXACT
    from tolerances import judge

    (out, grads), (ref_out, ref_grads), (true_out, true_grads) = mine, reference, truth
    assert [g is None for g in grads] == [g is None for g in true_grads], f"{what}: inputs without a gradient"
    pairs = [("output", out, ref_out, true_out)]
    pairs += [(f"gradient {i}", g, r, t) for i, (g, r, t) in enumerate(zip(grads, ref_grads, true_grads)) if t is not None]
    for name, actual, ref, true in pairs:
        assert actual.shape == true.shape, f"{what}, {name}: shape {actual.shape}, truth's {true.shape}"
        if case.name in EXACT:
            np.testing.assert_array_equal(actual, true, err_msg=f"{what}, {name}: exact by construction")
        else:
            judge(actual, ref, true, dtype, what=f"{what}, {name}")
