"""The ops as Tensor methods and operators (``x + y``, ``x.sum(dim=1)``, ``x[idx]``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from .. import _dtype, _factory, _tensor_types
from .._tensor import Tensor
from . import elementwise as ew
from . import indexing, linalg, reduction, scatter, shape, sorting
from . import inplace_math, inplace_shape, predicates, sampling, scaled


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


def _T(self: Tensor) -> Tensor:
    """The dimensions in reverse order (the transpose of a matrix).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).T.shape
    (3, 2)
    """
    return shape.permute(self, tuple(reversed(range(self.ndim))))


def _eq(self: Tensor, other: Tensor | float) -> Tensor:
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


def _ne(self: Tensor, other: Tensor | float) -> Tensor:
    """``self != other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).ne(2)
    tensor([ True, False])
    """
    return ew.compare("not_equal", self, other)


def _lt(self: Tensor, other: Tensor | float) -> Tensor:
    """``self < other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).lt(2)
    tensor([ True, False])
    """
    return ew.compare("less", self, other)


def _le(self: Tensor, other: Tensor | float) -> Tensor:
    """``self <= other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).le(1)
    tensor([ True, False])
    """
    return ew.compare("less_equal", self, other)


def _gt(self: Tensor, other: Tensor | float) -> Tensor:
    """``self > other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).gt(1)
    tensor([False,  True])
    """
    return ew.compare("greater", self, other)


def _ge(self: Tensor, other: Tensor | float) -> Tensor:
    """``self >= other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).ge(2)
    tensor([False,  True])
    """
    return ew.compare("greater_equal", self, other)


def _invert(self: Tensor) -> Tensor:
    """``~self``: each bit inverted, the logical not of a bool tensor (torch's TypeError for floats).

    Examples
    --------
    >>> import lucid
    >>> (~lucid.tensor([5, -1])).tolist(), (~lucid.tensor([True, False])).tolist()
    ([-6, 0], [False, True])
    """
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return ew.bitwise_not(self)


def _logical_and(self: Tensor, other: Tensor | float) -> Tensor:
    """``self and other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([True, True]).logical_and(lucid.tensor([True, False]))
    tensor([ True, False])
    """
    return ew.logical("logical_and", self, other)


def _logical_or(self: Tensor, other: Tensor | float) -> Tensor:
    """``self or other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([False, True]).logical_or(lucid.tensor([False, False]))
    tensor([False,  True])
    """
    return ew.logical("logical_or", self, other)


def _masked_fill_(self: Tensor, mask: Tensor, value: Tensor | float) -> Tensor:
    """In place :meth:`masked_fill`: the result written into this tensor.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3)
    >>> _ = x.masked_fill_(lucid.tensor([True, False, True]), 1.0)
    >>> x
    tensor([[1., 0., 1.],
            [1., 0., 1.]])
    """
    return self.copy_(scatter.masked_fill(self, mask, value))


def _scatter_(self: Tensor, dim: int, index: Tensor, src: Tensor | float | None = None, *,
              value: Tensor | float | None = None, reduce: str | None = None) -> Tensor:
    """In place :meth:`scatter`: the result written into this tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).scatter_(1, lucid.tensor([[2], [0]]), 5.0)
    tensor([[0., 0., 5.],
            [5., 0., 0.]])
    """
    return self.copy_(scatter.scatter(self, dim, index, src, value=value, reduce=reduce))


def _scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In place :meth:`scatter_add`: the result written into this tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).scatter_add_(0, lucid.tensor([[1, 1, 0]]), lucid.ones(1, 3))
    tensor([[0., 0., 1.],
            [1., 1., 0.]])
    """
    return self.copy_(scatter.scatter_add(self, dim, index, src))


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1) -> Tensor:
    """In place :meth:`index_add`: the result written into this tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).index_add_(1, lucid.tensor([2, 2]), lucid.ones(2, 2))
    tensor([[0., 0., 2.],
            [0., 0., 2.]])
    """
    return self.copy_(scatter.index_add(self, dim, index, source, alpha=alpha))


def _like_self(self, dtype, device):
    return {"dtype": self.dtype if dtype is None else dtype, "device": self.device if device is None else device}


