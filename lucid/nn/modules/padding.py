"""The padding layers, torch.nn's ``*Pad1d`` and ``*Pad2d``: each is :func:`lucid.nn.functional.pad`
with its mode and its widths, kept as torch keeps them (an int is every side's width)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import functional as F
from ..._tensor import Tensor
from ..module import Module


class _PadNd(Module):
    """What the padding layers share: ``sides`` widths (2 for 1-D, 4 for 2-D), one ``mode``."""

    mode = "constant"
    sides = 2

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = (padding,) * self.sides if isinstance(padding, int) else tuple(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its reflection (the edge not repeated).

    Parameters
    ----------
    padding : int or (int, int)
        The widths ``(left, right)``; an int is both.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ReflectionPad1d(2)(lucid.tensor([[[1.0, 2.0, 3.0]]])).tolist()
    [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]]
    """

    mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their reflection.

    Parameters
    ----------
    padding : int or (int, int, int, int)
        The widths ``(left, right, top, bottom)``; an int is all four.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pad = nn.ReflectionPad2d((1, 0, 0, 1))
    >>> pad
    ReflectionPad2d((1, 0, 0, 1))
    >>> pad(lucid.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])).tolist()
    [[[[2.0, 1.0, 2.0], [4.0, 3.0, 4.0], [2.0, 1.0, 2.0]]]]
    """

    mode, sides = "reflect", 4


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge values.

    Parameters
    ----------
    padding : int or (int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ReplicationPad1d((1, 2))(lucid.tensor([[[1.0, 2.0]]])).tolist()
    [[[1.0, 1.0, 2.0, 2.0, 2.0]]]
    """

    mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edge values.

    Parameters
    ----------
    padding : int or (int, int, int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ReplicationPad2d(1)(lucid.tensor([[[[5.0]]]])).tolist()
    [[[[5.0, 5.0, 5.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]]]
    """

    mode, sides = "replicate", 4


class CircularPad1d(_PadNd):
    """Pad the last dimension with its values wrapped around.

    Parameters
    ----------
    padding : int or (int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.CircularPad1d(1)(lucid.tensor([[[1.0, 2.0, 3.0]]])).tolist()
    [[[3.0, 1.0, 2.0, 3.0, 1.0]]]
    """

    mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dimensions with their values wrapped around.

    Parameters
    ----------
    padding : int or (int, int, int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.CircularPad2d((1, 0, 0, 0))(lucid.tensor([[[[1.0, 2.0]]]])).tolist()
    [[[[2.0, 1.0, 2.0]]]]
    """

    mode, sides = "circular", 4


class _ConstantPadNd(_PadNd):
    """The constant padding layers: ``value`` beside the widths."""

    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``.

    Parameters
    ----------
    padding : int or (int, int)
    value : float

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pad = nn.ConstantPad1d((0, 1), 3.5)
    >>> pad
    ConstantPad1d(padding=(0, 1), value=3.5)
    >>> pad(lucid.tensor([[1.0]])).tolist()
    [[1.0, 3.5]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with ``value``.

    Parameters
    ----------
    padding : int or (int, int, int, int)
    value : float

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ConstantPad2d((0, 0, 1, 0), -1.0)(lucid.tensor([[[2.0]]])).tolist()
    [[[-1.0], [2.0]]]
    """

    sides = 4


def _zeros(self: _ConstantPadNd, padding: int | Sequence[int]) -> None:
    """A zero padding layer's ``__init__``: its constant layer's, with 0."""
    _ConstantPadNd.__init__(self, padding, 0.0)


class ZeroPad1d(ConstantPad1d):
    """Pad the last dimension with zeros.

    Parameters
    ----------
    padding : int or (int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> pad = nn.ZeroPad1d(1)
    >>> pad
    ZeroPad1d((1, 1))
    >>> pad(lucid.tensor([[7.0]])).tolist()
    [[0.0, 7.0, 0.0]]
    """

    __init__, extra_repr = _zeros, _PadNd.extra_repr


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dimensions with zeros.

    Parameters
    ----------
    padding : int or (int, int, int, int)

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.ZeroPad2d((1, 0, 0, 0))(lucid.tensor([[[7.0]]])).tolist()
    [[[0.0, 7.0]]]
    """

    __init__, extra_repr = _zeros, _PadNd.extra_repr
