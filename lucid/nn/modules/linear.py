"""Affine layers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ... import _factory
from ..._arguments import count
from .. import functional as F
from .. import init
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["Linear"]  # torch's: NonDynamicallyQuantizableLinear is not exported


class Linear(Module):
    """The affine map ``y = x W^T + b``.

    Parameters
    ----------
    in_features : int
        The size of each input sample (the last dimension of the input).
    out_features : int
        The size of each output sample.
    bias : bool, default True
        Whether to learn the additive bias ``b``.
    device : {"cpu", "gpu"}, optional
        Where to create the parameters (``"cpu"`` by default).
    dtype : lucid.dtype, optional
        Their dtype (``lucid.float32`` by default).

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in_features)``, initialised from U(-k, k) with
        ``k = 1 / sqrt(in_features)`` (torch's ``kaiming_uniform_(a=sqrt(5))``).
    bias : Parameter or None
        Shape ``(out_features,)``, from U(-k, k) as well.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> layer = nn.Linear(4, 2)
    >>> layer
    Linear(in_features=4, out_features=2, bias=True)
    >>> layer(lucid.ones(5, 4)).shape
    (5, 2)
    >>> bool((layer.weight.abs() <= 0.5).all())
    True
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        self.in_features = count("in_features", in_features)
        self.out_features = count("out_features", out_features)
        kwargs: dict[str, Any] = {"device": device or "cpu", "dtype": dtype}
        self.weight = Parameter(_factory.zeros(out_features, in_features, **kwargs))
        if bias:
            self.bias = Parameter(_factory.zeros(out_features, **kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight, then the bias, from U(-1/sqrt(in_features), 1/sqrt(in_features)).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.Linear(3, 3)
        >>> _ = lucid.manual_seed(1); layer.reset_parameters(); first = layer.weight.tolist()
        >>> _ = lucid.manual_seed(1); layer.reset_parameters()
        >>> layer.weight.tolist() == first
        True
        """
        # torch's: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)) up to rounding
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``input @ weight.T + bias`` for an ``input`` of shape ``(*, in_features)``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.Linear(2, 1)
        >>> layer.load_state_dict({"weight": lucid.tensor([[1.0, 2.0]]), "bias": lucid.tensor([0.5])})
        <All keys matched successfully>
        >>> layer(lucid.tensor([[1.0, 1.0]]))
        tensor([[3.5000]], grad_fn=<AddmmBackward0>)
        """
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` under torch's name for :class:`MultiheadAttention`'s ``out_proj``
    (which torch's quantization tools leave alone; to lucid it is a Linear).

    Examples
    --------
    >>> from lucid import nn
    >>> nn.MultiheadAttention(4, 2).out_proj
    NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """
