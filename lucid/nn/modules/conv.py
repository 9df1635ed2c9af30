"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``.

torch's parameter names, shapes and initialisation (``kaiming_uniform_(a=sqrt(5))`` for the
weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias, from lucid's generator), so a
torch ``state_dict`` loads as it is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ... import _factory
from ..._arguments import count
from .. import functional as F
from .. import init
from .._functional.conv import transposed_size
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _as_tuple(value, d: int) -> tuple:
    return tuple(value) if isinstance(value, Sequence) else (value,) * d


def _ints(name: str, value, d: int, least: int) -> tuple:
    """``value`` (an int, or ``d`` of them) as ``d`` ints of at least ``least``, named where
    wrong: torch takes a NaN, a string or a negative stride here and fails at the first call."""
    values = (value,) * d if isinstance(value, str) else _as_tuple(value, d)
    if len(values) != d:
        raise ValueError(f"{name} must be an int or a tuple of {d} ints, got {value!r}")
    return tuple(count(name, v, least) for v in values)


class _ConvNd(Module):
    """What the convolution layers share: checks, parameters, initialisation, repr."""

    _dims = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                 bias, padding_mode, device, dtype) -> None:
        super().__init__()
        d = self._dims
        count("in_channels", in_channels)
        count("out_channels", out_channels)
        if isinstance(groups, numbers.Real) and groups <= 0:
            raise ValueError("groups must be a positive integer")
        count("groups", groups, 1)
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride = _ints("kernel_size", kernel_size, d, 1), _ints("stride", stride, d, 1)
        dilation = _ints("dilation", dilation, d, 1)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ints("padding", padding, d, 0)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel_size
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.transposed, self.output_padding = self._transposed, _ints("output_padding", output_padding, d, 0)
        self.groups, self.padding_mode = groups, padding_mode
        if padding == "same":  # torch's: the odd element of the total after
            totals = [v * (k - 1) for v, k in zip(dilation, kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        elif padding == "valid":
            pairs = [(0, 0)] * d
        else:
            pairs = [(p, p) for p in padding]
        self._reversed_padding_repeated_twice = [w for pair in reversed(pairs) for w in pair]
        kwargs = {"device": device or "cpu", "dtype": dtype}
        shape = (in_channels, out_channels // groups) if self._transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_factory.empty(*shape, *kernel_size, **kwargs))
        if bias:
            self.bias = Parameter(_factory.empty(out_channels, **kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's initialisation: ``kaiming_uniform_(weight, a=sqrt(5))``, the bias from
        ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, from lucid's generator.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> conv = nn.Conv2d(2, 3, 3)
        >>> conv.reset_parameters()
        >>> bool((conv.bias.abs() <= 1 / 18 ** 0.5).all())
        True
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
                 dilation: int | Sequence[int] = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = F.conv1d if self._dims == 1 else F.conv2d
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """A 1-D convolution over ``(N, C_in, L)`` (or ``(C_in, L)``): see :func:`lucid.nn.functional.conv1d`.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, dilation : int or tuple, default 1
    padding : int, tuple, "valid" or "same", default 0
    groups : int, default 1
        Must divide both channel counts.
    bias : bool, default True
    padding_mode : {"zeros", "reflect", "replicate", "circular"}, default "zeros"
        How ``padding`` is filled (see :func:`lucid.nn.functional.pad`).
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Attributes
    ----------
    weight : Parameter
        ``(out_channels, in_channels / groups, kernel_size)``.
    bias : Parameter or None
        ``(out_channels,)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> conv = nn.Conv1d(2, 4, 3, padding="same", padding_mode="circular")
    >>> conv
    Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same, padding_mode=circular)
    >>> conv(lucid.ones(5, 2, 7)).shape
    (5, 4, 7)
    """

    _dims = 1


class Conv2d(_Conv):
    """A 2-D convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``): see :func:`lucid.nn.functional.conv2d`.

    Parameters are those of :class:`Conv1d`, each size an int or a pair.

    Attributes
    ----------
    weight : Parameter
        ``(out_channels, in_channels / groups, kH, kW)``.
    bias : Parameter or None
        ``(out_channels,)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> conv = nn.Conv2d(1, 32, 3, 1)
    >>> conv
    Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))
    >>> conv(lucid.ones(2, 1, 28, 28)).shape
    (2, 32, 26, 26)
    >>> [(name, p.shape) for name, p in conv.named_parameters()]
    [('weight', (32, 1, 3, 3)), ('bias', (32,))]
    """

    _dims = 2


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                 output_padding: int | Sequence[int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | Sequence[int] = 1, padding_mode: str = "zeros", device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """torch's: ``output_padding``, or what reaches ``output_size``."""
        if output_size is None:
            return self.output_padding
        d = self._dims
        leading = 2 if input.ndim == d + 2 else 1
        output_size = list(output_size)
        if len(output_size) == leading + d:
            output_size = output_size[leading:]
        if len(output_size) != d:
            raise ValueError(f"ConvTranspose{d}D: for {input.ndim}D input, output_size must have {d} or {leading + d} "
                             f"elements (got {len(output_size)})")
        smallest = transposed_size(input.shape[leading:], self.kernel_size, self.stride, self.padding, (0,) * d,
                                   self.dilation)
        largest = [n + s - 1 for n, s in zip(smallest, self.stride)]
        for wanted, low, high in zip(output_size, smallest, largest):
            if not low <= wanted <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{list(smallest)} to {largest} (for an input of {list(input.shape[leading:])})")
        return tuple(wanted - low for wanted, low in zip(output_size, smallest))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        conv = F.conv_transpose1d if self._dims == 1 else F.conv_transpose2d
        extra = self._output_padding(input, output_size)
        return conv(input, self.weight, self.bias, self.stride, self.padding, extra, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """A 1-D transposed convolution: see :func:`lucid.nn.functional.conv_transpose1d`.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, dilation : int or tuple, default 1
    padding, output_padding : int or tuple, default 0
    groups : int, default 1
    bias : bool, default True
    padding_mode : "zeros"
        The only one torch has for transposed convolutions.
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Attributes
    ----------
    weight : Parameter
        ``(in_channels, out_channels / groups, kernel_size)``.
    bias : Parameter or None
        ``(out_channels,)``.

    Notes
    -----
    ``forward(input, output_size)`` picks the ``output_padding`` that reaches ``output_size``,
    as torch; where none does, its ``ValueError`` names the input's size as a list, where
    torch's names a ``torch.Size``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> up = nn.ConvTranspose1d(4, 2, 3, stride=2)
    >>> up(lucid.ones(1, 4, 5)).shape
    (1, 2, 11)
    >>> up(lucid.ones(1, 4, 5), output_size=[12]).shape
    (1, 2, 12)
    """

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """A 2-D transposed convolution: see :func:`lucid.nn.functional.conv_transpose2d`.

    Parameters are those of :class:`ConvTranspose1d`, each size an int or a pair.

    Attributes
    ----------
    weight : Parameter
        ``(in_channels, out_channels / groups, kH, kW)``.
    bias : Parameter or None
        ``(out_channels,)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> up = nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)
    >>> up
    ConvTranspose2d(8, 3, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))
    >>> up(lucid.ones(2, 8, 5, 5)).shape
    (2, 3, 10, 10)
    """

    _dims = 2
