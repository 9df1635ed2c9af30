"""Lucid's dtypes: names and categories only; the backends map them to arrays."""

from __future__ import annotations


class dtype:
    """A tensor element type (``lucid.float32`` and friends).

    Examples
    --------
    >>> import lucid
    >>> lucid.float32, lucid.float32.is_floating_point, lucid.int64.itemsize
    (lucid.float32, True, 8)
    """

    __slots__ = ("name", "itemsize", "category")

    def __init__(self, name: str, itemsize: int, category: int):
        self.name = name
        self.itemsize = itemsize
        self.category = category  # 0 bool < 1 integer < 2 floating, as in torch's promotion

    @property
    def is_floating_point(self) -> bool:
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
