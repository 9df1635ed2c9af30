"""Dropout and the normalisations: ``dropout``, ``layer_norm``, ``batch_norm``."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

from ... import _dtype, _factory
from ..._autograd import no_grad
from lucid._ops.precision import widen, widened
from ..._ops.normalization import layer_norm as _layer_norm
from ..._arguments import count, describe
from ..._tensor import Tensor

from .checks import check_dropout_probability, refuse_inplace, require_tensor, same_device

__all__ = ["dropout", "dropout2d", "layer_norm", "batch_norm"]


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only).

    The mask comes from lucid's seeded generator (:func:`lucid.manual_seed`), the same on
    every device; it is not torch's stream of random numbers.

    Parameters
    ----------
    input : Tensor
    p : float, default 0.5
        In [0, 1]; ``p = 1`` gives zeros.
    training : bool, default True
        False returns ``input`` unchanged.
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> _ = lucid.manual_seed(0)
    >>> out = F.dropout(lucid.ones(1000), p=0.2)
    >>> sorted(set(out.tolist()))
    [0.0, 1.25]
    >>> F.dropout(lucid.ones(3), p=0.2, training=False)
    tensor([1., 1., 1.])
    """
    require_tensor(input, "input", "dropout", 1)
    check_dropout_probability(p)
    refuse_inplace(inplace)
    return _drop(input, p, training, input.shape)


def _drop(input, p, training, shape):
    """``input`` times a mask of ``shape`` (broadcast), each element 0 with probability ``p``
    and ``1 / (1 - p)`` otherwise."""
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = _factory.rand(*shape, dtype=_dtype.float64, device=input.device) >= p
    return input * keep.to(input.dtype) * (1.0 / (1.0 - p))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels: each ``input[n, c]`` with probability ``p``, the rest scaled by
    ``1 / (1 - p)`` (training only), as torch's feature dropout.

    The input is ``(N, C, H, W)``; torch's other shapes are taken as it takes them, with its
    warnings (a 3-D input is ``(N, C, L)``). The masks come from lucid's generator.

    Parameters
    ----------
    input : Tensor
    p : float, default 0.5
    training : bool, default True
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> _ = lucid.manual_seed(0)
    >>> out = F.dropout2d(lucid.ones(4, 8, 2, 2), p=0.5)
    >>> sorted(set(out.tolist()[0][0][0]) | set(out.tolist()[1][0][0]))[-1]
    2.0
    >>> all(len(set(sum(channel, []))) == 1 for sample in out.tolist() for channel in sample)
    True
    """
    require_tensor(input, "input", "dropout2d", 1)
    check_dropout_probability(p)
    refuse_inplace(inplace)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _drop(input, p, training, tuple(input.shape[:2]) + (1,) * (input.ndim - 2))


def normalized_shape_tuple(normalized_shape) -> tuple:
    """An int or a sequence of ints as a tuple of ints, each a size (an int of at least 0),
    refused otherwise naming the argument (torch fails inside a tensor factory, naming ``size``,
    or on ``float`` not being iterable)."""
    if isinstance(normalized_shape, numbers.Integral):
        return (count("normalized_shape", normalized_shape),)
    if not isinstance(normalized_shape, Sequence) or isinstance(normalized_shape, str):
        raise TypeError(f"normalized_shape must be an int or a sequence of ints, got {describe(normalized_shape)}")
    return tuple(count(f"normalized_shape[{i}]", n) for i, n in enumerate(normalized_shape))


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions to mean 0 and variance 1, then scale and shift.

    ``(x - mean) / sqrt(var + eps) * weight + bias``, with the biased variance, as in torch.

    Parameters
    ----------
    input : Tensor
        Shape ``(*, *normalized_shape)``.
    normalized_shape : int or sequence of int
    weight, bias : Tensor, optional
        Of shape ``normalized_shape``.
    eps : float, default 1e-5

    Raises
    ------
    RuntimeError
        If the trailing dimensions of ``input`` are not ``normalized_shape``, or ``weight``
        or ``bias`` has another shape.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.layer_norm(lucid.tensor([[1.0, 3.0], [2.0, 6.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.],
            [-1.,  1.]])
    """
    require_tensor(input, "input", "layer_norm", 1)
    shape = normalized_shape_tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.shape[input.ndim - k:] != shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tensor.shape != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(tensor.shape)} and normalized_shape = {list(shape)}"
            )
    same_device(input, weight, bias)
    dims = tuple(range(input.ndim - k, input.ndim))
    if input.dtype.is_floating_point and all(t is None or t.dtype is input.dtype for t in (weight, bias)):
        return _layer_norm(input, dims, weight, bias, eps)  # one node, torch's closed-form backward
    (input, weight, bias), narrow = widened(input, weight, bias, name="NativeLayerNormBackward0")
    mean = input.mean(dim=dims, keepdim=True)
    centred = input - mean
    variance = (centred * centred).mean(dim=dims, keepdim=True)
    out = centred * (1 / (variance + eps).sqrt())
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return narrow(out)


def check_batch_statistics(input) -> None:
    """Training needs more than one value per channel (dimension 1) to estimate a variance."""
    if input.numel() // max(input.shape[1], 1) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and the other dimensions.

    In training (or without running statistics) the batch's mean and biased variance
    normalise; the running statistics, when given, are then updated in place as torch does:
    ``running = (1 - momentum) * running + momentum * batch``, with the *unbiased* variance.
    Otherwise the running statistics normalise.

    Parameters
    ----------
    input : Tensor
        Shape ``(N, C, *)``.
    running_mean, running_var : Tensor or None
        Shape ``(C,)``; updated in place in training.
    weight, bias : Tensor, optional
        Shape ``(C,)``.
    training : bool, default False
    momentum : float, default 0.1
    eps : float, default 1e-5

    Raises
    ------
    ValueError
        In training, if a channel has a single value.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[1.0, 10.0], [3.0, 30.0]])
    >>> mean, var = lucid.zeros(2), lucid.ones(2)
    >>> F.batch_norm(x, mean, var, training=True, eps=0.0)
    tensor([[-1., -1.],
            [ 1.,  1.]])
    >>> mean, var
    (tensor([0.2000, 2.0000]), tensor([ 1.1000, 20.9000]))
    """
    require_tensor(input, "input", "batch_norm", 1)
    if input.ndim < 2:
        raise ValueError(f"batch_norm expected at least 2-D input (got {input.ndim}D input)")
    channels = input.shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                         ("bias", bias)):
        if tensor is not None and tensor.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel()}")
    same_device(input, running_mean, running_var, weight, bias)
    dims = (0,) + tuple(range(2, input.ndim))
    count = input.numel() // channels if channels else 0
    shape = (1, channels) + (1,) * (input.ndim - 2)
    # the running statistics stay as they are
    (input, weight, bias), narrow = widened(input, weight, bias, name="NativeBatchNormBackward0")
    if training:
        check_batch_statistics(input)
        mean = input.mean(dim=dims, keepdim=True)
        centred = input - mean
        variance = (centred * centred).mean(dim=dims, keepdim=True)
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.reshape(channels).detach() * momentum)
            if running_var is not None:
                unbiased = variance.reshape(channels).detach() * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("running_mean and running_var must be defined in evaluation mode")
        centred = input - widen(running_mean).reshape(shape)  # read, not updated: widened too
        variance = widen(running_var).reshape(shape)
    out = centred * (1 / (variance + eps).sqrt())
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return narrow(out)
