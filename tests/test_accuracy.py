"""float32 and float16 results judged against the truth, in ulps.

For every case of tests/accuracy_cases.py (the elementwise ops, activations, the softmax
family over long rows, reductions, normalisations and losses, at inputs that include their
hard regions), on both devices, in both half-precision formats, the value and the gradient
are compared with a float64 truth computed from the same inputs:

- lucid's error never exceeds its own ceiling (tests/tolerances.py: half an ulp on "cpu",
  which evaluates in float64; per op on "gpu"), with or without torch;
- where torch is installed, torch's own error on the same inputs is the other ceiling: on
  "cpu" lucid is at least as accurate as torch, on "gpu" within GPU_ABOVE_TORCH ulps of it.

"gpu" is measured as a device that flushes subnormal numbers (tests/ulps.py), and so is
torch where it is the gpu's ceiling.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import accuracy_cases
import ulps
from accuracy_cases import CASES, DTYPES
from tolerances import CORRECTLY_ROUNDED, GPU_ABOVE_TORCH, ulps_ceiling

_IDS = [case.name.replace(" ", "_").replace("(", "").replace(")", "") for case in CASES]


@functools.lru_cache(maxsize=None)
def _truth(name: str, dtype: str):
    return accuracy_cases.truths(accuracy_cases.BY_NAME[name], dtype)


def _lucid(name: str, dtype: str, device: str):
    truth = _truth(name, dtype)
    return accuracy_cases.run(
        lucid, F, lambda a, grad: lucid.tensor(a, device=device, requires_grad=grad),
        lambda t: t.detach().to("cpu").numpy().astype(np.float64), accuracy_cases.BY_NAME[name], truth.inputs, truth.w)


@functools.lru_cache(maxsize=None)
def _torch(name: str, dtype: str):
    import torch

    truth = _truth(name, dtype)
    return accuracy_cases.run(
        torch, torch.nn.functional, lambda a, grad: torch.tensor(a, requires_grad=grad),
        lambda t: t.detach().numpy().astype(np.float64), accuracy_cases.BY_NAME[name], truth.inputs, truth.w)


def _errors(result, name, dtype, flush):
    """``((value's worst ulps, index), (gradient's, index))`` of a run's ``result``."""
    truth = _truth(name, dtype)
    out, grad = result
    value = ulps.worst(out, truth.out, dtype, flush, truth.scale)
    gradient = (0.0, -1) if grad is None else ulps.worst(grad, truth.grad, dtype, flush, truth.grad_scale)
    return value, gradient


def _where(name, dtype, index, gradient):
    """The input at the worst element, for the message."""
    truth = _truth(name, dtype)
    first = truth.inputs[0].reshape(-1)
    case = accuracy_cases.BY_NAME[name]
    if case.elementwise and 0 <= index < first.size:
        return f"at x = {float(first[index])!r}"
    shape = truth.grad.shape if gradient else truth.out.shape
    return f"at index {np.unravel_index(index, shape) if index >= 0 else '-'}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [case.name for case in CASES], ids=_IDS)
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_within_lucids_own_ceiling(device, name, dtype):
    errors = _errors(_lucid(name, dtype, device), name, dtype, flush=device == "gpu")
    for (err, index), gradient in zip(errors, (False, True)):
        bound = ulps_ceiling(device, dtype, name, gradient)
        what = "gradient" if gradient else "value"
        assert err <= bound, f"{name} {what} on {device}, {dtype}: {err:.4g} ulps > {bound} {_where(name, dtype, index, gradient)}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [case.name for case in CASES], ids=_IDS)
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_no_worse_than_torch_on_the_same_inputs(device, name, dtype):
    pytest.importorskip("torch")
    flush = device == "gpu"
    mine = _errors(_lucid(name, dtype, device), name, dtype, flush)
    theirs = _errors(_torch(name, dtype), name, dtype, flush)
    for (err, index), (ceiling, _), gradient in zip(mine, theirs, (False, True)):
        bound = max(ceiling, CORRECTLY_ROUNDED) if device == "cpu" else ceiling + GPU_ABOVE_TORCH
        what = "gradient" if gradient else "value"
        assert err <= bound, (f"{name} {what} on {device}, {dtype}: {err:.4g} ulps, torch's {ceiling:.4g} "
                              f"{_where(name, dtype, index, gradient)}")


