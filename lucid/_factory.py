"""Functions that make tensors: ``tensor``, ``zeros``, ``randn`` and the rest."""

from __future__ import annotations

import numbers

from . import _backend, _dtype
from ._backend import random as _random
from ._tensor import Tensor, _check_dtype


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"sizes must be non-negative integers, got {size!r}")
    return tuple(int(n) for n in size)


def _dtype_or(dtype, default) -> _dtype.dtype:
    return default if dtype is None else _check_dtype(dtype)


def _floating(dtype, name) -> _dtype.dtype:
    dtype = _dtype_or(dtype, _dtype.default_float)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name}() draws floating point numbers; got dtype {dtype}")
    return dtype


def _finish(array, backend, requires_grad):
    out = Tensor._make(array, backend)
    out.requires_grad = requires_grad
    return out


def tensor(data, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (see :class:`lucid.Tensor`).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2, 3])
    tensor([1, 2, 3])
    >>> lucid.tensor(2.5).dtype
    lucid.float32
    """
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros(*size, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A tensor of zeros of shape ``size`` (float32 unless ``dtype`` says otherwise).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).shape
    (2, 3)
    """
    backend = _backend.get(device)
    return _finish(backend.zeros(_shape(size), _dtype_or(dtype, _dtype.default_float)), backend, requires_grad)


def ones(*size, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A tensor of ones of shape ``size``.

    Examples
    --------
    >>> import lucid
    >>> lucid.ones(2)
    tensor([1., 1.])
    """
    backend = _backend.get(device)
    return _finish(backend.ones(_shape(size), _dtype_or(dtype, _dtype.default_float)), backend, requires_grad)


def full(size, fill_value, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it, as torch does).

    Examples
    --------
    >>> import lucid
    >>> lucid.full((2,), 7)
    tensor([7, 7])
    """
    backend = _backend.get(device)
    dtype = _dtype_or(dtype, _dtype.promote_scalar(_dtype.bool_, fill_value))
    return _finish(backend.full(_shape((size,)), fill_value, dtype), backend, requires_grad)


def zeros_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Zeros shaped like ``t``, on its device and with its dtype unless told otherwise.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros_like(lucid.tensor([1, 2]))
    tensor([0, 0])
    """
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Ones shaped like ``t``.

    Examples
    --------
    >>> import lucid
    >>> lucid.ones_like(lucid.zeros(2, dtype=lucid.float64))
    tensor([1., 1.], dtype=lucid.float64)
    """
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randn(*size, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Samples of N(0, 1) of shape ``size``; the same numbers on every device for one seed.

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(0)
    >>> a = lucid.randn(3)
    >>> _ = lucid.manual_seed(0)
    >>> bool((lucid.randn(3) == a).all())
    True
    """
    backend = _backend.get(device)
    array = _random.normal(_shape(size), _floating(dtype, "randn"), backend)
    return _finish(array, backend, requires_grad)


def rand(*size, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Samples of U[0, 1) of shape ``size``.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.rand(100)
    >>> bool(((x >= 0) & (x < 1)).all())
    True
    """
    backend = _backend.get(device)
    array = _random.uniform(_shape(size), _floating(dtype, "rand"), backend)
    return _finish(array, backend, requires_grad)


def arange(start, end=None, step=1, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless any bound is a float.

    Examples
    --------
    >>> import lucid
    >>> lucid.arange(4)
    tensor([0, 1, 2, 3])
    >>> lucid.arange(0, 1, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75])
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    floating = any(isinstance(v, float) for v in (start, end, step))
    dtype = _dtype_or(dtype, _dtype.default_float if floating else _dtype.default_int)
    backend = _backend.get(device)
    return _finish(backend.arange(start, end, step, dtype), backend, requires_grad)


def manual_seed(seed: int):
    """Seed lucid's random numbers (shared by every device).

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(42)
    """
    _random.manual_seed(seed)
    return seed
