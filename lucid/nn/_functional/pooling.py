"""Pooling: ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_avg_pool1d/2d``.

The arguments are checked as torch checks them (its messages), then the recorded ops of
:mod:`lucid._ops.pooling` run; the adaptive average is a product with 0/1 matrices that sum
torch's windows, divided by their sizes.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ... import _factory
from ..._autograd import renamed
from ..._ops.elementwise import matmul
from ..._ops.pooling import avg_pool, max_pool, pooled_size
from ..._tensor import Tensor
from .checks import require_tensor
from .conv import with_batch

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d"]


# where each window argument stands in torch's signatures, for its TypeError
POSITIONS = {"kernel_size": 2, "output_size": 2, "stride": 3, "padding": 4, "dilation": 5}


def check_ints(fn: str, none_allowed: bool = False, **arguments) -> None:
    """torch's TypeError for a window argument that is not an int or a sequence of ints (a NaN,
    a float, a string), naming the argument; a layer runs it where it is built."""
    for name, value in arguments.items():
        def is_int(item) -> bool:
            return isinstance(item, numbers.Integral) or (none_allowed and item is None)
        where = f"{fn}(): argument '{name}' (position {POSITIONS[name]}) must be tuple of ints"
        if isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if not is_int(item):
                    raise TypeError(f"{where}, but found element of type {type(item).__name__} at pos {i}")
        elif not is_int(value):
            raise TypeError(f"{where}, not {type(value).__name__}")


def _ints(value, d: int, name: str, fn: str) -> tuple:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * d
    values = tuple(value)
    if len(values) == 1:
        return (int(values[0]),) * d
    if len(values) != d:
        raise RuntimeError(f"{fn}: {name} must either be a single int, or a tuple of {('', 'one', 'two')[d]} ints")
    return tuple(int(v) for v in values)


def _check_input(input, d: int, fn: str) -> None:
    require_tensor(input, "input", fn, 1)
    if input.ndim not in (d + 1, d + 2) or any(n == 0 for n in input.shape[-d:]):
        if d == 1 and fn == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(input.shape)}")
        if d == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {fn})")
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")


def _pool_sizes(input, kernel, stride, padding, dilation, ceil_mode, d: int, fn: str) -> tuple:
    """The output's spatial size, after torch's checks of the window's arguments."""
    if d == 1 and fn == "max_pool1d":  # torch's own 1-D kernel, with its own messages
        for name, values, low in (("kernel_size", kernel, 1), ("stride", stride, 1), ("dilation", dilation, 1)):
            if values[0] < low:
                raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {values[0]}")
        if padding[0] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding[0]}")
        if padding[0] > kernel[0] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding="
                               f"{padding[0]} and kernel_size={kernel[0]}")
    # torch's order: each dimension's output-size checks (height, then width), then the window's;
    # a 1-D pool is torch's 2-D one on a unit height, whose messages show that height too
    unit = (lambda values, one: (one,) + tuple(values)) if d == 1 else (lambda values, one: tuple(values))
    kernel2, stride2, padding2, dilation2 = unit(kernel, 1), unit(stride, 1), unit(padding, 0), unit(dilation, 1)
    for k, s, p, v in zip(kernel2, stride2, padding2, dilation2):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        half = (v * (k - 1) + 1)
        if p > (half // 2 if half >= 0 else -(-half // 2)):  # C's division, toward zero
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} "
                               f"and dilation={v}")
    for what, prefix, values in (("kernel size", "k", kernel2), ("stride", "d", stride2),
                                 ("dilation", "dilation", dilation2)):
        if any(value <= 0 for value in values):
            raise RuntimeError(f"{what} should be greater than zero, but got {prefix}H: {values[0]} {prefix}W: {values[1]}")
    size = input.shape[2:]
    out = tuple(pooled_size(n, k, s, p, v, ceil_mode) for n, k, s, p, v in zip(size, kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        if fn == "max_pool1d":
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out[0]}")
        given = "x".join(map(str, (input.shape[1],) + ((1,) if d == 1 else ()) + size))
        calculated = "x".join(map(str, (input.shape[1],) + ((1,) if d == 1 else ()) + out))
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calculated}). Output size is too "
                           f"small")
    return out


