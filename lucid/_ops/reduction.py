"""Reductions: sum, mean, max, min, any, all, and the log-softmax family."""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Sequence
from typing import NamedTuple, overload

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor
from . import elementwise as ew
from . import shape as shape_ops
from .dims import axes as _axes

class MaxMin(NamedTuple):
    """What ``max(dim)`` and ``min(dim)`` return, as torch's: the values and their indices."""

    values: Tensor
    indices: Tensor


_LN2 = math.log(2)


def _expand_back(backend, grad, shape, axes, keepdim):
    """A reduced gradient re-expanded to the input's ``shape``."""
    if not keepdim:
        kept = [1 if i in axes else n for i, n in enumerate(shape)]
        grad = backend.reshape(grad, kept)
    return backend.broadcast_to(grad, shape)


def _reduce(name, a, axes, keepdim):
    """The backend's reduction ``name`` over ``axes`` at its working precision, rounded once:
    float16 accumulates in float32 at least, as torch's does, and on NumPy float32 in float64."""
    return a._backend.precisely(lambda b, x: getattr(b, name)(x, axis=axes, keepdims=keepdim), a._data)


def sum(a: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False,
        dtype: _dtype.dtype | None = None) -> Tensor:
    """The sum over ``dim`` (an int, a tuple of ints, or None for all).

    Parameters
    ----------
    a : Tensor
    dim : int or tuple of int, optional
        The dimensions to reduce, each once; all of them by default.
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.
    dtype : lucid.dtype, optional
        Convert ``a`` first. Integers and booleans otherwise sum as int64, as in torch; float16
        accumulates in float32 and returns float16.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.sum(), x.sum(dim=0), x.sum(1, keepdim=True).shape
    (tensor(10.), tensor([4., 6.]), (2, 1))
    >>> (x > 1.5).sum()
    tensor(3)
    """
    axes = _axes(a, dim)
    backend = a._backend
    if dtype is not None:
        a = a.to(dtype)
    elif not a.dtype.is_floating_point:
        a = a.to(_dtype.int64)  # torch sums bools and integers as int64
    out = a._like(_reduce("sum", a, axes, keepdim))
    shape = a.shape
    return record(out, "SumBackward0" if dim is None else "SumBackward1", (a,), lambda g: (_expand_back(backend, g, shape, axes, keepdim),))


def mean(a: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """The mean over ``dim`` (an int, a tuple of ints, or None for all); floating tensors only.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.mean(), x.mean(dim=(0, 1), keepdim=True).shape
    (tensor(2.5000), (1, 1))
    """
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {a.dtype}"
        )
    axes = _axes(a, dim)
    backend, shape = a._backend, a.shape
    count = 1
    for axis in axes:
        count *= shape[axis]
    out = a._like(_reduce("mean", a, axes, keepdim))
    return record(out, "MeanBackward0" if dim is None else "MeanBackward1", (a,),
                  lambda g: (_expand_back(backend, backend.divide(g, count), shape, axes, keepdim),))


def _extreme(a, dim, keepdim, largest):
    backend, x, shape = a._backend, a._data, a.shape
    name = "max" if largest else "min"
    if dim is None and a.numel() == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    if dim is not None and not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name}(): dim must be an int (the values and indices along one dimension), got {dim!r}")
    if dim is not None and a.ndim == 0:
        _axes(a, dim)  # range check: 0 and -1 name a 0-d tensor's only "dimension"
        values, indices = _extreme(shape_ops.reshape(a, 1), 0, False, largest)
        return MaxMin(shape_ops.reshape(values, ()), shape_ops.reshape(indices, ()))
    reduce = backend.max if largest else backend.min
    if dim is None:
        out_array = reduce(x)
        out = a._like(out_array)

        def backward(g):
            # ties share the gradient evenly, as torch's full reduction does
            hit = backend.astype(backend.compare("equal", x, out_array), a.dtype)
            return (backend.multiply(g, backend.divide(hit, backend.sum(hit))),)

        return record(out, "MaxBackward1" if largest else "MinBackward1", (a,), backward, saved=(a, out))
    (axis,) = _axes(a, dim)
    if shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    if a.numel() == 0:  # another dim is empty: so are the results (MLX's argmax refuses these)
        kept = tuple(1 if i == axis else n for i, n in enumerate(shape)) if keepdim else shape[:axis] + shape[axis + 1:]
        values = a._like(backend.zeros(kept, a.dtype))
        return MaxMin(record(values, f"{name.capitalize()}Backward0", (a,), lambda g: (backend.zeros(shape, a.dtype),)),
                      a._like(backend.zeros(kept, _dtype.int64)))
    values = a._like(reduce(x, axis=axis, keepdims=keepdim))
    pick = backend.argmax if largest else backend.argmin
    index = pick(x, axis, keepdims=True)
    indices = a._like(backend.astype(index if keepdim else backend.squeeze(index, axis), _dtype.int64))

    def backward(g):
        # the gradient goes to the one element the index names
        positions = backend.reshape(
            backend.arange(0, shape[axis], 1, _dtype.int64), [-1 if i == axis else 1 for i in range(len(shape))]
        )
        chosen = backend.astype(backend.compare("equal", positions, index), a.dtype)
        return (backend.multiply(chosen, _expand_back(backend, g, shape, (axis,), keepdim)),)

    record(values, "MaxBackward0" if largest else "MinBackward0", (a,), backward)
    return MaxMin(values, indices)


