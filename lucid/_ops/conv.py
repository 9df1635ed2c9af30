"""Convolutions and constant padding, as recorded ops on the backend's window products.

``convolution`` is torch's cross-correlation of an already padded input (the functions of
:mod:`lucid.nn.functional` pad first, in any ``padding_mode``); ``conv_transpose`` is its
gradient with respect to the input, used as an op of its own. The backward of each is the
other two products (:meth:`~lucid._backend.base.Backend.conv_input_grad`,
:meth:`~lucid._backend.base.Backend.conv_weight_grad`), computed only for the inputs that
require a gradient. Arguments are checked by the callers.
"""

from __future__ import annotations

from .._autograd import record
from .._tensor import Tensor


def _bias_shape(bias, ndim):
    return (1, bias.shape[0]) + (1,) * (ndim - 2)


def _add_bias(backend, out, bias, ndim):
    return out if bias is None else backend.add(out, backend.reshape(bias._data, _bias_shape(bias, ndim)))


def _record(out, input, weight, bias, input_grad, weight_grad):
    """``out`` recorded as a convolution's node: each gradient computed only where wanted."""
    backend, ndim = input._backend, input.ndim

    def backward(g):
        grads = (input_grad(g) if input.requires_grad else None, weight_grad(g) if weight.requires_grad else None)
        if bias is None:
            return grads
        return grads + ((backend.sum(g, axis=(0,) + tuple(range(2, ndim))) if bias.requires_grad else None),)

    inputs = (input, weight) if bias is None else (input, weight, bias)
    return record(out, "ConvolutionBackward0", inputs, backward, saved=(input, weight))


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, dilation: tuple,
                groups: int) -> Tensor:
    """The cross-correlation of ``input`` (N, C, *size, unpadded) with ``weight``
    (O, C / groups, *kernel), plus ``bias`` (O,) per output channel: one recorded node.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.conv import convolution
    >>> x = lucid.arange(5.0).reshape(1, 1, 5)
    >>> convolution(x, lucid.tensor([[[1.0, -1.0]]]), None, (1,), (1,), 1).tolist()
    [[[-1.0, -1.0, -1.0, -1.0]]]
    """
    backend, x, w = input._backend, input._data, weight._data
    size, kernel = input.shape[2:], weight.shape[2:]
    y, columns = backend.conv(x, w, stride, dilation, groups)
    out = input._like(_add_bias(backend, y, bias, input.ndim))
    columns = columns if weight.requires_grad else None  # kept for the weight's gradient

    return _record(out, input, weight, bias,
                   lambda g: backend.conv_input_grad(g, w, size, stride, dilation, groups),
                   lambda g: backend.conv_weight_grad(x, g, kernel, stride, dilation, groups, columns))


def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, dilation: tuple,
                   groups: int, size: tuple) -> Tensor:
    """The transposed convolution of ``input`` (N, C, *in) with ``weight`` (C, O / groups,
    *kernel), uncropped: the gradient of :func:`convolution` of an input of spatial ``size``
    (N, O, *size) that gave ``input``, plus ``bias``; one recorded node.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.conv import conv_transpose
    >>> x = lucid.tensor([[[1.0, 2.0]]])
    >>> conv_transpose(x, lucid.tensor([[[1.0, 10.0]]]), None, (2,), (1,), 1, (4,)).tolist()
    [[[1.0, 10.0, 2.0, 20.0]]]
    """
    backend, x, w = input._backend, input._data, weight._data
    kernel = weight.shape[2:]
    out = input._like(_add_bias(backend, backend.conv_input_grad(x, w, size, stride, dilation, groups), bias,
                                input.ndim))
    # the output elements the input's windows reach: past them (an output_padding beyond the
    # stride) the output is the bias alone, and the gradient there reaches no input or weight
    reach = [(n - 1) * s + v * (k - 1) + 1 for n, s, v, k in zip(input.shape[2:], stride, dilation, kernel)]
    crop = [(0, 0), (0, 0)] + [(0, r - n) for r, n in zip(reach, size)]

    def input_grad(g):
        return backend.conv(backend.pad(g, crop), w, stride, dilation, groups)[0]

    def weight_grad(g):
        return backend.conv_weight_grad(backend.pad(g, crop), x, kernel, stride, dilation, groups)

    return _record(out, input, weight, bias, input_grad, weight_grad)


def constant_pad(input: Tensor, widths: list, value: float = 0.0) -> Tensor:
    """``input`` with ``widths[i] = (before, after)`` elements of ``value`` around dimension
    ``i`` (the leading ones; negative widths crop), recorded.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.conv import constant_pad
    >>> constant_pad(lucid.tensor([[1.0, 2.0]]), [(0, 0), (1, -1)], 9.0).tolist()
    [[9.0, 1.0]]
    """
    backend = input._backend
    out = input._like(backend.pad(input._data, widths, value))
    ungrow = [(-lo, -hi) for lo, hi in widths]
    return record(out, "ConstantPadNdBackward0", (input,), lambda g: (backend.pad(g, ungrow, 0.0),))
