"""The ops with a scalar factor, ``add``/``sub`` (``alpha``) and ``addcmul``/``addcdiv``
(``value``), accepting torch's deprecated order with the scalar first
(``torch.add(x, 2, y)``, ``x.addcmul(0.5, t1, t2)``) with its warning."""

from __future__ import annotations

import functools
import numbers
from typing import Any

from .. import _deprecation
from .._autograd import renamed
from .._tensor import Tensor
from . import elementwise as ew

_TENSORS = {"add": "Tensor other", "sub": "Tensor other",
            "addcmul": "Tensor tensor1, Tensor tensor2", "addcdiv": "Tensor tensor1, Tensor tensor2"}
_SCALAR = {"add": "alpha", "sub": "alpha", "addcmul": "value", "addcdiv": "value"}


def _scalar_first(name: str, args: tuple, function: bool) -> tuple[tuple, Any] | None:
    """``(tensors, scalar)`` when ``args`` are in torch's deprecated order ``(scalar, *tensors)``
    (warning once, as torch), else None."""
    count = _TENSORS[name].count("Tensor")
    if len(args) == count + 1 and isinstance(args[0], numbers.Number) and all(isinstance(t, Tensor) for t in args[1:]):
        _deprecation.scalar_first(name, _SCALAR[name], _TENSORS[name], function)
        return args[1:], args[0]
    if len(args) != count:
        raise TypeError(f"{name}() received an invalid combination of arguments: {len(args)} after the input")
    return None


def add(input: Tensor | float, other: Tensor | float, *deprecated: Tensor, alpha: float = 1) -> Tensor:
    """``input + alpha * other`` with broadcasting and torch's type promotion.

    Notes
    -----
    torch's deprecated ``add(input, alpha, other)`` is accepted, with torch's warning.

    Examples
    --------
    >>> import lucid
    >>> lucid.add(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 1.0]), alpha=-2).tolist()
    [-1.0, 0.0]
    """
    old = _scalar_first("add", (other, *deprecated), True) if deprecated else None
    if old:
        (other,), alpha = old
    return ew.add(input, other, alpha=alpha)


def sub(input: Tensor | float, other: Tensor | float, *deprecated: Tensor, alpha: float = 1) -> Tensor:
    """``input - alpha * other`` with broadcasting and torch's type promotion (also ``subtract``).

    Notes
    -----
    torch's deprecated ``sub(input, alpha, other)`` is accepted, with torch's warning.

    Examples
    --------
    >>> import lucid
    >>> lucid.sub(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 1.0]), alpha=2).tolist()
    [-1.0, 0.0]
    """
    old = _scalar_first("sub", (other, *deprecated), True) if deprecated else None
    if old:
        (other,), alpha = old
    return ew.sub(input, other, alpha=alpha)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *deprecated: Tensor, value: float = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, in torch's order, with broadcasting and gradients.

    Notes
    -----
    torch's deprecated ``addcmul(input, value, tensor1, tensor2)`` is accepted, with its warning.

    Examples
    --------
    >>> import lucid
    >>> lucid.addcmul(lucid.ones(2), lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 5.0]), value=0.5).tolist()
    [5.0, 8.5]
    """
    old = _scalar_first("addcmul", (tensor1, tensor2, *deprecated), True) if deprecated else None
    if old:
        (tensor1, tensor2), value = old
    product = ew.mul(ew.mul(tensor1, value), tensor2) if value != 1 else ew.mul(tensor1, tensor2)
    return renamed(ew.add(input, product), "AddcmulBackward0")


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *deprecated: Tensor, value: float = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``, in torch's order, with broadcasting and gradients.

    Notes
    -----
    torch's deprecated ``addcdiv(input, value, tensor1, tensor2)`` is accepted, with its warning.

    Examples
    --------
    >>> import lucid
    >>> lucid.addcdiv(lucid.ones(2), lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 2.0]), value=2).tolist()
    [2.0, 4.0]
    """
    old = _scalar_first("addcdiv", (tensor1, tensor2, *deprecated), True) if deprecated else None
    if old:
        (tensor1, tensor2), value = old
    numerator = ew.mul(tensor1, value) if value != 1 else tensor1
    return renamed(ew.add(input, ew.div(numerator, tensor2)), "AddcdivBackward0")


def as_method(fn):
    """``fn`` as a Tensor method: torch's deprecated order warns with the method's signature."""

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        old = _scalar_first(fn.__name__, args, False) if args and isinstance(args[0], numbers.Number) else None
        if old:
            tensors, scalar = old
            return fn(self, *tensors, **{_SCALAR[fn.__name__]: scalar}, **kwargs)
        return fn(self, *args, **kwargs)

    return method