@overload
def max(a: Tensor, dim: None = None, keepdim: bool = False) -> Tensor: ...
@overload
def max(a: Tensor, dim: Tensor, keepdim: bool = False) -> Tensor: ...
@overload
def max(a: Tensor, dim: int, keepdim: bool = False) -> MaxMin: ...
def max(a: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | MaxMin:
    """The largest element, or with ``dim`` the ``(values, indices)`` along one dimension;
    with a tensor in place of ``dim``, the elementwise :func:`lucid.maximum`.

    Parameters
    ----------
    a : Tensor
    dim : int, optional
        Without it, the maximum of all elements, a 0-d tensor whose gradient is shared
        evenly among ties (as torch's). With it, a named tuple ``(values, indices)``; the
        gradient goes to the element the index names (the first of ties).
    keepdim : bool, default False

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 5.0], [7.0, 0.0]])
    >>> x.max()
    tensor(7.)
    >>> values, indices = x.max(dim=1)
    >>> values, indices
    (tensor([5., 7.]), tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return ew.maximum(a, dim)
    return _extreme(a, dim, keepdim, largest=True)


@overload
def min(a: Tensor, dim: None = None, keepdim: bool = False) -> Tensor: ...
@overload
def min(a: Tensor, dim: Tensor, keepdim: bool = False) -> Tensor: ...
@overload
def min(a: Tensor, dim: int, keepdim: bool = False) -> MaxMin: ...
def min(a: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | MaxMin:
    """The smallest element, or with ``dim`` the ``(values, indices)`` along one dimension (see :func:`max`).

    Examples
    --------
    >>> import lucid
    >>> lucid.min(lucid.tensor([[1.0, 5.0], [7.0, 0.0]]), 0).indices
    tensor([0, 1])
    """
    if isinstance(dim, Tensor):
        return ew.minimum(a, dim)
    return _extreme(a, dim, keepdim, largest=False)


def any(a: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """Whether any element (along ``dim``) is nonzero, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> (lucid.tensor([0.0, 2.0]) > 1).any()
    tensor(True)
    """
    return a._like(a._backend.any(a._data, axis=_axes(a, dim), keepdims=keepdim))


def all(a: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """Whether every element (along ``dim``) is nonzero, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 0], [1, 1]]).all(dim=1)
    tensor([False,  True])
    """
    return a._like(a._backend.all(a._data, axis=_axes(a, dim), keepdims=keepdim))


def log_softmax(a: Tensor, dim: int) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, with its own backward.

    Computed as ``(x - m) - log1p(r)``: ``m`` the largest element, ``r`` the sum of
    ``exp(x - m)`` over the others, so that no digit cancels where the largest element
    dominates (torch's float32 gives 0 for the largest of ``[100, 0]``, whose log-softmax
    is ``-exp(-100) = -3.78e-44``).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[0.0, 0.0], [100.0, 0.0]]).log_softmax(dim=1)
    tensor([[-6.9315e-01, -6.9315e-01],
            [-3.7835e-44, -1.0000e+02]])
    """
    if not a.dtype.is_floating_point:
        a = a.to(_dtype.default_float)
    if a.ndim == 0:
        _axes(a, dim)
        return shape_ops.reshape(log_softmax(shape_ops.reshape(a, 1), 0), ())
    (axis,) = _axes(a, dim)
    backend, x = a._backend, a._data
    if a.numel() == 0:  # nothing to normalise (and the backends can't take the max of nothing)
        return record(a._like(backend.copy(x)), "LogSoftmaxBackward0", (a,), lambda g: (g,))
    out = a._like(backend.precisely(lambda b, x: b.log_softmax(x, axis), x))

    def gradient(b, g, x):
        # g - p sum(g), with p = exp(log_softmax) recomputed at the working precision; where
        # p > 1/2, as (g - sum(g)) - (p - 1) sum(g), so that 1 - p keeps its digits (the
        # gradient of a confident cross-entropy)
        y, p = b.log_softmax_and_softmax(x, axis)
        total = b.sum(g, axis=axis, keepdims=True)
        return b.where(y > -_LN2, (g - total) - b.expm1(y) * total, g - p * total)

    def backward(g):
        return (backend.precisely(gradient, g, x),)

    return record(out, "LogSoftmaxBackward0", (a,), backward, saved=(a,))


