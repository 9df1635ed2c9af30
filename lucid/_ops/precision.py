"""Composite ops at the working precision of their backend.

A composite op (a normalisation, a loss) is a chain of ops, each rounding its result; where
the backend evaluates formulas of a dtype in a wider one (float64 for float32 on NumPy, see
:meth:`~lucid._backend.base.Backend.working_dtype`), the whole chain runs in the wider dtype
and its result is rounded once, and so is its gradient on the way back.
"""

from __future__ import annotations

import functools
from typing import Callable, ParamSpec, TypeVar

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor

P = ParamSpec("P")
R = TypeVar("R")


def widen(t):
    """A floating tensor at its backend's working dtype (anything else as it is).

    >>> import lucid
    >>> from lucid._ops.precision import widen
    >>> widen(lucid.tensor([1.0])).dtype, widen(lucid.tensor([1])).dtype
    (lucid.float64, lucid.int64)
    """
    if not isinstance(t, Tensor) or not t.dtype.is_floating_point:
        return t
    work = t._backend.working_dtype(t.dtype)
    return t if work is t.dtype else t.to(work)


def widened(*tensors, name: str | None):
    """``(tensors, narrow)``: each floating tensor at its backend's working dtype (None and
    other tensors as they are), and ``narrow``, which rounds a result back to the dtype the
    op would have had without the widening (the floating tensors' promoted dtype), as one
    autograd node called ``name`` on every device (None: the name of the result's own node,
    for an op that torch composes of others).

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.precision import widened
    >>> x = lucid.tensor([1.0], requires_grad=True)
    >>> (wide, three), narrow = widened(x, lucid.tensor([3.0]), name="DivideBackward")
    >>> wide.dtype  # NumPy evaluates float32 formulas in float64
    lucid.float64
    >>> narrow(wide / three)
    tensor([0.3333], grad_fn=<DivideBackward>)
    """
    floating = [t for t in tensors if isinstance(t, Tensor) and t.dtype.is_floating_point]
    target = _dtype.result_type(*floating) if floating else None

    def narrow(result: Tensor) -> Tensor:
        backend = result._backend
        data = result._data if target is None or result.dtype is target else backend.astype(result._data, target)
        # the engine casts the gradient to the widened result's dtype on its way back; a
        # composite op without a node of its own in torch shows its last step's name
        node = name or (result.grad_fn.name if result.grad_fn is not None else "ToCopyBackward0")
        return record(result._like(data), node, (result,), lambda g: (g,))

    return tuple(widen(t) for t in tensors), narrow


def in_working_precision(name: str | None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the composite op it wraps runs with its floating tensor arguments widened
    and its result narrowed, as the autograd node ``name`` (see :func:`widened`).

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.precision import in_working_precision
    >>> @in_working_precision("MeanSquareBackward")
    ... def mean_square(x):
    ...     return (x * x).mean()
    >>> mean_square(lucid.tensor([1.0, 2.0], requires_grad=True))
    tensor(2.5000, grad_fn=<MeanSquareBackward>)
    """
    def decorate(op: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(op)
        def run(*args, **kwargs):
            names = list(kwargs)
            tensors, narrow = widened(*args, *kwargs.values(), name=name)
            return narrow(op(*tensors[:len(args)], **dict(zip(names, tensors[len(args):]))))

        return run

    return decorate