def _window_args(input, kernel_size, stride, padding, d: int, fn: str) -> tuple:
    """The input checked, and the window's kernel, stride (the kernel's by default) and padding as tuples."""
    _check_input(input, d, fn)
    check_ints(fn, kernel_size=kernel_size, padding=padding, **({} if stride is None else {"stride": stride}))
    kernel = _ints(kernel_size, d, "kernel_size", fn)
    stride = kernel if stride is None or (isinstance(stride, Sequence) and not stride) else \
        _ints(stride, d, "stride", fn)
    return kernel, stride, _ints(padding, d, "padding", fn)


def _node_name(d: int, two_d: str) -> str:
    """torch's node name for a pooling's result: its 2-D op's, or, in 1-D (torch's 2-D op on a
    unit height), the squeeze that ends it."""
    return two_d if d == 2 else "SqueezeBackward1"


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, d: int, fn: str):
    check_ints(fn, dilation=dilation)
    kernel, stride, padding = _window_args(input, kernel_size, stride, padding, d, fn)
    dilation = _ints(dilation, d, "dilation", fn)
    x, unbatch = with_batch(input, d)
    out = _pool_sizes(x, kernel, stride, padding, dilation, ceil_mode, d, fn)
    values, indices = max_pool(x, kernel, stride, padding, dilation, out, bool(return_indices))
    values = renamed(unbatch(values), _node_name(d, "MaxPool2DWithIndicesBackward0"))
    return (values, unbatch(indices)) if return_indices else values


def max_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The largest element of each window of ``kernel_size`` along the last dimension.

    Parameters
    ----------
    input : Tensor
        ``(N, C, L)`` or ``(C, L)``.
    kernel_size : int
    stride : int, optional
        ``kernel_size`` by default.
    padding : int, default 0
        Implicit ``-inf`` on both sides, at most half the kernel.
    dilation : int, default 1
        The spacing of a window's elements.
    ceil_mode : bool, default False
        Round the number of windows up (a last window may hang over the end).
    return_indices : bool, default False
        Also return each maximum's index along the (unpadded) last dimension, as int64.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[[3.0, 1.0, 4.0, 1.0, 5.0]]])
    >>> F.max_pool1d(x, 2).tolist()
    [[[3.0, 4.0]]]
    >>> values, indices = F.max_pool1d(x, 2, ceil_mode=True, return_indices=True)
    >>> values.tolist(), indices.tolist()
    ([[[3.0, 4.0, 5.0]]], [[[0, 2, 4]]])
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool2d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The largest element of each ``kernel_size`` window of the last two dimensions.

    Parameters are those of :func:`max_pool1d`, each an int or a pair; the indices are flat
    over the input's (unpadded) last two dimensions, ``h * W + w``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.max_pool2d(x, 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    >>> F.max_pool2d(x, 3, stride=1, padding=1, return_indices=True)[1][0, 0, 0].tolist()
    [5, 6, 7, 7]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, d: int, fn: str):
    kernel, stride, padding = _window_args(input, kernel_size, stride, padding, d, fn)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x, unbatch = with_batch(input, d)
    out = _pool_sizes(x, kernel, stride, padding, (1,) * d, ceil_mode, d, fn)
    return renamed(unbatch(avg_pool(x, kernel, stride, padding, out, count_include_pad, divisor_override)),
                   _node_name(d, "AvgPool2DBackward0"))


