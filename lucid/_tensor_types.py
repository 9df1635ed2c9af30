"""torch's legacy tensor types: ``lucid.FloatTensor(2, 3)``, ``isinstance(x, lucid.LongTensor)``."""

from __future__ import annotations

import numbers
from typing import Any

from . import _dtype
from ._factory import tensor, zeros
from ._tensor import Tensor


class _TensorType(type):
    """The metaclass: calling a type makes a tensor of its dtype; ``isinstance`` checks the dtype."""

    dtype: _dtype.dtype  # each type's, set by _make

    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, Tensor) and value.dtype is cls.dtype and value.device == "cpu"

    def __call__(cls, *args: Any, device: str = "cpu") -> Tensor:
        if not args:
            return zeros(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return zeros(*args, dtype=cls.dtype, device=device)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(device, cls.dtype)
            return tensor(data, dtype=cls.dtype, device=device)
        raise TypeError(f"{cls.__name__}() takes sizes (ints) or one sequence of data, got {args!r}")

    def __repr__(cls) -> str:
        return f"<class 'lucid.{cls.__name__}'>"


def _make(name: str, dtype: _dtype.dtype, example: str) -> _TensorType:
    doc = f"""Tensors of dtype ``{dtype!r}`` on the cpu, as torch's ``{name}``.

    ``{name}(2, 3)`` is a new ``(2, 3)`` tensor (of zeros: see :func:`lucid.empty`),
    ``{name}(data)`` one holding ``data`` converted to this dtype, and
    ``isinstance(x, lucid.{name})`` says whether ``x`` is a cpu tensor of this dtype.
    ``Tensor.type(lucid.{name})`` converts to it.

    Examples
    --------
    >>> import lucid
    {example}
    """
    return _TensorType(name, (), {"dtype": dtype, "__doc__": doc, "__module__": "lucid"})


FloatTensor = _make("FloatTensor", _dtype.float32, """>>> lucid.FloatTensor([1, 2])
    tensor([1., 2.])
    >>> isinstance(lucid.zeros(2), lucid.FloatTensor), lucid.FloatTensor(2, 3).shape
    (True, (2, 3))""")
DoubleTensor = _make("DoubleTensor", _dtype.float64, """>>> lucid.DoubleTensor([0.5]).dtype
    lucid.float64""")
HalfTensor = _make("HalfTensor", _dtype.float16, """>>> lucid.HalfTensor(2).dtype
    lucid.float16""")
LongTensor = _make("LongTensor", _dtype.int64, """>>> lucid.LongTensor([1.5, 2.0])
    tensor([1, 2])
    >>> isinstance(lucid.tensor([1]), lucid.LongTensor)
    True""")
IntTensor = _make("IntTensor", _dtype.int32, """>>> lucid.IntTensor([3]).dtype
    lucid.int32""")
BoolTensor = _make("BoolTensor", _dtype.bool_, """>>> lucid.BoolTensor([1, 0])
    tensor([ True, False])""")

TYPES = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, BoolTensor)
BY_DTYPE = {t.dtype: t for t in TYPES}


def type_name(t: Tensor) -> str:
    """torch's ``Tensor.type()`` string: ``"lucid.FloatTensor"``, ``"lucid.gpu.FloatTensor"`` on the gpu."""
    prefix = "lucid." if t.device == "cpu" else "lucid.gpu."
    return prefix + BY_DTYPE[t.dtype].__name__


def dtype_of_type(name) -> _dtype.dtype:
    """The dtype a ``Tensor.type(...)`` argument names: a dtype, a tensor type, or its name
    (``"lucid.LongTensor"``, or torch's ``"torch.LongTensor"``)."""
    if isinstance(name, _dtype.dtype):
        return name
    if isinstance(name, _TensorType):
        return name.dtype
    if isinstance(name, str):
        short = name.rsplit(".", 1)[-1]
        for t in TYPES:
            if short == t.__name__ and name in (f"lucid.{short}", f"torch.{short}", short):
                return t.dtype
        raise ValueError(f"invalid type: '{name}'")
    raise TypeError(f"type() expects a dtype, a tensor type or its name, got {name!r}")
