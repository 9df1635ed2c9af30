"""Questions about tensors answered with a bool or a bool tensor: ``is_tensor``, ``numel``,
``isclose``, ``allclose``, ``equal``."""

from __future__ import annotations

from .. import _dtype
from .._tensor import Tensor
from . import elementwise as ew
from . import reduction


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is a :class:`lucid.Tensor`.

    Examples
    --------
    >>> import lucid
    >>> lucid.is_tensor(lucid.zeros(1)), lucid.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    Examples
    --------
    >>> import lucid
    >>> lucid.numel(lucid.zeros(2, 3))
    6
    """
    return input.numel()


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal to
    themselves; nan to nan only with ``equal_nan``), as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.isclose(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0 + 1e-6, 2.1])).tolist()
    [True, False]
    """
    if isinstance(other, Tensor) and input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype.scalar_type(input.dtype)} did not match {_dtype.scalar_type(other.dtype)}")
    if not input.dtype.is_floating_point:
        input, other = input.to(_dtype.float64), other.to(_dtype.float64)
    a, b = input.detach(), other.detach()
    close = ew.compare("less_equal", ew.abs(a - b), ew.abs(b) * rtol + atol)
    close = ew.logical("logical_or", close, ew.compare("equal", a, b))  # the infinities
    if equal_nan:
        close = ew.logical("logical_or", close, ew.logical("logical_and", ew.isnan(a), ew.isnan(b)))
    return close


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other``'s (:func:`isclose`, broadcast).

    Examples
    --------
    >>> import lucid
    >>> lucid.allclose(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(reduction.all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape and the same elements.

    Examples
    --------
    >>> import lucid
    >>> lucid.equal(lucid.tensor([1, 2]), lucid.tensor([1, 2])), lucid.equal(lucid.zeros(2), lucid.zeros(3))
    (True, False)
    """
    if input.shape != other.shape:
        return False
    return bool(reduction.all(ew.compare("equal", input, other)).item())