def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each window of ``kernel_size`` along the last dimension.

    Parameters
    ----------
    input : Tensor
        ``(N, C, L)`` or ``(C, L)``.
    kernel_size : int
    stride : int, optional
        ``kernel_size`` by default.
    padding : int, default 0
        Implicit zeros on both sides, at most half the kernel.
    ceil_mode : bool, default False
        Round the number of windows up; what a last window hangs past the padding is not counted.
    count_include_pad : bool, default True
        Whether the zeros of ``padding`` count in a window's size.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    >>> F.avg_pool1d(x, 2).tolist()
    [[[1.5, 3.5]]]
    >>> F.avg_pool1d(x, 2, padding=1, count_include_pad=False).tolist()
    [[[1.0, 2.5, 4.5]]]
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each ``kernel_size`` window of the last two dimensions.

    Parameters are those of :func:`avg_pool1d`, each an int or a pair, and
    ``divisor_override`` (int, optional): divide every window's sum by it instead.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.avg_pool2d(x, 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    >>> F.avg_pool2d(x, 2, divisor_override=1).tolist()
    [[[[10.0, 18.0], [42.0, 50.0]]]]
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def _adaptive_windows(n: int, out: int) -> list:
    """torch's adaptive windows: ``[floor(i n / out), ceil((i + 1) n / out))``."""
    return [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]


def _summing_matrix(n: int, out: int, like) -> Tensor:
    """(out, n): row i is 1 on the elements of the i-th adaptive window."""
    rows = [[1.0 if lo <= j < hi else 0.0 for j in range(n)] for lo, hi in _adaptive_windows(n, out)]
    return _factory.tensor(rows, dtype=like.dtype, device=like.device).reshape(out, n)


def _adaptive_avg(input, output_size, d: int, fn: str) -> Tensor:
    require_tensor(input, "input", fn, 1)
    check_ints(fn, none_allowed=d == 2, output_size=output_size)
    if d == 1:
        if input.ndim not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {fn})")
        if isinstance(output_size, numbers.Integral):
            sizes = [int(output_size)]
        else:
            sizes = list(output_size)
            if len(sizes) != 1:
                raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int (got "
                                   f"{len(sizes)})")
    else:
        if input.ndim not in (3, 4):
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
        given = [output_size] * 2 if isinstance(output_size, numbers.Integral) or output_size is None \
            else list(output_size)
        if len(given) != 2:
            raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
        sizes = [n if s is None else int(s) for s, n in zip(given, input.shape[-2:])]
    if any(s < 0 for s in sizes):  # torch's 1-D pool is its 2-D one on a unit height
        received = ([1] if d == 1 else []) + sizes
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{', '.join(map(str, received))}}}")
    out = input
    counts: Tensor | float = 1.0
    # the sum over each window (0/1 matrices), then one division by the window's size
    for k, (n, o) in enumerate(zip(input.shape[-d:], sizes)):
        summing = _summing_matrix(n, o, input)
        axis = input.ndim - d + k
        out = matmul(summing, out) if axis == input.ndim - 2 else matmul(out, summing.T)
        lengths = _factory.tensor([float(hi - lo) for lo, hi in _adaptive_windows(n, o)], dtype=input.dtype,
                                  device=input.device)
        counts = counts * (lengths.reshape(o, 1) if axis == input.ndim - 2 else lengths)
    return renamed(out / counts, _node_name(d, "AdaptiveAvgPool2DBackward0"))


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """The mean over ``output_size`` windows of the last dimension, torch's adaptive windows
    ``[floor(i L / out), ceil((i + 1) L / out))``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.adaptive_avg_pool1d(lucid.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), 2).tolist()
    [[[2.0, 4.0]]]
    """
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: int | None | Sequence[int | None]) -> Tensor:
    """The mean over ``output_size`` windows of each of the last two dimensions (None keeps a size).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.adaptive_avg_pool2d(lucid.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    >>> F.adaptive_avg_pool2d(lucid.ones(2, 3, 5, 7), (2, None)).shape
    (2, 3, 2, 7)
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")

