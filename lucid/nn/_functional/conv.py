"""The convolutions: ``conv1d``, ``conv2d``, ``conv_transpose1d``, ``conv_transpose2d``.

Each checks its arguments as torch does (torch's messages), pads the input with zeros where
``padding`` asks, and calls the recorded op of :mod:`lucid._ops.conv`. An unbatched input
(no batch dimension) gets one for the call and loses it after.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ..._autograd import renamed
from ..._ops.conv import constant_pad, conv_transpose as _conv_transpose, convolution
from ..._tensor import Tensor
from .checks import require_tensor, same_device

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]

_PADDING_STRINGS = ("valid", "same")


def expand_param(value, d: int, name: str, fn: str = "") -> tuple:
    """An int, or a sequence of 1 or ``d`` ints, as a tuple of ``d`` ints (torch's expansion);
    ``fn`` names the function in the message of a TypeError."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * d
    if isinstance(value, Sequence) and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                           for v in value):
        values = tuple(int(v) for v in value)
        if len(values) == 1:
            return values * d
        if len(values) == d:
            return values
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {d} values to match the "
                           f"convolution dimensions, but got {name}={list(values)}")
    raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")


def _check_layout(input, weight, bias, d: int, fn: str, groups, transposed: bool) -> None:
    require_tensor(input, "input", fn, 1)
    require_tensor(weight, "weight", fn, 2)
    if bias is not None:
        require_tensor(bias, "bias", fn, 3)
    same_device(input, weight, bias)
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    if weight.ndim != d + 2:  # torch reads the dimensions from the weight, and finds the stride wrong
        raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.ndim - 2} values to "
                           f"match the convolution dimensions, but got stride={[1] * d}")
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    batched = input.shape if input.ndim == d + 2 else (1,) + input.shape
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if not transposed and weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    if batched[1] != channels:
        what = f"groups={groups}" if not transposed else "transposed=1"
        raise RuntimeError(f"Given {what}, weight of size {list(weight.shape)}, expected input{list(batched)} to "
                           f"have {channels} channels, but got {batched[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype is not weight.dtype or (bias is not None and bias.dtype is not input.dtype):
        raise RuntimeError(f"Input type ({input.dtype.name}) and weight type ({weight.dtype.name}) should be the "
                           "same" + ("" if bias is None else " and bias type"))
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating-point input, got {input.dtype.name}")


def _check_positive(stride, dilation) -> None:
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("non-positive dilation is not supported")


def _conv_padding(padding, kernel, stride, dilation, d: int, fn: str) -> list:
    """``(before, after)`` per spatial dimension: ``padding`` given as ints, ``"valid"`` or
    ``"same"`` (torch's: the odd element of the total, if any, after)."""
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise RuntimeError(f"Invalid padding string: {padding!r}")
        if padding == "valid":
            return [(0, 0)] * d
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [v * (k - 1) for v, k in zip(dilation, kernel)]
        return [(t // 2, t - t // 2) for t in totals]
    pads = expand_param(padding, d, "padding", fn)
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return [(p, p) for p in pads]


def with_batch(input, d: int):
    """``(input with a batch dimension, unbatch)``."""
    if input.ndim == d + 2:
        return input, lambda out: out
    return input.unsqueeze(0), lambda out: out.squeeze(0)


def convolve(input, weight, bias, stride, padding, dilation, groups, d: int, fn: str) -> Tensor:
    """torch's ``conv{d}d``: the checks, the zero padding, the op."""
    _check_layout(input, weight, bias, d, fn, groups, transposed=False)
    stride, dilation = expand_param(stride, d, "stride", fn), expand_param(dilation, d, "dilation", fn)
    _check_positive(stride, dilation)
    kernel = weight.shape[2:]
    widths = _conv_padding(padding, kernel, stride, dilation, d, fn)
    x, unbatch = with_batch(input, d)
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], widths)]
    reach = [v * (k - 1) + 1 for v, k in zip(dilation, kernel)]
    if any(p < r for p, r in zip(padded, reach)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, reach))}). Kernel size can't be greater than actual input size")
    if any(lo or hi for lo, hi in widths):
        x = constant_pad(x, [(0, 0), (0, 0)] + widths, 0.0)
    return unbatch(convolution(x, weight, bias, stride, dilation, groups))


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """The 1-D cross-correlation of ``input`` (N, C_in, L) with ``weight`` (C_out, C_in / groups, k), plus ``bias``.

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, L)``, or ``(C_in, L)`` unbatched.
    weight : Tensor
        ``(C_out, C_in / groups, k)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, dilation : int or sequence of one int, default 1
    padding : int, sequence of one int, "valid" or "same", default 0
        Zeros on both sides; ``"same"`` keeps the length (stride 1 only).
    groups : int, default 1
        Input and output channels split into this many groups, convolved separately.

    Returns
    -------
    Tensor
        ``(N, C_out, L_out)``, ``L_out = (L + 2 padding - dilation (k - 1) - 1) // stride + 1``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> F.conv1d(x, lucid.tensor([[[1.0, 1.0]]]), padding=1).tolist()
    [[[1.0, 3.0, 5.0, 7.0, 4.0]]]
    """
    return convolve(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """The 2-D cross-correlation of ``input`` (N, C_in, H, W) with ``weight`` (C_out, C_in / groups, kH, kW).

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, H, W)``, or ``(C_in, H, W)`` unbatched.
    weight : Tensor
        ``(C_out, C_in / groups, kH, kW)``.
    bias : Tensor, optional
        ``(C_out,)``, added to each output channel.
    stride, dilation : int or sequence of two ints, default 1
    padding : int, sequence of two ints, "valid" or "same", default 0
        Zeros on both sides of each dimension; ``"same"`` keeps the size (stride 1 only;
        an odd total puts the extra zero after, as torch).
    groups : int, default 1

    Returns
    -------
    Tensor
        ``(N, C_out, H_out, W_out)``.

    Raises
    ------
    RuntimeError
        torch's messages: a wrong number of dimensions or channels, a bias of the wrong
        size, a kernel larger than the padded input, a non-positive stride or dilation.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.ones(1, 1, 3, 3)
    >>> F.conv2d(x, lucid.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    >>> F.conv2d(x, lucid.ones(2, 1, 3, 3), padding="same").shape
    (1, 2, 3, 3)
    """
    return convolve(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def transposed_size(size, kernel, stride, padding, output_padding, dilation) -> tuple:
    """torch's output size of a transposed convolution, per spatial dimension."""
    return tuple((n - 1) * s - 2 * p + v * (k - 1) + o + 1
                 for n, k, s, p, o, v in zip(size, kernel, stride, padding, output_padding, dilation))


def convolve_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, d: int,
                        fn: str) -> Tensor:
    """torch's ``conv_transpose{d}d``: the checks, the op, the crop of ``padding``."""
    _check_layout(input, weight, bias, d, fn, groups, transposed=True)
    stride, dilation = expand_param(stride, d, "stride", fn), expand_param(dilation, d, "dilation", fn)
    pads, extra = expand_param(padding, d, "padding", fn), expand_param(output_padding, d, "output_padding", fn)
    _check_positive(stride, dilation)
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    if any(o < 0 for o in extra):
        raise RuntimeError("negative output_padding is not supported")
    if any(o >= s and o >= v for o, s, v in zip(extra, stride, dilation)):
        names = ("height", "width") if d == 2 else ("width",)
        parts = [f"output_padding_{n}: {o}" for n, o in zip(names, extra)]
        parts += [f"stride_{n}: {s}" for n, s in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
    x, unbatch = with_batch(input, d)
    kernel = weight.shape[2:]
    size = transposed_size(x.shape[2:], kernel, stride, pads, extra, dilation)
    if any(n <= 0 for n in size):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, size))}). Output size is too small")
    full = tuple(n + 2 * p for n, p in zip(size, pads))
    out = _conv_transpose(x, weight, bias, stride, dilation, groups, full)
    if any(pads):  # the crop is part of torch's one convolution node
        out = renamed(constant_pad(out, [(0, 0), (0, 0)] + [(-p, -p) for p in pads], 0.0), "ConvolutionBackward0")
    return unbatch(out)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """The 1-D transposed convolution (the gradient of :func:`conv1d` with respect to its input).

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, L)``, or ``(C_in, L)`` unbatched.
    weight : Tensor
        ``(C_in, C_out / groups, k)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, padding, output_padding, dilation : int or sequence of one int
        ``padding`` crops ``dilation (k - 1) - padding`` from each side of the full result;
        ``output_padding`` adds to one side, to choose among the sizes a strided
        :func:`conv1d` maps to one.
    groups : int, default 1

    Returns
    -------
    Tensor
        ``(N, C_out, (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1)``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.conv_transpose1d(lucid.tensor([[[1.0, 2.0]]]), lucid.tensor([[[1.0, 1.0]]])).tolist()
    [[[1.0, 3.0, 2.0]]]
    """
    return convolve_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                               "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """The 2-D transposed convolution (the gradient of :func:`conv2d` with respect to its input).

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, H, W)``, or ``(C_in, H, W)`` unbatched.
    weight : Tensor
        ``(C_in, C_out / groups, kH, kW)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, padding, output_padding, dilation : int or sequence of two ints
        See :func:`conv_transpose1d`.
    groups : int, default 1

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.conv_transpose2d(lucid.ones(1, 1, 2, 2), lucid.ones(1, 3, 2, 2), stride=2).shape
    (1, 3, 4, 4)
    """
    return convolve_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                               "conv_transpose2d")
