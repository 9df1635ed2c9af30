"""Activation functions, with torch's formulas (and so torch's rounding) and signatures.

``inplace=True`` raises ``NotImplementedError`` everywhere: lucid does not record in-place
operations in the autograd graph, and silently computing out of place would break scripts
that rely on the input changing.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..._ops.elementwise import relu as _relu, sigmoid as _sigmoid, tanh as _tanh, where
from ..._ops.reduction import log_softmax as _log_softmax, softmax as _softmax
from lucid._ops import activation as _activation
from ..._autograd import named_node
from ..._tensor import Tensor

from .checks import refuse_inplace, require_tensor

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh",
           "sigmoid", "tanh", "softmax", "log_softmax"]



def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise; the gradient is 0 where ``input <= 0``.

    Parameters
    ----------
    input : Tensor
    inplace : bool, default False
        True raises ``NotImplementedError``: lucid does not record in-place ops.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.relu(lucid.tensor([-2.0, 0.0, 3.0]))
    tensor([0., 0., 3.])
    """
    refuse_inplace(inplace)
    return _relu(input)


@named_node("HardtanhBackward0")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is 0 outside (and on) the bounds.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.hardtanh(lucid.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    refuse_inplace(inplace)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = (input > min_val) & (input < max_val)
    return where(inside, input, input.clamp(min_val, max_val).detach())


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)`` elementwise (:func:`hardtanh` on [0, 6]).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.relu6(lucid.tensor([-1.0, 3.0, 9.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.leaky_relu(lucid.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    refuse_inplace(inplace)
    return _activation.leaky_relu(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere (computed with ``expm1``).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.elu(lucid.tensor([-1.0, 2.0], dtype=lucid.float64))
    tensor([-0.6321,  2.0000], dtype=lucid.float64)
    """
    refuse_inplace(inplace)
    return _activation.elu(input, alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """The Gaussian error linear unit ``x * Phi(x)``, or its tanh approximation.

    ``approximate="none"``: ``x * 0.5 * (1 + erf(x / sqrt(2)))``;
    ``approximate="tanh"``: ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x**3)))``.

    Notes
    -----
    torch evaluates these formulas as written, and ``1 + erf(x / sqrt(2))`` (or ``1 + tanh``)
    cancels for negative ``x``: its float32 GELU is 0 from about ``x = -5.5``, where the true
    value is ``-1e-7``, and wrong in every digit before that. lucid computes ``x Phi(x)``
    with ``Phi`` from ``erfc`` (and the tanh form as ``x sigmoid(2u)``), which keeps every
    digit in the tail; its results are within an ulp or two of the true value everywhere
    (the accuracy table in the docs), so they differ from torch's where torch's are wrong.

    Raises
    ------
    RuntimeError
        If ``approximate`` is neither ``"none"`` nor ``"tanh"``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.gelu(lucid.tensor([-1.0, 0.0, 1.0], dtype=lucid.float64))
    tensor([-0.1587,  0.0000,  0.8413], dtype=lucid.float64)
    >>> F.gelu(lucid.tensor([1.0], dtype=lucid.float64), approximate="tanh")
    tensor([0.8412], dtype=lucid.float64)
    """
    require_tensor(input, "input", "gelu", 1)
    if approximate == "none":
        return _activation.gelu(input)
    if approximate == "tanh":
        return _activation.gelu_tanh(input)
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (also called swish).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.silu(lucid.tensor([0.0, 1.0], dtype=lucid.float64))
    tensor([0.0000, 0.7311], dtype=lucid.float64)
    """
    refuse_inplace(inplace)
    return _activation.silu(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input > threshold``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.softplus(lucid.tensor([0.0, 30.0], dtype=lucid.float64))
    tensor([ 0.6931, 30.0000], dtype=lucid.float64)
    """
    require_tensor(input, "input", "softplus", 1)
    return _activation.softplus(input, beta, threshold)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.mish(lucid.tensor([0.0, 1.0], dtype=lucid.float64))
    tensor([0.0000, 0.8651], dtype=lucid.float64)
    """
    refuse_inplace(inplace)
    return _activation.mish(input)


def softsign(input: Tensor) -> Tensor:
    """``input / (1 + |input|)``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.softsign(lucid.tensor([-1.0, 3.0]))
    tensor([-0.5000,  0.7500])
    """
    return _activation.softsign(input)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))`` (:func:`lucid.sigmoid`).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.sigmoid(lucid.tensor([0.0]))
    tensor([0.5000])
    """
    return _sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent (:func:`lucid.tanh`).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.tanh(lucid.tensor([0.0]))
    tensor([0.])
    """
    return _tanh(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: lucid.dtype | None = None) -> Tensor:
    """``input - logsumexp(input, dim)``: the log of the softmax along ``dim``, computed stably.

    Parameters
    ----------
    input : Tensor
    dim : int
        The dimension to normalise. Omitting it is deprecated (as in torch): dimension 0 is used
        for 0-, 1- and 3-D inputs, 1 otherwise, with a warning.
    dtype : lucid.dtype, optional
        Cast the input to this dtype first.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> out = F.log_softmax(lucid.tensor([[0.0, 0.0], [1.0, 1.0]]), dim=1)
    >>> bool(((out.exp().sum(dim=1) - 1).abs() < 1e-6).all())
    True
    """
    require_tensor(input, "input", "log_softmax", 1)
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _log_softmax(input, dim)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: lucid.dtype | None = None) -> Tensor:
    """``exp(input) / sum(exp(input), dim)``, computed stably (see :func:`lucid.softmax`).

    Parameters
    ----------
    input : Tensor
    dim : int
        The dimension to normalise; omitting it is deprecated, as for :func:`log_softmax`.
    dtype : lucid.dtype, optional
        Cast the input to this dtype first.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.softmax(lucid.tensor([[0.0, 0.0], [0.0, 1000.0]]), dim=1)
    tensor([[0.5000, 0.5000],
            [0.0000, 1.0000]])
    """
    require_tensor(input, "input", "softmax", 1)
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(input, dim)
