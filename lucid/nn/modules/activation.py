"""Elementwise activation layers."""

from __future__ import annotations

import lucid

from .. import functional as F
from ..module import Module

__all__ = ["ReLU", "Tanh", "Sigmoid"]


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

    def __init__(self, inplace: bool = False):
        super().__init__()
        if inplace:
            raise NotImplementedError(F._INPLACE_REASON)
        self.inplace = inplace

    def forward(self, input):
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

    def forward(self, input):
        """``tanh(input)`` elementwise.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Tanh()(lucid.tensor([0.0]))
        tensor([0.])
        """
        return lucid.tanh(input)


class Sigmoid(Module):
    """The logistic function ``1 / (1 + exp(-x))`` elementwise, as a layer.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.Sigmoid()(lucid.tensor([0.0]))
    tensor([0.5])
    """

    def forward(self, input):
        """``1 / (1 + exp(-input))`` elementwise.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Sigmoid()(lucid.tensor([0.0]))
        tensor([0.5])
        """
        return lucid.sigmoid(input)