def softmax(a: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``, with its own backward.

    Parameters
    ----------
    a : Tensor
        Floating point (integers need ``dtype``, as in torch).
    dim : int
    dtype : lucid.dtype, optional
        Convert ``a`` to this dtype first.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1.0, 1.0], [0.0, 2.0]], dtype=lucid.float64).softmax(dim=1)
    tensor([[0.5000, 0.5000],
            [0.1192, 0.8808]], dtype=lucid.float64)
    """
    if dtype is not None:
        a = a.to(dtype)
    if not a.dtype.is_floating_point:
        raise NotImplementedError(f'"softmax" not implemented for {a.dtype}: pass dtype= or convert it first')
    if a.ndim == 0:
        _axes(a, dim)
        return shape_ops.reshape(softmax(shape_ops.reshape(a, 1), 0), ())
    (axis,) = _axes(a, dim)
    backend, x = a._backend, a._data
    if a.numel() == 0:
        return record(a._like(backend.copy(x)), "SoftmaxBackward0", (a,), lambda g: (g,))
    out = a._like(backend.precisely(lambda b, x: b.softmax(x, axis), x))

    def gradient(b, g, x):
        y = b.softmax(x, axis)  # recomputed at the working precision
        return y * (g - b.sum(g * y, axis=axis, keepdims=True))

    def backward(g):
        return (backend.precisely(gradient, g, x),)

    return record(out, "SoftmaxBackward0", (a,), backward, saved=(a,))


def logsumexp(a: Tensor, dim: int | Sequence[int] | None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(a)))`` over ``dim``, computed stably; its gradient is the softmax.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[0.0, 0.0], [1.0, 1.0]]).logsumexp(1)
    tensor([0.6931, 1.6931])
    """
    if not a.dtype.is_floating_point:
        a = a.to(_dtype.default_float)
    axes = _axes(a, dim)
    backend, x, shape = a._backend, a._data, a.shape
    if not axes:
        return record(a._like(backend.copy(x)), "LogsumexpBackward0", (a,), lambda g: (g,))
    y = backend.precisely(lambda b, x: b.logsumexp(x, axis=axes, keepdims=True), x)
    out = a._like(y if keepdim else backend.reshape(y, [n for i, n in enumerate(shape) if i not in axes]))

    def gradient(b, g, x):  # g times the softmax over the axes, at the working precision
        if len(axes) == 1:
            return g * b.softmax(x, axes[0])
        return g * b.exp(x - b.logsumexp(x, axis=axes, keepdims=True))

    def backward(g):
        return (backend.precisely(gradient, _expand_back(backend, g, shape, axes, keepdim), x),)

    return record(out, "LogsumexpBackward0", (a,), backward, saved=(a,))


