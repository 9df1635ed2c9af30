"""Sorting along a dimension: sort, argsort, topk.

The order is the backend's stable argsort; the values are a :func:`~lucid._ops.scatter.gather`
of the input by it, so their gradient goes back to the elements they came from.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

from .. import _dtype
from .._autograd import renamed
from .._tensor import Tensor
from .dims import axes as _axes
from .scatter import gather
from .shape import narrow

class SortResult(NamedTuple):
    """What :func:`sort` returns; its repr names the op, as torch.return_types.sort's."""

    values: Tensor
    indices: Tensor


class TopkResult(NamedTuple):
    """What :func:`topk` returns; its repr names the op, as torch.return_types.topk's."""

    values: Tensor
    indices: Tensor


SortResult.__name__, TopkResult.__name__ = "sort", "topk"


def _order(input, dim, descending):
    (axis,) = _axes(input, dim)
    backend = input._backend
    if input.ndim == 0:
        return axis, input._like(backend.zeros((), _dtype.int64))
    return axis, input._like(backend.argsort(input._data, axis, descending))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim``, as int64.

    The sort is always stable here (equal elements keep their order), so ``stable`` only
    documents intent; nan counts as the largest value, as in torch.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([3.0, 1.0, 2.0, 1.0]).argsort()
    tensor([1, 3, 2, 0])
    >>> lucid.argsort(lucid.tensor([3.0, 1.0, 2.0, 1.0]), descending=True)
    tensor([0, 2, 1, 3])
    """
    return _order(input, dim, descending)[1]


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """``(values, indices)``: ``input`` sorted along ``dim``, and where each value came from.

    Stable (see :func:`argsort`). The values carry the gradient back to the positions the
    indices name.

    Examples
    --------
    >>> import lucid
    >>> values, indices = lucid.tensor([[3.0, 1.0, 2.0]]).sort(descending=True)
    >>> values, indices
    (tensor([[3., 2., 1.]]), tensor([[0, 2, 1]]))
    """
    if input.ndim == 0:
        _axes(input, dim)
        return SortResult(input.clone(), _order(input, dim, descending)[1])
    _, indices = _order(input, dim, descending)
    return SortResult(renamed(gather(input, dim, indices), "SortBackward0"), indices)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices.

    Parameters
    ----------
    input : Tensor
    k : int
        How many; at most the size of ``dim``.
    dim : int, default -1
    largest : bool, default True
        The largest elements, in descending order; the smallest, ascending, if False.
    sorted : bool, default True
        The result is always sorted here.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1.0, 5.0, 3.0, 4.0]).topk(2)
    topk(values=tensor([5., 4.]), indices=tensor([1, 3]))
    """
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    (axis,) = _axes(input, dim)
    size = input.shape[axis] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range: k={k} for a dimension of size {size}")
    values, indices = sort(input, dim, descending=largest)
    if input.ndim == 0:
        return TopkResult(values, indices)
    return TopkResult(renamed(narrow(values, axis, 0, k), "TopkBackward0"), narrow(indices, axis, 0, k))
