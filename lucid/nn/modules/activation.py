"""Elementwise activation layers, the softmax layers, and the shape-only ``Identity`` and ``Flatten``."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..._ops.elementwise import sigmoid, tanh
from .. import functional as F
from ..._arguments import number, real
from .._functional.checks import INPLACE_REASON as _INPLACE_REASON
from .._functional.checks import require_int
from ..._tensor import Tensor
from ..module import Module

__all__ = ["ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "Mish", "ReLU6", "LeakyReLU", "ELU", "Hardtanh", "Softplus",
           "Softsign", "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten"]


class ReLU(Module):
    """``max(x, 0)`` elementwise, as a layer (see :func:`lucid.nn.functional.relu`).

    Parameters
    ----------
    inplace : bool, default False
        Accepted for torch's signature; True raises ``NotImplementedError``, since lucid does
        not record in-place ops in the autograd graph.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ReLU()(lucid.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        if inplace:
            raise NotImplementedError(_INPLACE_REASON)
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``max(input, 0)`` elementwise.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.ReLU()(lucid.tensor([-1.0, 1.0]))
        tensor([0., 1.])
        """
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """The hyperbolic tangent elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Tanh()(lucid.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``tanh(input)`` elementwise.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Tanh()(lucid.tensor([0.0]))
        tensor([0.])
        """
        return tanh(input)


class Sigmoid(Module):
    """The logistic function ``1 / (1 + exp(-x))`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Sigmoid()(lucid.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``1 / (1 + exp(-input))`` elementwise.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Sigmoid()(lucid.tensor([0.0]))
        tensor([0.5000])
        """
        return sigmoid(input)


class _Inplace(Module):
    """An activation that takes torch's ``inplace`` flag and refuses True (see :class:`ReLU`)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        if inplace:
            raise NotImplementedError(_INPLACE_REASON)
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """The Gaussian error linear unit, as a layer (see :func:`lucid.nn.functional.gelu`).

    Parameters
    ----------
    approximate : {"none", "tanh"}, default "none"
        ``"none"``: ``x * Phi(x)`` with the exact normal CDF; ``"tanh"``: its tanh approximation.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    >>> nn.GELU()(lucid.tensor([0.0, 1.0], dtype=lucid.float64))
    tensor([0.0000, 0.8413], dtype=lucid.float64)
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_Inplace):
    """``x * sigmoid(x)`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.SiLU()(lucid.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input)


class Mish(_Inplace):
    """``x * tanh(softplus(x))`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Mish()(lucid.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input)


class ReLU6(_Inplace):
    """``min(max(x, 0), 6)`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ReLU6()(lucid.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input)


class LeakyReLU(_Inplace):
    """``x`` where positive, ``negative_slope * x`` elsewhere, as a layer.

    Parameters
    ----------
    negative_slope : float, default 0.01
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.LeakyReLU(0.1)
    LeakyReLU(negative_slope=0.1)
    >>> nn.LeakyReLU(0.5)(lucid.tensor([-2.0, 2.0]))
    tensor([-1.,  2.])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(_Inplace):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere, as a layer.

    Parameters
    ----------
    alpha : float, default 1.0
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ELU()
    ELU(alpha=1.0)
    >>> nn.ELU(alpha=2.0)(lucid.tensor([3.0]))
    tensor([3.])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        number("alpha", alpha)  # torch takes a NaN, and every negative input's output is NaN
        self.alpha = alpha

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(_Inplace):
    """``x`` clamped to ``[min_val, max_val]``, as a layer.

    Parameters
    ----------
    min_val, max_val : float, default -1.0, 1.0
    inplace : bool, default False
        True raises ``NotImplementedError``.
    min_value, max_value : float, optional
        Deprecated spellings of ``min_val`` and ``max_val`` (they win, with a warning, as in torch).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Hardtanh(-2.0, 2.0)
    Hardtanh(min_val=-2.0, max_val=2.0)
    >>> nn.Hardtanh()(lucid.tensor([-3.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__(inplace)
        if min_value is not None or max_value is not None:
            warnings.warn("keyword argument `min_value`/`max_value` is deprecated and will be removed in "
                          "future releases, please use `min_val`/`max_val` instead.", FutureWarning, stacklevel=2)
            min_val = min_val if min_value is None else min_value
            max_val = max_val if max_value is None else max_value
        real("min_val", min_val), real("max_val", max_val)  # torch takes a NaN bound, which clamps nothing
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``), as a layer.

    Parameters
    ----------
    beta : float, default 1.0
    threshold : float, default 20.0

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Softplus(beta=2.0)
    Softplus(beta=2.0, threshold=20.0)
    >>> nn.Softplus()(lucid.tensor([50.0]))
    tensor([50.])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """``x / (1 + |x|)`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Softsign()(lucid.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class _SoftmaxFamily(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """The softmax along ``dim``, as a layer (see :func:`lucid.nn.functional.softmax`).

    Parameters
    ----------
    dim : int, optional
        Omitting it is deprecated, as in torch.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Softmax(dim=1)(lucid.tensor([[0.0, 0.0]]))
    tensor([[0.5000, 0.5000]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxFamily):
    """The log of the softmax along ``dim``, as a layer (see :func:`lucid.nn.functional.log_softmax`).

    Parameters
    ----------
    dim : int, optional
        Omitting it is deprecated, as in torch.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.LogSoftmax(dim=0)(lucid.tensor([0.0, 0.0], dtype=lucid.float64))
    tensor([-0.6931, -0.6931], dtype=lucid.float64)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Identity(Module):
    """Return the input unchanged; any constructor arguments are ignored, as in torch.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Identity(54, unused="argument")(lucid.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Flatten the dimensions ``start_dim`` to ``end_dim`` into one (see :func:`lucid.flatten`).

    Parameters
    ----------
    start_dim : int, default 1
        The first dimension to flatten (1 keeps the batch dimension).
    end_dim : int, default -1

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Flatten()(lucid.zeros(2, 3, 4)).shape
    (2, 12)
    >>> nn.Flatten(0, 1)
    Flatten(start_dim=0, end_dim=1)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        require_int(start_dim, "start_dim", "flatten", 1)
        require_int(end_dim, "end_dim", "flatten", 2)
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into the shape ``unflattened_size``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Unflatten(1, (2, 3))(lucid.zeros(4, 6)).shape
    (4, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        require_int(dim, "dim", "unflatten", 1)
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}")
        for index, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(size).__name__} at pos {index}")
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim % input.ndim
        return input.reshape(*input.shape[:dim], *self.unflattened_size, *input.shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
