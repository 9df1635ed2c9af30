"""Lucid's dtypes: names and categories only; the backends map them to arrays."""

from __future__ import annotations

import numbers


class dtype:
    """A tensor element type (``lucid.float32`` and friends).

    Examples
    --------
    >>> import lucid
    >>> lucid.float32, lucid.float32.is_floating_point, lucid.int64.itemsize
    (lucid.float32, True, 8)
    """

    __slots__ = ("name", "itemsize", "category")

    def __init__(self, name: str, itemsize: int, category: int) -> None:
        self.name = name
        self.itemsize = itemsize
        self.category = category  # 0 bool < 1 integer < 2 floating, as in torch's promotion

    @property
    def is_floating_point(self) -> bool:
        """Whether this is a floating point type (float16, float32 or float64).

        Examples
        --------
        >>> import lucid
        >>> lucid.float16.is_floating_point, lucid.int32.is_floating_point
        (True, False)
        """
        return self.category == 2

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


bool_ = dtype("bool", 1, 0)
int32 = dtype("int32", 4, 1)
int64 = dtype("int64", 8, 1)
float16 = dtype("float16", 2, 2)
float32 = dtype("float32", 4, 2)
float64 = dtype("float64", 8, 2)

ALL = (bool_, int32, int64, float16, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_ALIASES = {"half": float16, "float": float32, "double": float64, "long": int64, "int": int32}

default_float = float32
default_int = int64


def get_default_dtype() -> dtype:
    """The dtype Python floats become: ``lucid.float32``, as torch's default.

    Examples
    --------
    >>> import lucid
    >>> lucid.get_default_dtype()
    lucid.float32
    """
    return default_float


def scalar_type(dtype) -> str:
    """torch's C++ name of ``dtype`` in error messages: "Float", "Long", ..."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "bool": "Bool"}[dtype.name]


def describe(dtype, shape) -> str:
    """torch's short name for a tensor in error messages, e.g. "FloatTensor of shape [2, 3]"."""
    return f"{scalar_type(dtype)}Tensor of shape {list(shape)}"


def from_name(name: str) -> dtype:
    """The dtype called ``name`` ("float32", "double", ...)."""
    try:
        return _BY_NAME.get(name) or _ALIASES[name]
    except KeyError:
        raise TypeError(f"unknown dtype {name!r}; expected one of {sorted(_BY_NAME)}") from None


def promote(a: dtype, b: dtype) -> dtype:
    """torch's promotion between two tensors: the higher category wins, then the wider type."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return a if a.itemsize >= b.itemsize else b


def result_type(*operands) -> dtype:
    """torch's type promotion over tensors and Python numbers.

    Operands fall in three classes: tensors with dimensions, zero-dimensional tensors, and
    Python numbers (bool, int: int64, float: float32). Each class is promoted within itself;
    a later class changes the result only if it is of a higher category (bool < integer <
    floating), so ``float16 tensor * float64 0-d tensor`` stays float16 while
    ``int64 tensor * 2.5`` becomes float32. Tensors are anything with ``dtype`` and ``ndim``.

    Examples
    --------
    >>> from lucid import _dtype
    >>> import lucid
    >>> _dtype.result_type(lucid.tensor([1, 2]), 2.5)
    lucid.float32
    >>> _dtype.result_type(lucid.ones(2, dtype=lucid.float16), lucid.tensor(2.0, dtype=lucid.float64))
    lucid.float16
    >>> _dtype.result_type(lucid.tensor([1, 2], dtype=lucid.int32), 7)
    lucid.int32
    """
    if len(operands) == 2:  # the common cases, without the general bookkeeping
        a, b = operands
        a_number, b_number = _is_number(a), _is_number(b)
        if not a_number and not b_number and a.dtype is b.dtype:
            return a.dtype
        if a_number != b_number:
            tensor, number = (b, a) if a_number else (a, b)
            return promote_scalar(tensor.dtype, number)
    classes: list = [None, None, None]  # dimensioned, zero-dimensional, Python numbers
    for value in operands:
        if isinstance(value, bool):
            rank, kind = 2, bool_
        elif isinstance(value, numbers.Integral):
            rank, kind = 2, default_int
        elif isinstance(value, numbers.Number):
            rank, kind = 2, default_float
        else:
            rank, kind = (0 if value.ndim else 1), value.dtype
        classes[rank] = kind if classes[rank] is None else promote(classes[rank], kind)
    dims, zeros, scalars = classes
    result = _combine(dims, _combine(zeros, scalars))
    if result is None:
        raise TypeError("result_type() needs at least one operand")
    return result


def _is_number(value) -> bool:
    return type(value) in (float, int, bool) or (
        not isinstance(getattr(value, "dtype", None), dtype) and isinstance(value, numbers.Number)
    )


def _combine(higher, lower):
    """torch's ``combine_categories``: ``lower`` counts only if its category is higher."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote(higher, lower)
    return higher


def promote_scalar(a: dtype, value) -> dtype:
    """torch's promotion of a tensor with a Python scalar: only a higher category changes the type."""
    if isinstance(value, bool):
        category = 0
    elif isinstance(value, int):
        category = 1
    else:
        category = 2
    if category <= a.category:
        return a
    return default_float if category == 2 else default_int


# bits of the significand stored and largest exponent of each floating dtype (IEEE 754)
_FLOAT_FORMATS = {"float16": (10, 15, 3), "float32": (23, 127, 6), "float64": (52, 1023, 15)}


class finfo:
    """Machine limits of a floating-point dtype, as ``torch.finfo``.

    Parameters
    ----------
    type : lucid.dtype, optional
        A floating dtype; by default ``float32``, lucid's default.

    Attributes
    ----------
    bits : int
        The width of the type.
    eps : float
        The difference between 1 and the next representable number.
    max, min : float
        The largest and the most negative finite numbers.
    tiny : float
        The smallest positive normal number (``smallest_normal``).
    resolution : float
        ``10 ** -precision``, the decimal resolution.
    dtype : str
        The dtype's name.

    Examples
    --------
    >>> import lucid
    >>> lucid.finfo(lucid.float32).eps
    1.1920928955078125e-07
    >>> lucid.finfo(lucid.float16).max, lucid.finfo(lucid.float16).tiny
    (65504.0, 6.103515625e-05)
    """

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - torch's name
        type = default_float if type is None else type
        if not isinstance(type, dtype) or not type.is_floating_point:
            raise TypeError(f"finfo needs a floating dtype such as lucid.float32, got {type!r}")
        mantissa, max_exponent, precision = _FLOAT_FORMATS[type.name]
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = 2.0**-mantissa
        self.max = (2.0 - self.eps) * 2.0**max_exponent
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** (1 - max_exponent)
        self.resolution = 10.0**-precision

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, eps={self.eps}, "
                f"smallest_normal={self.tiny}, tiny={self.tiny}, dtype={self.dtype})")
