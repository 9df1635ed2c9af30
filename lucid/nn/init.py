"""``lucid.nn.init``: torch's initialisations, with its fans, gains, bounds and errors.

Each function fills its tensor in place without recording a graph (a Parameter that
requires grad may be passed) and returns it. The random ones take ``generator=`` (a
:class:`lucid.Generator`); their distributions and bounds are torch's, their numbers are
lucid's (see :func:`lucid.manual_seed`).

Examples
--------
>>> import lucid
>>> from lucid import nn
>>> w = nn.Parameter(lucid.empty(3, 5))
>>> _ = nn.init.kaiming_uniform_(w, nonlinearity="relu")
>>> bound = nn.init.calculate_gain("relu") * (3 / 5) ** 0.5
>>> bool((w.abs() <= bound).all())
True
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING

from .. import _factory
from .._autograd import no_grad
from .._tensor import Tensor

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.Generator

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity, as torch's table gives it.

    ============================  ==========================================
    nonlinearity                  gain
    ============================  ==========================================
    linear, conv*, sigmoid        1
    tanh                          5/3
    relu                          sqrt(2)
    leaky_relu                    sqrt(2 / (1 + negative_slope**2)), slope 0.01 by default
    selu                          3/4
    ============================  ==========================================

    Parameters
    ----------
    nonlinearity : str
    param : float, optional
        leaky_relu's negative slope.

    Examples
    --------
    >>> from lucid import nn
    >>> nn.init.calculate_gain("tanh"), nn.init.calculate_gain("leaky_relu", 0.2)
    (1.6666666666666667, 1.3867504905630728)
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """torch's fans: ``size(1) * receptive field`` in, ``size(0) * receptive field`` out."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: lucid.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.uniform_(lucid.empty(100), -0.1, 0.1)
    >>> bool((w.abs() <= 0.1).all())
    True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: lucid.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.normal_(lucid.empty(2, 3), std=0.02).shape
    (2, 3)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: lucid.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2) conditioned on [a, b] (redrawn until inside).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.trunc_normal_(lucid.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    sample = _factory.truncated_normal(tensor.shape, mean, std, a, b, generator=generator, dtype=tensor.dtype,
                                       device=tensor.device)
    with no_grad():
        return tensor.copy_(sample)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.constant_(lucid.empty(3), 0.5)
    tensor([0.5000, 0.5000, 0.5000])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.ones_(lucid.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.zeros_(lucid.ones(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-D ``tensor`` with the identity matrix (ones on the main diagonal).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.eye_(lucid.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_factory.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill the 3-, 4- or 5-D ``tensor`` with the Dirac delta (a convolution that keeps its
    input's channels, in ``groups`` groups).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.dirac_(lucid.empty(2, 2, 3))[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    channels = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(channels):
                tensor[(g * out_per_group + d, d) + tuple(n // 2 for n in sizes[2:])] = 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: lucid.Generator | None = None) -> Tensor:
    """Glorot's uniform initialisation: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.xavier_uniform_(lucid.empty(4, 2))
    >>> bool((w.abs() <= 1.0).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: lucid.Generator | None = None) -> Tensor:
    """Glorot's normal initialisation: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.xavier_normal_(lucid.empty(4, 2)).shape
    (4, 2)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: lucid.Generator | None = None) -> Tensor:
    """He's uniform initialisation: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    Parameters
    ----------
    tensor : Tensor
        At least 2-D.
    a : float, default 0
        The negative slope of the leaky_relu after this layer.
    mode : {"fan_in", "fan_out"}
        Which fan keeps the variance: of the forward pass or of the backward pass.
    nonlinearity : str, default "leaky_relu"
        See :func:`calculate_gain`.
    generator : lucid.Generator, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.kaiming_uniform_(lucid.empty(3, 6), mode="fan_out", nonlinearity="relu")
    >>> bool((w.abs() <= 2 ** 0.5).all())  # gain sqrt(2) times sqrt(3 / fan_out), fan_out 3
    True
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: lucid.Generator | None = None) -> Tensor:
    """He's normal initialisation: N(0, std**2) with ``std = gain / sqrt(fan)`` (see :func:`kaiming_uniform_`).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.init.kaiming_normal_(lucid.empty(3, 6)).shape
    (3, 6)
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: lucid.Generator | None = None) -> Tensor:
    """Fill ``tensor`` (seen as ``size(0)`` rows) with a random matrix whose rows or columns
    are orthonormal, times ``gain``: the Q of a QR decomposition of a normal sample.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.orthogonal_(lucid.empty(3, 5, dtype=lucid.float64))
    >>> bool(((w @ w.t() - lucid.eye(3, dtype=lucid.float64)).abs() < 1e-12).all())
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    q = _factory.orthogonal(rows, tensor.numel() // rows, generator=generator, dtype=tensor.dtype,
                            device=tensor.device)
    with no_grad():
        return tensor.copy_(q.reshape(tensor.shape) * gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: lucid.Generator | None = None) -> Tensor:
    """Fill the 2-D ``tensor`` from N(0, std**2), then zero ``ceil(sparsity * rows)`` random
    elements of each column.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.init.sparse_(lucid.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(dim=0).tolist()
    [2, 2, 2]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            rows_zeroed = _factory.randperm(rows, generator=generator)[:zeros]
            tensor[rows_zeroed.to(tensor.device), col] = 0
    return tensor