def _new_zeros(self: Tensor, *size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """Zeros of shape ``size`` with this tensor's dtype and device (unless told otherwise).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1.0], dtype=lucid.float64).new_zeros(2, 3).dtype
    lucid.float64
    """
    return _factory.zeros(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def _new_ones(self: Tensor, *size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str | None = None,
              requires_grad: bool = False) -> Tensor:
    """Ones of shape ``size`` with this tensor's dtype and device (see :meth:`new_zeros`).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).new_ones((2,))
    tensor([1, 1])
    """
    return _factory.ones(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def _new_empty(self: Tensor, *size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` to be overwritten, with this tensor's dtype and device (zeros: see :func:`lucid.empty`).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(1).new_empty(3).shape
    (3,)
    """
    return _factory.empty(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def _new_full(self: Tensor, size: int | Sequence[int], fill_value: float, *, dtype: _dtype.dtype | None = None,
              device: str | None = None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``, with this tensor's dtype and device.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(1).new_full((2,), 3)
    tensor([3., 3.])
    """
    return _factory.full(size, fill_value, requires_grad=requires_grad, **_like_self(self, dtype, device))


def _new_tensor(self: Tensor, data: object, dtype: _dtype.dtype | None = None, device: str | None = None,
                requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``, with this tensor's dtype and device unless told otherwise.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(1, dtype=lucid.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=lucid.float64)
    """
    if isinstance(data, Tensor):
        data = data.detach()
    return _factory.tensor(data, requires_grad=requires_grad, **_like_self(self, dtype, device))


@overload
def _type(self: Tensor, dtype: None = None, non_blocking: bool = False, **kwargs: object) -> str: ...
@overload
def _type(self: Tensor, dtype: _dtype.dtype | type | str, non_blocking: bool = False, **kwargs: object) -> Tensor: ...
def _type(self: Tensor, dtype: _dtype.dtype | type | str | None = None, non_blocking: bool = False,
          **kwargs: object) -> str | Tensor:
    """Without an argument, the type's name (``"lucid.FloatTensor"``); with one, this tensor
    converted to it (a dtype, a tensor type such as ``lucid.LongTensor``, or its name, which
    may be torch's ``"torch.LongTensor"``).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([1.5, 2.5])
    >>> x.type()
    'lucid.FloatTensor'
    >>> x.type(lucid.int64), x.type("torch.DoubleTensor").dtype
    (tensor([1, 2]), lucid.float64)
    """
    if dtype is None:
        return _tensor_types.type_name(self)
    return self.to(_tensor_types.dtype_of_type(dtype))


METHODS = {
    "__add__": ew.add, "__radd__": lambda s, o: ew.add(o, s),
    "__sub__": ew.sub, "__rsub__": lambda s, o: ew.sub(o, s),
    "__mul__": ew.mul, "__rmul__": lambda s, o: ew.mul(o, s),
    "__truediv__": ew.div, "__rtruediv__": lambda s, o: ew.div(o, s),
    "__pow__": ew.pow, "__rpow__": lambda s, o: ew.pow(o, s),
    "__matmul__": ew.matmul, "__rmatmul__": lambda s, o: ew.matmul(o, s),
    "__mod__": ew.remainder, "__rmod__": lambda s, o: ew.remainder(o, s),
    "__floordiv__": ew.floor_divide, "__rfloordiv__": lambda s, o: ew.floor_divide(o, s),
    "__neg__": ew.neg, "__abs__": ew.abs,
    "__eq__": lambda s, o: ew.compare("equal", s, o),
    "__ne__": lambda s, o: ew.compare("not_equal", s, o),
    "__lt__": lambda s, o: ew.compare("less", s, o),
    "__le__": lambda s, o: ew.compare("less_equal", s, o),
    "__gt__": lambda s, o: ew.compare("greater", s, o),
    "__ge__": lambda s, o: ew.compare("greater_equal", s, o),
    # torch's operators are bitwise (logical on bool tensors, which bitwise ops keep bool)
    "__invert__": _invert,
    "__and__": ew.bitwise_and, "__rand__": lambda s, o: ew.bitwise_and(o, s),
    "__or__": ew.bitwise_or, "__ror__": lambda s, o: ew.bitwise_or(o, s),
    "__xor__": ew.bitwise_xor, "__rxor__": lambda s, o: ew.bitwise_xor(o, s),
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
    "add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.pow, "matmul": ew.matmul,
    "neg": ew.neg, "exp": ew.exp, "log": ew.log, "sqrt": ew.sqrt, "abs": ew.abs, "sign": ew.sign,
    "log1p": ew.log1p, "expm1": ew.expm1, "erf": ew.erf, "tanh": ew.tanh, "sigmoid": ew.sigmoid, "relu": ew.relu, "clamp": ew.clamp, "clip": ew.clamp,
    "isfinite": ew.isfinite, "logical_not": ew.logical_not,
    "eq": _eq,
    "sum": reduction.sum, "mean": reduction.mean, "max": reduction.max, "min": reduction.min,
    "any": reduction.any, "all": reduction.all, "log_softmax": reduction.log_softmax,
    "reshape": shape.reshape, "view": shape.reshape, "permute": shape.permute,
    "transpose": shape.transpose, "unsqueeze": shape.unsqueeze, "squeeze": shape.squeeze,
    "flatten": shape.flatten,
    # the wider torch surface
    "remainder": ew.remainder, "floor_divide": ew.floor_divide, "floor": ew.floor, "ceil": ew.ceil,
    "round": ew.round,
    "sin": ew.sin, "cos": ew.cos, "erf": ew.erf, "maximum": ew.maximum, "minimum": ew.minimum, "tril": ew.tril, "triu": ew.triu,
    "softmax": reduction.softmax, "logsumexp": reduction.logsumexp, "cumsum": reduction.cumsum,
    "argmax": reduction.argmax, "argmin": reduction.argmin, "var": reduction.var, "std": reduction.std,
    "t": shape.t, "narrow": shape.narrow, "split": shape.split, "chunk": shape.chunk,
    "contiguous": shape.contiguous, "view_as": shape.view_as, "expand": shape.expand,
    "expand_as": shape.expand_as, "repeat": shape.repeat,
    "mm": linalg.mm, "bmm": linalg.bmm, "norm": linalg.norm,
    "gather": scatter.gather, "scatter": scatter.scatter, "scatter_add": scatter.scatter_add,
    "index_select": scatter.index_select, "index_add": scatter.index_add, "masked_fill": scatter.masked_fill,
    "sort": sorting.sort, "argsort": sorting.argsort, "topk": sorting.topk,
    "new_zeros": _new_zeros, "new_ones": _new_ones, "new_empty": _new_empty, "new_full": _new_full,
    "new_tensor": _new_tensor, "type": _type, "flip": shape.flip, "unbind": shape.unbind,
    "logical_and": _logical_and, "logical_or": _logical_or,
    "ne": _ne, "lt": _lt, "le": _le, "gt": _gt, "ge": _ge,
    "masked_fill_": _masked_fill_, "scatter_": _scatter_, "scatter_add_": _scatter_add_, "index_add_": _index_add_,
    "index_copy_": scatter.index_copy_, "nonzero_rows": scatter.nonzero_rows,
}

def _logical_xor(self: Tensor, other: Tensor | float) -> Tensor:
    """``self xor other`` elementwise, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([True, True]).logical_xor(lucid.tensor([True, False])).tolist()
    [False, True]
    """
    return ew.logical("logical_xor", self, other)


def _where(self: Tensor, condition: Tensor, y: Tensor | float) -> Tensor:
    """``self`` where ``condition`` holds, ``y`` elsewhere: :func:`lucid.where` with ``self`` second.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([-1.0, 2.0])
    >>> x.where(x > 0, 0.0).tolist()
    [0.0, 2.0]
    """
    return ew.where(condition, self, y)


# issue 24, the names real scripts use: torch's deprecated scalar-first overloads, torch's
# aliases, the in-place shape methods, roll and sampling
METHODS.update({
    "add": scaled.as_method(scaled.add), "sub": scaled.as_method(scaled.sub),
    "addcmul": scaled.as_method(scaled.addcmul), "addcdiv": scaled.as_method(scaled.addcdiv),
    "multiply": ew.mul, "multiply_": Tensor.mul_, "subtract": scaled.sub, "subtract_": Tensor.sub_,
    "divide": ew.div, "divide_": Tensor.div_, "true_divide": ew.div, "true_divide_": Tensor.div_,
    "absolute": ew.abs, "absolute_": Tensor.abs_, "negative": ew.neg, "negative_": Tensor.neg_,
    "clip_": Tensor.clamp_, "logical_xor": _logical_xor,
    "greater": _gt, "greater_equal": _ge, "less": _lt, "less_equal": _le, "not_equal": _ne,
    "swapdims": shape.transpose, "swapaxes": shape.transpose, "ndimension": Tensor.dim, "nelement": Tensor.numel,
    "unsqueeze_": inplace_shape.unsqueeze_, "squeeze_": inplace_shape.squeeze_, "t_": inplace_shape.t_,
    "transpose_": inplace_shape.transpose_, "swapdims_": inplace_shape.transpose_,
    "swapaxes_": inplace_shape.transpose_,
    "roll": shape.roll, "multinomial": sampling.multinomial, "bernoulli": sampling.bernoulli,
    "bernoulli_": sampling.bernoulli_, "random_": sampling.random_,
    "tan": ew.tan, "asin": ew.asin, "acos": ew.acos, "atan": ew.atan, "arcsin": ew.asin, "arccos": ew.acos,
    "arctan": ew.atan, "rsqrt": ew.rsqrt, "prod": reduction.prod, "select": shape.select, "diag": shape.diag,
    "outer": linalg.outer, "ger": linalg.outer, "unique": sorting.unique, "where": _where,
    "cross": linalg.cross, "bitwise_and": ew.bitwise_and, "bitwise_or": ew.bitwise_or,
    "bitwise_xor": ew.bitwise_xor, "bitwise_not": ew.bitwise_not,
    "log10": ew.log10, "log2": ew.log2, "square": ew.square, "reciprocal": ew.reciprocal, "isnan": ew.isnan,
    "isinf": ew.isinf, "clamp_min": ew.clamp_min, "clamp_max": ew.clamp_max, "dot": linalg.dot,
    "movedim": shape.movedim, "moveaxis": shape.movedim, "masked_select": scatter.masked_select,
    "nonzero": scatter.nonzero, "exponential_": sampling.exponential_, "isclose": predicates.isclose,
    "allclose": predicates.allclose, "equal": predicates.equal,
    **inplace_math.IN_PLACE,
})

for _name, _fn in METHODS.items():
    binary = _name.startswith("__") and _name not in (
        "__neg__", "__abs__", "__invert__", "__getitem__", "__setitem__")
    setattr(Tensor, _name, _operator(_fn) if binary else _fn)
setattr(Tensor, "T", property(_T))  # declared for type checkers in Tensor's body
