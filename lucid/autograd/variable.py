"""``lucid.autograd.Variable``: the tensor wrapper of torch before 0.4, kept for old scripts."""

from __future__ import annotations

import warnings
from typing import Any

from .._autograd import Node
from .._factory import empty
from .._tensor import Tensor

_ARGUMENTS = ("data", "requires_grad", "volatile", "_grad_fn")


class VariableMeta(type):
    """Makes every Tensor an instance of :class:`Variable`, as in torch."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a Tensor, as torch 2.13 still accepts it.

    Since torch 0.4 a Variable is a Tensor: the call returns a new Tensor on ``data``'s
    storage (its version counter shared, as ``detach()``), outside any graph, requiring grad
    as asked; ``.data`` and ``.grad`` are the Tensor's. ``isinstance(t, Variable)`` holds for
    every Tensor.

    Parameters
    ----------
    data : Tensor, optional
        Empty (shape ``(0,)``) if omitted.
    requires_grad : bool, default False
    volatile : bool, default False
        Removed in torch 0.4: True only warns (use :class:`lucid.no_grad`).

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Variable
    >>> x = Variable(lucid.tensor([1.0, 2.0]), requires_grad=True)
    >>> type(x).__name__, x.requires_grad, isinstance(x, Variable)
    ('Tensor', True, True)
    >>> (x * x).sum().backward()
    >>> x.grad.data.tolist()
    [2.0, 4.0]
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[misc]
        if len(args) > len(_ARGUMENTS):
            raise TypeError(f"Variable() takes at most {len(_ARGUMENTS)} arguments ({len(args)} given)")
        values = dict(zip(_ARGUMENTS, args))
        for name, value in kwargs.items():
            if name not in _ARGUMENTS:
                raise TypeError(f"'{name}' is an invalid keyword argument for this function")
            if name in values:
                raise TypeError(f"argument '{name}' given by name and position")
            values[name] = value
        data = values.get("data", None)
        if "data" not in values:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        grad_fn = values.get("_grad_fn")
        if grad_fn is not None:
            if not isinstance(grad_fn, Node):
                raise TypeError(f"_grad_fn has to be a Function object or None, but got {type(grad_fn).__name__}")
            raise NotImplementedError("Variable(_grad_fn=...) is not supported: a lucid tensor gets its grad_fn "
                                      "from the op that makes it")
        if values.get("volatile"):
            warnings.warn("volatile was removed and now has no effect. Use `with lucid.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        return data.detach().requires_grad_(bool(values.get("requires_grad", False)))