def test_the_measure_counts_ulps_of_the_true_value():
    """The yardstick itself: a correctly rounded float32 is within half an ulp, the next
    float one ulp further; a subnormal truth flushed to zero is one ulp off on a flushing
    device and millions on an IEEE one; an overflowing truth is met by inf alone."""
    third = np.float32(1 / 3)
    assert ulps.errors(third, 1 / 3, "float32") <= 0.5
    assert 1.0 < ulps.errors(np.nextafter(third, np.float32(1)), 1 / 3, "float32") <= 1.5
    assert ulps.errors(0.0, 2.0**-130, "float32", flush=True) <= 1.0
    assert ulps.errors(0.0, 2.0**-130, "float32") == 2.0**19
    assert ulps.errors(np.inf, 1e39, "float32") == 0.0
    assert ulps.errors(np.float32(3.4e38), 1e39, "float32") > 1e6
    assert ulps.errors(np.nan, 1.0, "float32") == np.inf
    # float16: 1/3 rounds to 0.333251953125, 0.333... - that = 8.1e-5, ulp 2**-12 = 2.4e-4
    assert ulps.errors(np.float16(1 / 3), 1 / 3, "float16") == pytest.approx(8.138020833e-5 / 2.0**-12)
    # the scale of cancelling terms: 1e-3 off a true 1e-6 that came from terms of size 1
    assert ulps.errors(1e-6 + 1e-9, 1e-6, "float32", scale=1.0) == pytest.approx(1e-9 / 2.0**-23)


def test_every_case_has_a_gpu_ceiling():
    from tolerances import GPU_FLOAT32

    assert set(GPU_FLOAT32) == {case.name for case in CASES}


def _documented_table():
    """The rows of the docs' accuracy table: ``{(op, dtype): (cpu cell, gpu cell)}``."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "accuracy_table.inc").read_text()
    rows, row = [], None
    for line in text.splitlines():
        if line.startswith("   * - "):
            row = [line[len("   * - "):]]
            rows.append(row)
        elif line.startswith("     - ") and row is not None:
            row.append(line[len("     - "):])
    header, *body = rows
    assert header == ["op", "kind", "dtype", "lucid cpu", "lucid gpu", "torch"]
    return {(r[0], r[2]): (r[3], r[4]) for r in body}


def test_the_docs_table_covers_every_case_within_the_ceilings():
    """docs/guide/accuracy_table.inc (tools/accuracy_table.py --write) has a row per case
    and dtype, and claims nothing for lucid beyond what these tests hold it to."""
    table = _documented_table()
    assert set(table) == {(case.name, dtype) for case in CASES for dtype in DTYPES}
    for (name, dtype), cells in table.items():
        for device, cell in zip(("cpu", "gpu"), cells):
            figures = [float(x) for x in cell.split(" / ")]
            for figure, gradient in zip(figures, (False, True)):
                assert figure <= ulps_ceiling(device, dtype, name, gradient), (name, dtype, device, cell)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_the_float64_error_functions_behind_cpu_match_libm(name):
    """lucid "cpu" takes erf and erfc in float64 from numba's vectorised libm, or where numba
    is off from erf64.py (Cody's rational approximations): both against libm's, within 8
    float64 ulps (erf64: measured 6, its tail through the exact split of y**2 included; 2**-50
    relative, which no float32 rounding sees), NaN and the infinities as libm's."""
    import math

    from lucid._backend import erf64

    x = np.concatenate([np.linspace(-27, 27, 100_001), np.logspace(-300, 1.4, 2000), -np.logspace(-300, 1.4, 2000),
                        [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, np.inf, -np.inf]])
    truth = np.array([getattr(math, name)(v) for v in x])
    implementations = [getattr(erf64, name)]
    try:
        from lucid._backend import numba_special
    except ImportError:
        pass
    else:
        implementations.append(getattr(numba_special, name))
    for implementation in implementations:
        got = implementation(x)
        assert np.array_equal(np.isnan(got), np.isnan(truth))
        err = ulps.errors(got, truth, "float64")
        assert err.max() <= 8, (implementation.__module__, x[np.argmax(err)], err.max())
    assert np.isnan(erf64.erf(np.array([np.nan]))).all()
