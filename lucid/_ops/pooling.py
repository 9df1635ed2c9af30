"""Max and average pooling over windows, as recorded ops (arguments checked by the callers).

Both pad the input (with -inf for the max, zeros for the average) so that every window of
torch's output fits, ``ceil_mode`` included, and read the windows as a strided view
(:meth:`~lucid._backend.base.Backend.windows`); the backward sums each window's gradient
back onto the elements it read (:meth:`~lucid._backend.base.Backend.unwindow`).
"""

from __future__ import annotations

import itertools
import math

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor


def pooled_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    """torch's ``pooling_output_shape``: windows along one dimension (the last one must
    start inside the input or its left padding).

    >>> from lucid._ops.pooling import pooled_size
    >>> pooled_size(5, 2, 2, 0, 1, False), pooled_size(5, 2, 2, 0, 1, True)
    (2, 3)
    """
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _padded(backend, x, kernel, stride, padding, dilation, out, value):
    """``x`` padded by ``padding`` before and as far as the last window reaches after."""
    widths = [(0, 0), (0, 0)]
    for n, k, s, p, d, o in zip(backend.shape(x)[2:], kernel, stride, padding, dilation, out):
        widths.append((p, (o - 1) * s + d * (k - 1) + 1 - n - p))
    return backend.pad(x, widths, value), widths


def _unpad(backend, a, widths):
    return backend.pad(a, [(-lo, -hi) for lo, hi in widths], 0.0)


def max_pool(input: Tensor, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, out: tuple,
             indices: bool = True) -> tuple[Tensor, Tensor | None]:
    """The largest element of each window of ``input`` (N, C, *size) and (with ``indices``,
    else None) its flat index in the input's spatial dimensions (int64), as torch's
    ``max_pool`` with ``return_indices``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.pooling import max_pool
    >>> values, where = max_pool(lucid.tensor([[[3.0, 1.0, 4.0, 1.0]]]), (2,), (2,), (0,), (1,), (2,))
    >>> values.tolist(), where.tolist()
    ([[[3.0, 4.0]]], [[[0, 2]]])
    """
    backend = input._backend
    size = input.shape[2:]
    x, widths = _padded(backend, input._data, kernel, stride, padding, dilation, out, -math.inf)
    values, position = backend.max_windows(x, kernel, stride, dilation)
    padded_size = backend.shape(x)[2:]

    def backward(g):
        return (_unpad(backend, backend.unmax_windows(g, position, kernel, padded_size, stride, dilation), widths),)

    result = record(input._like(values), "MaxPoolWithIndicesBackward", (input,), backward)
    if not indices:
        return result, None
    return result, input._like(_flat_index(backend, position, kernel, stride, padding, dilation, size))


def _flat_index(backend, position, kernel, stride, padding, dilation, size):
    """The flat index in the unpadded input of each window's element at ``position``."""
    d = len(kernel)
    flat = None
    rest = position
    for i in reversed(range(d)):  # the kernel's row-major position, split into coordinates
        along = backend.remainder(rest, kernel[i])
        rest = backend.floor_divide(rest, kernel[i])
        grid = [1] * (2 + d)
        grid[2 + i] = backend.shape(position)[2 + i]
        start = backend.reshape(backend.arange(0, grid[2 + i], 1, _dtype.int64), grid)
        coordinate = backend.add(backend.multiply(start, stride[i]),
                                 backend.subtract(backend.multiply(along, dilation[i]), padding[i]))
        term = backend.multiply(coordinate, math.prod(size[i + 1:]))
        flat = term if flat is None else backend.add(flat, term)
    return flat


def _divisors(size, kernel, stride, padding, out, count_include_pad):
    """torch's divisor of each window's sum: its elements within the padded input (or within
    the input alone), a nested list of ints of shape ``out``."""
    per_dim = []
    for n, k, s, p, o in zip(size, kernel, stride, padding, out):
        counts = []
        for i in range(o):
            start = i * s - p
            end = min(start + k, n + p)
            counts.append(end - start if count_include_pad else min(end, n) - max(start, 0))
        per_dim.append(counts)
    flat = [math.prod(c) for c in itertools.product(*per_dim)]
    return flat


def avg_pool(input: Tensor, kernel: tuple, stride: tuple, padding: tuple, out: tuple, count_include_pad: bool,
             divisor_override: int | None) -> Tensor:
    """The mean of each window of ``input`` (N, C, *size) as torch's ``avg_pool``: the sum of
    the window divided by ``divisor_override``, or by its size (counting the zero padding
    with ``count_include_pad``, never what ``ceil_mode`` adds past it).

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.pooling import avg_pool
    >>> avg_pool(lucid.tensor([[[1.0, 2.0, 3.0]]]), (2,), (2,), (1,), (2,), False, None).tolist()
    [[[1.0, 2.5]]]
    """
    backend, dtype = input._backend, input.dtype
    ones = (1,) * len(kernel)
    x, widths = _padded(backend, input._data, kernel, stride, padding, ones, out, 0.0)
    axes = tuple(range(2, 2 + len(kernel)))
    if divisor_override is not None:
        divisor = backend.full((), divisor_override, dtype)
    else:
        counts = _divisors(input.shape[2:], kernel, stride, padding, out, count_include_pad)
        divisor = backend.reshape(backend.asarray(counts, dtype), (1, 1) + tuple(out))
    summed = backend.sum(backend.windows(x, kernel, stride, ones), axis=axes)
    padded_size = backend.shape(x)[2:]

    def backward(g):
        shape = backend.shape(g)
        share = backend.reshape(backend.divide(g, divisor), shape[:2] + ones + shape[2:])
        cols = backend.broadcast_to(share, shape[:2] + tuple(kernel) + shape[2:])
        return (_unpad(backend, backend.unwindow(cols, padded_size, stride, ones), widths),)

    return record(input._like(backend.divide(summed, divisor)), "AvgPoolBackward", (input,), backward)
