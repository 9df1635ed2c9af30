"""The ops as Tensor methods and operators (``x + y``, ``x.sum(dim=1)``, ``x[idx]``)."""

from __future__ import annotations

from .._tensor import Tensor
from . import elementwise as ew
from . import indexing, reduction, shape


def _add(self, other, alpha=1):
    """``self + alpha * other``.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1.0, 2.0]).add(lucid.tensor([1.0, 1.0]), alpha=-2)
    tensor([-1.,  0.])
    """
    return ew.add(self, other if alpha == 1 else ew.mul(other, alpha))


def _sub(self, other, alpha=1):
    """``self - alpha * other``.

    Parameters
    ----------
    other : Tensor or number
        Broadcast against ``self``.
    alpha : number, default 1
        The factor on ``other``.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1.0, 2.0]).sub(lucid.tensor([1.0, 1.0]), alpha=2)
    tensor([-1.,  0.])
    """
    return ew.sub(self, other if alpha == 1 else ew.mul(other, alpha))


def _operator(fn):
    """A binary operator that lets Python try the other operand for types lucid can't use.

    So ``x == None`` is False and ``x + None`` raises Python's own TypeError, as with torch.
    """

    def method(self, other):
        if other is None or isinstance(other, (str, bytes, dict, set)):
            return NotImplemented
        return fn(self, other)

    method.__name__ = getattr(fn, "__name__", "operator")
    return method


def _T(self):
    """The dimensions in reverse order (the transpose of a matrix).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).T.shape
    (3, 2)
    """
    return shape.permute(self, tuple(reversed(range(self.ndim))))


def _eq(self, other):
    """``self == other`` elementwise, as a bool tensor.

    Parameters
    ----------
    other : Tensor or number
        Broadcast against ``self``.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).eq(2)
    tensor([False,  True])
    """
    return ew.compare("equal", self, other)


METHODS = {
    "__add__": ew.add, "__radd__": lambda s, o: ew.add(o, s),
    "__sub__": ew.sub, "__rsub__": lambda s, o: ew.sub(o, s),
    "__mul__": ew.mul, "__rmul__": lambda s, o: ew.mul(o, s),
    "__truediv__": ew.div, "__rtruediv__": lambda s, o: ew.div(o, s),
    "__pow__": ew.pow, "__rpow__": lambda s, o: ew.pow(o, s),
    "__matmul__": ew.matmul, "__rmatmul__": lambda s, o: ew.matmul(o, s),
    "__neg__": ew.neg, "__abs__": ew.abs,
    "__eq__": lambda s, o: ew.compare("equal", s, o),
    "__ne__": lambda s, o: ew.compare("not_equal", s, o),
    "__lt__": lambda s, o: ew.compare("less", s, o),
    "__le__": lambda s, o: ew.compare("less_equal", s, o),
    "__gt__": lambda s, o: ew.compare("greater", s, o),
    "__ge__": lambda s, o: ew.compare("greater_equal", s, o),
    "__invert__": ew.logical_not,
    "__and__": lambda s, o: ew.logical("logical_and", s, o),
    "__or__": lambda s, o: ew.logical("logical_or", s, o),
    "__xor__": lambda s, o: ew.logical("logical_xor", s, o),
    "__getitem__": indexing.getitem,
    "add": _add, "sub": _sub, "mul": ew.mul, "div": ew.div, "pow": ew.pow, "matmul": ew.matmul,
    "neg": ew.neg, "exp": ew.exp, "log": ew.log, "sqrt": ew.sqrt, "abs": ew.abs, "sign": ew.sign,
    "log1p": ew.log1p, "expm1": ew.expm1, "erf": ew.erf, "tanh": ew.tanh, "sigmoid": ew.sigmoid, "relu": ew.relu, "clamp": ew.clamp, "clip": ew.clamp,
    "isfinite": ew.isfinite, "logical_not": ew.logical_not,
    "eq": _eq,
    "sum": reduction.sum, "mean": reduction.mean, "max": reduction.max, "min": reduction.min,
    "any": reduction.any, "all": reduction.all, "log_softmax": reduction.log_softmax,
    "reshape": shape.reshape, "view": shape.reshape, "permute": shape.permute,
    "transpose": shape.transpose, "unsqueeze": shape.unsqueeze, "squeeze": shape.squeeze,
    "flatten": shape.flatten,
}

for _name, _fn in METHODS.items():
    binary = _name.startswith("__") and _name not in ("__neg__", "__abs__", "__invert__", "__getitem__")
    setattr(Tensor, _name, _operator(_fn) if binary else _fn)
Tensor.T = property(_T)
