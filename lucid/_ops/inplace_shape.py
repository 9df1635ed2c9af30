"""The in-place shape methods (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``,
``swapdims_``/``swapaxes_``): the tensor itself takes the new shape, as in torch.

Each is its out-of-place view made the tensor's own (``Tensor._become_view``): a leaf that
requires grad is refused while gradients are on, a non-leaf's ``grad_fn`` becomes the
view's, and the version counter of the storage goes up by one.

Known limit, on the gpu (MLX) only: a view taken of a tensor *before* that tensor's in-place
shape change (``v = x[0]; x.unsqueeze_(0)``) is re-derived from the new shape afterwards and
no longer shows the same elements; on the cpu (NumPy) it does, as in torch. A view taken
after the change is right on both.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._autograd import renamed
from .._tensor import Tensor
from . import shape


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In place :meth:`unsqueeze`: a new dimension of size 1 at ``dim``.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3)
    >>> x.unsqueeze_(0) is x, x.shape
    (True, (1, 2, 3))
    """
    return self._become_view(lambda t: renamed(shape.unsqueeze(t, dim), "UnsqueezeBackward1"))


def squeeze_(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """In place :meth:`squeeze`: the dimensions of size 1 removed (only those in ``dim``, if given).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(1, 2, 1)
    >>> x.squeeze_(0).shape, x.squeeze_().shape
    ((2, 1), (2,))
    """
    # torch's in-place overloads: squeeze_(), squeeze_(int), squeeze_(dims)
    overload = 3 if dim is None else 4 if isinstance(dim, int) else 5
    return self._become_view(lambda t: renamed(shape.squeeze(t, dim), f"SqueezeBackward{overload}"))


def t_(self: Tensor) -> Tensor:
    """In place :meth:`t`: a matrix transposed (a vector or a 0-d tensor keeps its shape).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1, 2, 3]])
    >>> x.t_().tolist()
    [[1], [2], [3]]
    """
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self._become_view(lambda t: renamed(shape.t(t), "TBackward1") if t.ndim == 2 else t)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In place :meth:`transpose`: dimensions ``dim0`` and ``dim1`` swapped (also ``swapdims_``, ``swapaxes_``).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3, 4)
    >>> x.transpose_(0, 2).shape, x.swapdims_(0, 1).shape
    ((4, 3, 2), (3, 4, 2))
    """
    return self._become_view(lambda t: renamed(shape.transpose(t, dim0, dim1), "TransposeBackward1"))