def cumsum(a: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """Running sums along ``dim``: ``out[i] = a[0] + ... + a[i]``; integers and bools sum as int64.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 2, 3], [4, 5, 6]]).cumsum(dim=1)
    tensor([[ 1,  3,  6],
            [ 4,  9, 15]])
    """
    if dtype is not None:
        a = a.to(dtype)
    elif not a.dtype.is_floating_point:
        a = a.to(_dtype.int64)
    (axis,) = _axes(a, dim)
    backend = a._backend
    if a.ndim == 0:
        return record(a._like(backend.copy(a._data)), "CumsumBackward0", (a,), lambda g: (g,))
    out = a._like(a._backend.precisely(lambda b, x: b.cumsum(x, axis), a._data))
    return record(out, "CumsumBackward0", (a,),
                  lambda g: (backend.precisely(lambda b, g: b.cumsum(g, axis, reverse=True), g),))


def _arg_extreme(a, dim, keepdim, largest):
    name = "argmax" if largest else "argmin"
    backend = a._backend
    pick = backend.argmax if largest else backend.argmin
    if dim is None:
        if a.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        index = pick(backend.reshape(a._data, (-1,)), 0)
        if keepdim:
            index = backend.reshape(index, (1,) * a.ndim)
        return a._like(backend.astype(index, _dtype.int64))
    (axis,) = _axes(a, dim)
    if a.ndim == 0:
        return a._like(backend.zeros((), _dtype.int64))
    if a.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    if a.numel() == 0:
        kept = tuple(1 if i == axis else n for i, n in enumerate(a.shape)) if keepdim else \
            a.shape[:axis] + a.shape[axis + 1:]
        return a._like(backend.zeros(kept, _dtype.int64))
    return a._like(backend.astype(pick(a._data, axis, keepdims=keepdim), _dtype.int64))


def argmax(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the largest element (of the flattened tensor, or along ``dim``), as int64.

    Ties give the first index, as in torch.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 5.0], [7.0, 0.0]])
    >>> x.argmax(), x.argmax(dim=1)
    (tensor(2), tensor([1, 0]))
    """
    return _arg_extreme(a, dim, keepdim, largest=True)


def argmin(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the smallest element (see :func:`argmax`).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1.0, 5.0], [7.0, 0.0]]).argmin(dim=0, keepdim=True)
    tensor([[0, 1]])
    """
    return _arg_extreme(a, dim, keepdim, largest=False)


def _correction(unbiased, correction) -> float:
    if unbiased is not None and correction is not None:
        raise RuntimeError("var/std: pass either unbiased or correction, not both")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(a: Tensor, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """The variance over ``dim``: ``sum((a - mean)^2) / (N - correction)``.

    Parameters
    ----------
    a : Tensor
        Floating point.
    dim : int or tuple of int, optional
        All dimensions by default.
    unbiased : bool, optional
        torch's older spelling: True is ``correction=1`` (the default), False ``correction=0``.
    keepdim : bool, default False
    correction : int, optional
        Bessel's correction, 1 by default.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    >>> x.var(dim=1), x.var(1, unbiased=False)
    (tensor([1., 0.]), tensor([0.6667, 0.0000]))
    """
    if isinstance(dim, bool):  # torch's var(input, unbiased) overload
        dim, unbiased = None, dim
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got {a.dtype}")
    return _spread(a, dim, unbiased, keepdim, correction, root=False)


def _spread(a, dim, unbiased, keepdim, correction, root: bool):
    """:func:`var` (or its square root, :func:`std`) in two passes, ``sum((a - mean)**2)``, at
    the backend's working precision and rounded once; the gradient ``2 (a - mean) / (N - c)``
    (divided by ``2 std`` for the root), likewise."""
    axes = _axes(a, dim)
    over = axes if axes else None
    count = 1
    for axis in (axes if axes else range(a.ndim)):
        count *= a.shape[axis]
    divisor = builtins.max(count - _correction(unbiased, correction), 0)
    backend, x, shape = a._backend, a._data, a.shape

    def centred(b, x):
        return x - b.mean(x, axis=over, keepdims=True)

    def value(b, x):
        d = centred(b, x)
        v = b.sum(d * d, axis=over, keepdims=True) / divisor
        return b.sqrt(v) if root else v

    kept = backend.precisely(value, x)
    out = a._like(kept if keepdim else backend.reshape(kept, [n for i, n in enumerate(shape) if axes and i not in axes]))

    def gradient(b, g, x):
        # 2 (x - mean) / (N - c) times g; for the root, halved and divided by the std
        g = b.reshape(g, b.shape(kept))
        d = centred(b, x)
        return d * g / (value(b, x) * divisor) if root else d * (g * 2) / divisor

    return record(out, "StdBackward0" if root else "VarBackward0", (a,),
                  lambda g: (backend.precisely(gradient, g, x),), saved=(a,))


def std(a: Tensor, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """The standard deviation over ``dim``: the square root of :func:`var`.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1.0, 3.0]).std()
    tensor(1.4142)
    """
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got {a.dtype}")
    return _spread(a, dim, unbiased, keepdim, correction, root=True)
