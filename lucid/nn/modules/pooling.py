"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool1d/2d``.

Each keeps its arguments as torch's layer does (the same attributes and repr) and calls
the function of :mod:`lucid.nn.functional` of its name.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import functional as F
from ..._tensor import Tensor
from .._functional.pooling import check_ints
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]


class _MaxPoolNd(Module):
    _function = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                 padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        check_ints(self._function.__name__, kernel_size=kernel_size, stride=kernel_size if stride is None else stride,
                   padding=padding, dilation=dilation)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return self._function(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The largest element of each window along the last dimension: see :func:`lucid.nn.functional.max_pool1d`.

    Parameters
    ----------
    kernel_size : int
    stride : int, optional
        ``kernel_size`` by default.
    padding : int, default 0
    dilation : int, default 1
    return_indices : bool, default False
        Return the maxima's indices too.
    ceil_mode : bool, default False

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pool = nn.MaxPool1d(2)
    >>> pool
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[3.0, 2.0]]]
    """

    _function = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The largest element of each window of the last two dimensions: see :func:`lucid.nn.functional.max_pool2d`.

    Parameters are those of :class:`MaxPool1d`, each an int or a pair.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.MaxPool2d(2)(lucid.ones(1, 3, 28, 28)).shape
    (1, 3, 14, 14)
    """

    _function = staticmethod(F.max_pool2d)


class AvgPool1d(Module):
    """The mean of each window along the last dimension: see :func:`lucid.nn.functional.avg_pool1d`.

    Parameters
    ----------
    kernel_size : int
    stride : int, optional
        ``kernel_size`` by default.
    padding : int, default 0
    ceil_mode : bool, default False
    count_include_pad : bool, default True

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pool = nn.AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(self, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                 padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        check_ints("avg_pool1d", kernel_size=kernel_size, stride=kernel_size if stride is None else stride,
                   padding=padding)
        single = (lambda v: tuple(v) if isinstance(v, Sequence) else (v,))  # torch's _single
        self.kernel_size = single(kernel_size)
        self.stride = single(stride if stride is not None else kernel_size)
        self.padding = single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """The mean of each window of the last two dimensions: see :func:`lucid.nn.functional.avg_pool2d`.

    Parameters
    ----------
    kernel_size : int or pair
    stride : int or pair, optional
        ``kernel_size`` by default.
    padding : int or pair, default 0
    ceil_mode : bool, default False
    count_include_pad : bool, default True
    divisor_override : int, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pool = nn.AvgPool2d(2, divisor_override=1)
    >>> pool
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    >>> pool(lucid.ones(1, 1, 4, 4)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """

    def __init__(self, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                 padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        check_ints("avg_pool2d", kernel_size=kernel_size, stride=kernel_size if stride is None else stride,
                   padding=padding)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPoolNd(Module):
    _name = "adaptive_avg_pool2d"  # its function's, for torch's messages

    def __init__(self, output_size) -> None:
        super().__init__()
        check_ints(self._name, none_allowed=self._name.endswith("2d"), output_size=output_size)
        sizes = output_size if isinstance(output_size, Sequence) else [output_size]
        if any(size is not None and size < 0 for size in sizes):
            raise ValueError(f"output_size must be at least 0, got {output_size!r}")
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over ``output_size`` windows of the last dimension: see
    :func:`lucid.nn.functional.adaptive_avg_pool1d`.

    Parameters
    ----------
    output_size : int

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.AdaptiveAvgPool1d(1)(lucid.tensor([[[1.0, 2.0, 6.0]]])).tolist()
    [[[3.0]]]
    """

    def __init__(self, output_size: int | Sequence[int]) -> None:
        super().__init__(output_size)

    _name = "adaptive_avg_pool1d"

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over ``output_size`` windows of each of the last two dimensions: see
    :func:`lucid.nn.functional.adaptive_avg_pool2d`.

    Parameters
    ----------
    output_size : int, None or pair of them
        None keeps that dimension's size.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pool = nn.AdaptiveAvgPool2d((1, None))
    >>> pool
    AdaptiveAvgPool2d(output_size=(1, None))
    >>> pool(lucid.ones(2, 3, 4, 5)).shape
    (2, 3, 1, 5)
    """

    def __init__(self, output_size: int | None | Sequence[int | None]) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)
